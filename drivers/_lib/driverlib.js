'use strict';
// What every Node.js driver shares: the command line, the JSON-lines events, the deadlines.
//
// The same contract as driverlib.py (docs/drivers.md), kept in one place so that each
// driver.js holds only the library calls its users would write. Standard library only:
// a driver must run with nothing installed but its own library.
//
// Why the password is scrubbed here: libraries put the URL into error messages, and the
// contract says a driver never prints it.

const EXIT_DONE = 0;
const EXIT_ERROR = 1;
const EXIT_USAGE = 2;
const EXIT_UNSUPPORTED = 3;
const EXIT_CRASH = 70;

const DEFAULTS = {
  queue: 'amqpspec-q',
  exchange: '',
  routing_key: null, // = queue
  address: null, // 1.0: = queue
  count: '1',
  body: 'hello',
  ack: 'true',
  prefetch: '0',
  persistent: 'false',
  timeout: '5',
  heartbeat: null, // library default
  credit: null, // 1.0: library default
  declare: 'false', // 0-9-1: declare `queue` first (publish/consume/get/tx/confirm)
};

const WORKLOADS_091 = ['connect', 'publish', 'consume', 'get', 'rpc', 'tx', 'confirm', 'idle'];
const WORKLOADS_10 = ['connect', 'send', 'receive', 'rpc', 'idle'];

const secrets = [];

function scrub(text) {
  let out = String(text);
  for (const secret of secrets) {
    if (secret) out = out.split(secret).join('***');
  }
  return out;
}

function usageError(message) {
  process.stderr.write(`driver: error: ${scrub(message)}\n`);
  process.exit(EXIT_USAGE);
}

function rememberUrlSecret(url) {
  secrets.push(url); // the whole URL first: it contains the password
  try {
    const password = new URL(url).password;
    if (password) {
      secrets.push(password);
      const decoded = decodeURIComponent(password);
      if (decoded !== password) secrets.push(decoded);
    }
  } catch (e) {
    // not a URL: nothing more to hide; the library will report the bad URL
  }
}

function bool(name, text) {
  const low = text.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(low)) return true;
  if (['0', 'false', 'no', 'off'].includes(low)) return false;
  return usageError(`${name}=${JSON.stringify(text)} is not a boolean (true/false)`);
}

function number(name, text, whole) {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || (whole && !Number.isInteger(value))) {
    return usageError(`${name}=${JSON.stringify(text)} must be a finite ${whole ? 'whole ' : ''}number >= 0`);
  }
  return value;
}

function parseArgs(argv, workloads) {
  if (argv.length < 2) {
    usageError(`usage: driver URL WORKLOAD [key=value ...]; workloads: ${workloads.join(', ')}`);
  }
  const [url, workload, ...rest] = argv;
  rememberUrlSecret(url);
  const raw = { ...DEFAULTS };
  const extra = {};
  for (const item of rest) {
    const at = item.indexOf('=');
    if (at <= 0) usageError(`option ${JSON.stringify(item)} is not key=value`);
    const key = item.slice(0, at);
    const value = item.slice(at + 1);
    if (Object.prototype.hasOwnProperty.call(DEFAULTS, key)) raw[key] = value;
    else extra[key] = value; // unknown options are kept: a driver may use its own
  }
  const queue = raw.queue;
  return {
    url,
    workload,
    queue,
    exchange: raw.exchange,
    routingKey: raw.routing_key === null ? queue : raw.routing_key,
    address: raw.address === null ? queue : raw.address,
    count: number('count', raw.count, true),
    body: raw.body,
    ack: bool('ack', raw.ack),
    prefetch: number('prefetch', raw.prefetch, true),
    persistent: bool('persistent', raw.persistent),
    timeout: number('timeout', raw.timeout, false),
    heartbeat: raw.heartbeat === null || raw.heartbeat === '' ? null : number('heartbeat', raw.heartbeat, false),
    credit: raw.credit === null || raw.credit === '' ? null : number('credit', raw.credit, true),
    declare: bool('declare', raw.declare),
    extra,
  };
}

