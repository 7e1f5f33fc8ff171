'use strict';
// amqpspec driver for rhea (npm "rhea", Node.js), AMQP 1.0; contract: docs/drivers.md.
//
// Written as rhea's examples are: a container, container.connect({...}), open_sender /
// open_receiver on the connection, 'sendable', 'message', 'accepted' (and the other outcomes)
// events. reconnect is turned off (rhea reconnects by default; the contract forbids retrying).
// The receiver accepts explicitly (autoaccept off) so that ack=false can leave a delivery
// unsettled; credit=N sets rhea's credit_window (its default: 100, refreshed as messages arrive).

const path = require('path');
const d = require(path.join(__dirname, '..', '_lib', 'driverlib.js'));
const rhea = require('rhea');

let closing = false; // the client started the close: a close from the peer is then expected
let endingSession = false; // likewise for the session of the connect workload
let fail; // rejects every wait when the connection or a link fails
const failure = new Promise((_, reject) => { fail = reject; });
failure.catch(() => {}); // consumed by the races below

function peerError(err, what) {
  const error = new Error(`${what}: ${(err && (err.description || err.condition)) || 'no error given'}`);
  error.name = (err && err.condition) || 'AmqpError';
  return error;
}

// Wait for `event` on `emitter` (or a predicate to hold), the connection's failure, or the deadline.
function until(emitter, event, opts, what) {
  const happened = new Promise((resolve) => emitter.once(event, resolve));
  return d.within(Promise.race([happened, failure]), opts, what);
}

function watch(container, opts) {
  container.on('connection_close', (ctx) => {
    if (closing) return;
    const err = ctx.connection.error || {};
    d.emit('closed', { by: 'server', scope: 'connection', condition: String(err.condition || ''),
      text: String(err.description || '') });
    fail(peerError(err, 'the peer closed the connection'));
  });
  container.on('disconnected', (ctx) => {
    if (closing) return;
    const why = ctx.error ? ctx.error.message || String(ctx.error) : 'the connection was lost';
    const err = new Error(why);
    err.name = (ctx.error && ctx.error.code) || 'Disconnected';
    fail(err);
  });
  for (const event of ['sender_close', 'receiver_close', 'session_close']) {
    container.on(event, (ctx) => {
      if (closing || (endingSession && event === 'session_close')) return;
      const endpoint = ctx.sender || ctx.receiver || ctx.session;
      const err = (endpoint && endpoint.error) || {};
      d.emit('closed', { by: 'server', scope: event.split('_')[0], condition: String(err.condition || ''),
        text: String(err.description || '') });
      fail(peerError(err, `the peer closed the ${event.split('_')[0]}`));
    });
  }
  // rhea re-emits unhandled errors as 'error' on the container: without a listener, a crash
  container.on('error', (err) => fail(err instanceof Error ? err : new Error(String(err))));
  for (const event of ['connection_error', 'session_error', 'sender_error', 'receiver_error', 'protocol_error']) {
    container.on(event, () => {}); // the matching *_close above reports it
  }
}

function connectOptions(opts) {
  const url = new URL(opts.url);
  if (url.protocol !== 'amqp:' && url.protocol !== 'amqps:') d.usageError('the URL must be amqp:// or amqps://');
  const options = {
    host: url.hostname,
    port: Number(url.port) || (url.protocol === 'amqps:' ? 5671 : 5672),
    reconnect: false,
  };
  if (url.protocol === 'amqps:') options.transport = 'tls';
  if (url.username) options.username = decodeURIComponent(url.username);
  if (url.password) options.password = decodeURIComponent(url.password);
  if (opts.heartbeat !== null) options.idle_time_out = opts.heartbeat * 1000;
  return options;
}

async function open(opts) {
  const container = rhea.create_container({ id: 'amqpspec-rhea' });
  watch(container, opts);
  const conn = container.connect(connectOptions(opts));
  await until(conn, 'connection_open', opts, 'opening the connection');
  d.emit('connected');
  d.step(`running ${opts.workload}`);
  return conn;
}

async function close(conn, opts) {
  d.step('closing');
  closing = true;
  const closed = new Promise((resolve) => conn.once('connection_close', resolve));
  conn.close();
  await d.within(closed, opts, 'waiting for the peer\'s close');
  d.emit('closed', { by: 'client' });
}

function textOf(body) {
  // a data section arrives as {typecode, content: Buffer}; an amqp-value as the value itself
  if (body && typeof body === 'object' && !Buffer.isBuffer(body) && Buffer.isBuffer(body.content)) {
    return d.textOf(body.content);
  }
  if (body && typeof body === 'object' && !Buffer.isBuffer(body)) return JSON.stringify(body);
  return d.textOf(body);
}

