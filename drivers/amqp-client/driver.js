'use strict';
// amqpspec driver for @cloudamqp/amqp-client (npm, Node.js, TCP client), AMQP 0-9-1;
// contract: docs/drivers.md.
//
// Written as the library's README shows it: new AMQPClient(url), connect(), channel(),
// queueDeclare, basicPublish, basicGet, basicConsume with a callback, txSelect/txCommit,
// confirmSelect (after which basicPublish resolves on the broker's ack and rejects on a nack).

const path = require('path');
const d = require(path.join(__dirname, '..', '_lib', 'driverlib.js'));
const { AMQPClient } = require('@cloudamqp/amqp-client');

let serverClosed = false;

// The library reports a server's close as an AMQPError "connection closed: TEXT (CODE)" or
// "channel N closed: TEXT (CODE)"; the event carries the code and text apart.
function reportClose(err) {
  const m = /^(connection|channel \d+) closed: ([\s\S]*) \((\d+)\)$/.exec(String(err && err.message));
  if (m && !serverClosed) {
    serverClosed = true;
    const scope = m[1] === 'connection' ? 'connection' : 'channel';
    d.emit('closed', { by: 'server', scope, code: Number(m[3]), text: m[2] });
  }
}

function withHeartbeat(opts) {
  if (opts.heartbeat === null) return opts.url;
  const url = new URL(opts.url); // the client reads the heartbeat from the URL's query
  url.searchParams.set('heartbeat', String(Math.floor(opts.heartbeat)));
  return url.toString();
}

async function open(opts) {
  const client = new AMQPClient(withHeartbeat(opts));
  client.onerror = reportClose; // the default handler only logs
  const conn = await client.connect();
  d.emit('connected');
  d.step(`running ${opts.workload}`);
  const ch = await conn.channel();
  return { conn, ch };
}

async function declare(opts, ch) {
  if (opts.declare) await ch.queueDeclare(opts.queue, { durable: false, exclusive: false, autoDelete: false });
}

function properties(opts, extra = {}) {
  return opts.persistent ? { deliveryMode: 2, ...extra } : { ...extra };
}

async function close({ conn, ch }) {
  d.step('closing');
  await ch.close();
  await conn.close();
  d.emit('closed', { by: 'client' });
}

function delivered(n, msg) {
  d.emit('delivered', { n, body: d.textOf(msg.body), redelivered: Boolean(msg.redelivered) });
}

async function publishAll(opts, tx) {
  const link = await open(opts);
  await declare(opts, link.ch);
  if (tx) await link.ch.txSelect();
  for (let n = 1; n <= opts.count; n += 1) {
    d.step(`publishing message ${n}`);
    await link.ch.basicPublish(opts.exchange, opts.routingKey, opts.body, properties(opts));
    d.emit('published', { n });
  }
  if (tx) {
    d.step('waiting for tx.commit-ok');
    await link.ch.txCommit();
  }
  await close(link);
}

const workloads = {
  async connect(opts) {
    await close(await open(opts));
  },

  publish: (opts) => publishAll(opts, false),
  tx: (opts) => publishAll(opts, true),

  async confirm(opts) {
    const link = await open(opts);
    await declare(opts, link.ch);
    await link.ch.confirmSelect();
    for (let n = 1; n <= opts.count; n += 1) {
      d.step(`waiting for the confirm of message ${n}`);
      const confirmed = link.ch.basicPublish(opts.exchange, opts.routingKey, opts.body, properties(opts));
      d.emit('published', { n });
      let ack = true;
      try {
        await d.within(confirmed, opts, `waiting for the confirm of message ${n}`);
      } catch (err) {
        if (String(err && err.message) !== 'Message rejected') throw err; // a nack, not an error
        ack = false;
      }
      d.emit('confirmed', { n, ack });
    }
    await close(link);
  },

  async consume(opts) {
    const link = await open(opts);
    await declare(opts, link.ch);
    if (opts.prefetch) await link.ch.basicQos(opts.prefetch);
    let n = 0;
    let enough;
    const all = new Promise((resolve) => { enough = resolve; });
    const consumer = await link.ch.basicConsume(opts.queue, { noAck: !opts.ack }, async (msg) => {
      if (n >= opts.count) return; // beyond the count: left unacked, requeued at close
      n += 1;
      delivered(n, msg);
      if (opts.ack) await msg.ack();
      if (n >= opts.count) enough();
    });
    if (opts.count > 0) {
      d.step(`waiting for ${opts.count} deliveries`, opts.timeout + 1);
      await d.within(all, opts, `waiting for delivery ${n + 1}`);
    }
    d.step('cancelling the consumer');
    await consumer.cancel();
    await close(link);
  },

  async get(opts) {
    const link = await open(opts);
    await declare(opts, link.ch);
    let n = 0;
    for (let i = 1; i <= opts.count; i += 1) {
      d.step(`waiting for the answer to basic.get ${i}`);
      const msg = await link.ch.basicGet(opts.queue, { noAck: !opts.ack });
      if (msg === null) {
        d.emit('empty');
      } else {
        n += 1;
        delivered(n, msg);
        if (opts.ack) await msg.ack();
      }
    }
    await close(link);
  },

  async rpc(opts) {
    const link = await open(opts);
    const { name: replyTo } = await link.ch.queueDeclare('', { exclusive: true });
    let answer;
    const reply = new Promise((resolve) => { answer = resolve; });
    await link.ch.basicConsume(replyTo, { noAck: true }, (msg) => answer(msg));
    await link.ch.basicPublish(opts.exchange, opts.routingKey, opts.body,
      properties(opts, { replyTo, correlationId: 'amqpspec-1' }));
    d.emit('published', { n: 1 });
    d.step('waiting for the reply', opts.timeout + 1);
    delivered(1, await d.within(reply, opts, 'waiting for the reply'));
    await close(link);
  },

  async idle(opts) {
    const link = await open(opts);
    d.rest();
    await d.sleep(opts.timeout); // the client sends heartbeats by itself meanwhile
    await close(link);
  },
};

const opts = d.parseArgs(process.argv.slice(2), d.WORKLOADS_091);
d.run(opts, workloads, reportClose);