// One event line, "event" first (JSON keeps insertion order); stdout to a pipe or file is
// synchronous in Node on Linux, so a line is out before any process.exit below.
function emit(event, fields = {}) {
  if (ending) return; // after done or error nothing more: the contract's last line stays last
  const record = { event };
  for (const [key, value] of Object.entries(fields)) {
    record[key] = typeof value === 'string' ? scrub(value) : value;
  }
  process.stdout.write(`${JSON.stringify(record)}\n`);
}

function textOf(body) {
  if (body === null || body === undefined) return '';
  if (Buffer.isBuffer(body) || body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  return typeof body === 'string' ? body : String(body);
}

function errorEvent(err) {
  const type = (err && (err.name || (err.constructor && err.constructor.name))) || 'Error';
  const message = (err && err.message) || String(err);
  emit('error', { type, message });
}

// End with `code` once what the library already wrote has left: process.exit() at once would
// drop socket writes still queued in Node (a channel.close-ok the library sent just before it
// reported the error), and the peer would see a bare FIN the library never chose. The grace is
// short and unref'd: a library that keeps its socket open cannot keep the driver alive.
let ending = false;
function finish(code) {
  if (ending) return;
  ending = true;
  rest();
  process.exitCode = code;
  setTimeout(() => process.exit(code), 250).unref();
}

function fail(err) {
  if (ending) return;
  errorEvent(err);
  finish(EXIT_ERROR);
}

function done() {
  if (ending) return;
  emit('done');
  finish(EXIT_DONE);
}

// The driver's own deadline for each wait (the contract's `timeout` option): a library that
// waits forever on a silent peer still ends in an error event, never a hung process.
let timer = null;
let stepSeconds = 5;

function step(what, seconds) {
  if (ending) return;
  rest();
  const limit = seconds === undefined ? stepSeconds : seconds;
  timer = setTimeout(() => {
    emit('error', { type: 'Timeout', message: `no answer within ${limit} s while ${what}` });
    process.exit(EXIT_ERROR);
  }, limit * 1000);
}

function rest() {
  if (timer !== null) clearTimeout(timer);
  timer = null;
}

// Wait for a promise, or fail with a Timeout error after opts.timeout seconds.
function within(promise, opts, what) {
  let handle;
  const expiry = new Promise((_, reject) => {
    handle = setTimeout(() => {
      const err = new Error(`no answer within ${opts.timeout} s while ${what}`);
      err.name = 'TimeoutError';
      reject(err);
    }, opts.timeout * 1000);
  });
  return Promise.race([promise, expiry]).finally(() => clearTimeout(handle));
}

function sleep(seconds) {
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}

// Run one workload under the contract: done -> 0, a caught library error -> 1, unknown -> 3.
function run(opts, workloads, onError) {
  const workload = workloads[opts.workload];
  if (!workload) {
    emit('unsupported', { workload: opts.workload });
    process.exit(EXIT_UNSUPPORTED);
  }
  stepSeconds = opts.timeout;
  step('opening the connection');
  // An exception nobody caught (thrown from a library callback) is a crash under the contract,
  // not an error event: say so on stderr, password scrubbed, and exit with 70 (EX_SOFTWARE).
  process.on('uncaughtException', (err) => {
    process.stderr.write(`driver: crash: ${scrub((err && err.stack) || String(err))}\n`);
    process.exit(EXIT_CRASH);
  });
  Promise.resolve()
    .then(() => workload(opts))
    .then(done, (err) => {
      if (onError) onError(err);
      fail(err);
    });
}

module.exports = {
  EXIT_DONE, EXIT_ERROR, EXIT_USAGE, EXIT_UNSUPPORTED, WORKLOADS_091, WORKLOADS_10,
  parseArgs, usageError, emit, scrub, textOf, errorEvent, fail, done, step, rest, within, sleep, run,
};
