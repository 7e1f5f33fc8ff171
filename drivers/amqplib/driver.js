'use strict';
// amqpspec driver for amqplib (npm "amqplib", Node.js), AMQP 0-9-1; contract: docs/drivers.md.
//
// Written as amqplib's promise API is documented: amqp.connect(url), createChannel /
// createConfirmChannel, assertQueue, publish, get, consume, ack, 'error' listeners on the
// connection and channels (without them an error event would crash the process, and every
// amqplib user attaches them). amqplib has no transactions: the tx workload is unsupported.

const path = require('path');
const d = require(path.join(__dirname, '..', '_lib', 'driverlib.js'));
const amqp = require('amqplib');

let serverClosed = false;

// amqplib reports a server's channel.close / connection.close as an 'error' with the code
function watch(emitter, scope) {
  emitter.on('error', (err) => {
    if (!serverClosed && err && typeof err.code === 'number') {
      serverClosed = true;
      d.emit('closed', { by: 'server', scope, code: err.code, text: replyText(err.message) });
    }
  });
}

// "Channel closed by server: 404 (NOT-FOUND) with message \"NOT_FOUND - ...\"" -> the reply-text
function replyText(message) {
  const m = /with message "([\s\S]*)"$/.exec(String(message));
  return m ? m[1] : String(message);
}

function withHeartbeat(opts) {
  if (opts.heartbeat === null) return opts.url;
  const url = new URL(opts.url); // amqplib reads the heartbeat from the URL's query
  url.searchParams.set('heartbeat', String(Math.floor(opts.heartbeat)));
  return url.toString();
}

async function open(opts, confirm = false) {
  const conn = await amqp.connect(withHeartbeat(opts), { timeout: opts.timeout * 1000 });
  watch(conn, 'connection');
  d.emit('connected');
  d.step(`running ${opts.workload}`);
  const ch = confirm ? await conn.createConfirmChannel() : await conn.createChannel();
  watch(ch, 'channel');
  return { conn, ch };
}

async function declare(opts, ch) {
  if (opts.declare) await ch.assertQueue(opts.queue, { durable: false, exclusive: false, autoDelete: false });
}

async function close({ conn, ch }) {
  d.step('closing');
  await ch.close();
  await conn.close();
  d.emit('closed', { by: 'client' });
}

function delivered(n, msg) {
  d.emit('delivered', { n, body: d.textOf(msg.content), redelivered: Boolean(msg.fields.redelivered) });
}

const workloads = {
  async connect(opts) {
    await close(await open(opts));
  },

  async publish(opts) {
    const link = await open(opts);
    await declare(opts, link.ch);
    for (let n = 1; n <= opts.count; n += 1) {
      d.step(`publishing message ${n}`);
      link.ch.publish(opts.exchange, opts.routingKey, Buffer.from(opts.body), { persistent: opts.persistent });
      d.emit('published', { n });
    }
    await close(link);
  },

  async confirm(opts) {
    const link = await open(opts, true);
    await declare(opts, link.ch);
    for (let n = 1; n <= opts.count; n += 1) {
      d.step(`waiting for the confirm of message ${n}`);
      const ack = await d.within(new Promise((resolve) => {
        link.ch.publish(opts.exchange, opts.routingKey, Buffer.from(opts.body),
          { persistent: opts.persistent }, (err) => resolve(!err));
        d.emit('published', { n });
      }), opts, `waiting for the confirm of message ${n}`);
      d.emit('confirmed', { n, ack });
    }
    await close(link);
  },

  async consume(opts) {
    const link = await open(opts);
    await declare(opts, link.ch);
    if (opts.prefetch) await link.ch.prefetch(opts.prefetch);
    let n = 0;
    let enough;
    const all = new Promise((resolve) => { enough = resolve; });
    const { consumerTag } = await link.ch.consume(opts.queue, (msg) => {
      if (msg === null) return; // the server cancelled the consumer: the wait below times out
      if (n >= opts.count) return; // beyond the count: left unacked, requeued at close
      n += 1;
      delivered(n, msg);
      if (opts.ack) link.ch.ack(msg);
      if (n >= opts.count) enough();
    }, { noAck: !opts.ack });
    if (opts.count > 0) {
      d.step(`waiting for ${opts.count} deliveries`, opts.timeout + 1);
      await d.within(all, opts, `waiting for delivery ${n + 1}`);
    }
    d.step('cancelling the consumer');
    await link.ch.cancel(consumerTag);
    await close(link);
  },

  async get(opts) {
    const link = await open(opts);
    await declare(opts, link.ch);
    let n = 0;
    for (let i = 1; i <= opts.count; i += 1) {
      d.step(`waiting for the answer to basic.get ${i}`);
      const msg = await link.ch.get(opts.queue, { noAck: !opts.ack });
      if (msg === false) {
        d.emit('empty');
      } else {
        n += 1;
        delivered(n, msg);
        if (opts.ack) link.ch.ack(msg);
      }
    }
    await close(link);
  },

  async rpc(opts) {
    const link = await open(opts);
    const { queue: replyTo } = await link.ch.assertQueue('', { exclusive: true });
    let answer;
    const reply = new Promise((resolve) => { answer = resolve; });
    await link.ch.consume(replyTo, (msg) => { if (msg !== null) answer(msg); }, { noAck: true });
    link.ch.publish(opts.exchange, opts.routingKey, Buffer.from(opts.body),
      { replyTo, correlationId: 'amqpspec-1', persistent: opts.persistent });
    d.emit('published', { n: 1 });
    d.step('waiting for the reply', opts.timeout + 1);
    delivered(1, await d.within(reply, opts, 'waiting for the reply'));
    await close(link);
  },

  async idle(opts) {
    const link = await open(opts);
    d.rest();
    await d.sleep(opts.timeout); // amqplib sends and checks heartbeats by itself meanwhile
    await close(link);
  },
};

const opts = d.parseArgs(process.argv.slice(2), d.WORKLOADS_091);
d.run(opts, workloads);