function delivered(n, ctx) {
  // 1.0 has no redelivered flag: the header's delivery-count counts earlier failed attempts
  const redelivered = (ctx.message.delivery_count || 0) > 0;
  d.emit('delivered', { n, body: textOf(ctx.message.body), redelivered });
}

// messages in the order they arrive, for a wait that wants "the next one"
function inbox(receiver, opts) {
  const queue = [];
  const waiters = [];
  receiver.on('message', (ctx) => {
    const waiter = waiters.shift();
    if (waiter) waiter(ctx);
    else queue.push(ctx);
  });
  return (what) => {
    if (queue.length) return Promise.resolve(queue.shift());
    return d.within(Promise.race([new Promise((resolve) => waiters.push(resolve)), failure]), opts, what);
  };
}

const workloads = {
  async connect(opts) {
    const conn = await open(opts);
    const session = conn.create_session();
    session.begin();
    await until(session, 'session_open', opts, 'waiting for begin');
    endingSession = true; // our end: the peer's end answers it
    session.close();
    await until(session, 'session_close', opts, 'waiting for end');
    await close(conn, opts);
  },

  async send(opts) {
    const conn = await open(opts);
    const sender = conn.open_sender({ target: { address: opts.address }, autosettle: true });
    await until(sender, 'sender_open', opts, 'attaching the sender');
    const outcomes = new Map();
    let settled = 0;
    let allSettled;
    const everything = new Promise((resolve) => { allSettled = resolve; });
    const record = (accepted) => (ctx) => {
      const n = outcomes.get(ctx.delivery.id);
      if (n === undefined) return;
      outcomes.delete(ctx.delivery.id);
      d.emit('confirmed', { n, ack: accepted });
      settled += 1;
      if (settled >= opts.count) allSettled();
    };
    sender.on('accepted', record(true));
    for (const outcome of ['rejected', 'released', 'modified']) sender.on(outcome, record(false));
    for (let n = 1; n <= opts.count; n += 1) {
      if (!sender.sendable()) await until(sender, 'sendable', opts, `waiting for credit for message ${n}`);
      const delivery = sender.send({ body: opts.body, durable: opts.persistent });
      outcomes.set(delivery.id, n);
      d.emit('published', { n });
    }
    if (opts.count > 0) {
      d.step('waiting for the outcomes', opts.timeout + 1);
      await d.within(Promise.race([everything, failure]), opts, 'waiting for the outcomes');
    }
    await close(conn, opts);
  },

  async receive(opts) {
    const conn = await open(opts);
    const options = { source: { address: opts.address }, autoaccept: false };
    if (opts.credit !== null) options.credit_window = opts.credit;
    const receiver = conn.open_receiver(options);
    const next = inbox(receiver, opts);
    await until(receiver, 'receiver_open', opts, 'attaching the receiver');
    for (let n = 1; n <= opts.count; n += 1) {
      d.step(`waiting for delivery ${n}`, opts.timeout + 1);
      const ctx = await next(`waiting for delivery ${n}`);
      delivered(n, ctx);
      if (opts.ack) ctx.delivery.accept();
    }
    await close(conn, opts);
  },

  async rpc(opts) {
    const conn = await open(opts);
    const receiver = conn.open_receiver({ source: { dynamic: true } });
    const next = inbox(receiver, opts);
    await until(receiver, 'receiver_open', opts, 'attaching the dynamic receiver');
    const replyTo = receiver.source && receiver.source.address;
    if (!replyTo) throw new Error('the peer attached the dynamic receiver without an address');
    const sender = conn.open_sender({ target: { address: opts.address } });
    if (!sender.sendable()) await until(sender, 'sendable', opts, 'waiting for credit for the request');
    sender.send({ body: opts.body, reply_to: replyTo, correlation_id: 'amqpspec-1' });
    d.emit('published', { n: 1 });
    d.step('waiting for the reply', opts.timeout + 1);
    delivered(1, await next('waiting for the reply'));
    await close(conn, opts);
  },

  async idle(opts) {
    const conn = await open(opts);
    d.rest();
    await Promise.race([d.sleep(opts.timeout), failure]); // rhea keeps the idle-timeout meanwhile
    await close(conn, opts);
  },
};

const opts = d.parseArgs(process.argv.slice(2), d.WORKLOADS_10);
d.run(opts, workloads);
