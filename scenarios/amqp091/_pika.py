"""pika plumbing shared by the scenarios: connections built from the target, steps with deadlines.

A scenario drives the broker the way applications do, through a real client library, and
checks each step against the spec sentence (or documented extension behaviour) it relies on.
pika hides the wire, so each client action and what came back is written to the case
transcript as an event: the report still shows the flow, step by step.

Why not plain ``pika.BlockingConnection`` calls: a synchronous pika call waits for its reply
without any time limit, and a broker that never answers (garagemq ignores some methods) would
hang the case until the runner's hard deadline. Every call here runs under a watchdog that
shuts the socket down when the step's time is up, so the step fails with a clear reason. The
clients are also registered with the case like raw peers (they offer ``close`` and ``abort``),
so the runner's deadline and end-of-case cleanup reach them too.

Failures are sorted as the suite's verdicts require: a broker refusal where the cited text says
the step must work is a failed check (:meth:`Scenario.require`); anything else the spec does not
decide (a refused set-up step, no answer in time, a lost connection) raises
:class:`ScenarioError`, which the runner reports as ``error`` with the step named.
"""
from __future__ import annotations

import select
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, TypeVar

try:
    import pika
    import pika.exceptions as px
    from pika.adapters.blocking_connection import BlockingChannel, BlockingConnection
except ImportError:  # pika is an optional dependency (extra "test"): without it the scenarios skip
    pika = None  # type: ignore[assignment]

from amqpspec.case import Context

from .._base import (Checks, Refusal, ScenarioError, StepTimeout, StopScenario, describe_exception,  # noqa: F401
                     refused, run_body)

T = TypeVar("T")

WAIT = 3.0          # seconds for something a correct broker does at once (a reply, a delivery)
QUIET = 0.3         # window in which nothing more may arrive (used only where no fence proves it)
CONNECT_S = 5.0


class BrokerRefused(Refusal):
    """The broker closed the channel or the connection in answer to a step."""

    def __init__(self, what: str, kind: str, code: int, text: str) -> None:
        self.what, self.kind, self.code, self.text = what, kind, code, text
        super().__init__(f"{what}: the broker answered {kind} {code} {text}")

    @property
    def observed(self) -> str:
        return f"{self.kind} {self.code} {self.text}"




@dataclass
class Delivery:
    """A message as a pika consumer received it."""

    client: str
    consumer_tag: str
    delivery_tag: int
    redelivered: bool
    exchange: str
    routing_key: str
    properties: pika.BasicProperties
    body: bytes
    channel: BlockingChannel | None = field(default=None, repr=False)

    def summary(self) -> str:
        extra = []
        p = self.properties
        for name in ("correlation_id", "reply_to", "message_id", "headers"):
            value = getattr(p, name, None)
            if value:
                extra.append(f"{name.replace('_', '-')}={value!r}")
        flags = " redelivered" if self.redelivered else ""
        return (f"basic.deliver(tag={self.delivery_tag}{flags}, rk={self.routing_key!r}, "
                f"body={self.body[:40]!r}{', ' + ', '.join(extra) if extra else ''})")


def shown(items: Iterable[Any], limit: int = 24) -> str:
    items = list(items)
    text = ", ".join(x.decode(errors="replace") if isinstance(x, bytes) else str(x) for x in items[:limit])
    return f"[{text}{', ...' if len(items) > limit else ''}]"


def bodies(deliveries: Iterable[Delivery]) -> list[bytes]:
    return [d.body for d in deliveries]


class Client:
    """One pika BlockingConnection of a scenario, named (``label``) in the transcript."""

    def __init__(self, sc: "Scenario", label: str) -> None:
        self.sc = sc
        self.label = label
        self.conn_no = sc.ctx.transcript.new_connection()
        self.inbox: list[Delivery] = []
        self.returned: list[tuple[Any, Any, bytes]] = []
        self.conn: BlockingConnection | None = None
        self.aborted = False
        self.tag = ""            # the consumer tag a scenario wants to remember for this client
        self._timer_fired = False
        self._lock = threading.Lock()
        target = sc.ctx.target
        t = max(0.5, min(CONNECT_S, sc.ctx.remaining() - 0.5))
        ssl_options = pika.SSLOptions(target.ssl_context(), server_hostname=target.host) if target.tls else None
        params = pika.ConnectionParameters(
            host=target.host, port=target.port, virtual_host=target.vhost,
            credentials=pika.PlainCredentials(target.username, target.password.reveal(), erase_on_connect=True),
            heartbeat=0, connection_attempts=1, retry_delay=0.0, socket_timeout=t, stack_timeout=t,
            blocked_connection_timeout=t, ssl_options=ssl_options,
            client_properties={"product": "amqpspec scenario", "information": f"pika {pika.__version__}",
                               "connection_name": f"{sc.ctx.spec.id} {label}"})
        self.event(f"connect to {target.host}:{target.port} vhost {target.vhost!r}{' (TLS)' if target.tls else ''}")
        try:
            self.conn = BlockingConnection(params)
        except (px.AMQPError, OSError) as exc:
            self.event(f"connection failed: {describe_exception(exc)}")
            raise ScenarioError(f"{label}: pika could not open a connection: {describe_exception(exc)}") from None
        self.event("connection open (start/tune/open done by pika)")

    # ------------------------------------------------------------------ transcript
    def event(self, text: str) -> None:
        self.sc.ctx.transcript.event(f"[{self.label}] {text}", self.conn_no)

    # ------------------------------------------------------------------ guarded calls
    def _sock(self) -> socket.socket | None:
        try:
            return self.conn._impl._transport._sock  # type: ignore[union-attr]
        except AttributeError:
            return None

    def _kill_socket(self) -> None:
        sock = self._sock()
        if sock is None:
            return
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do(self, what: str, fn: Callable[..., T], *args: Any, timeout: float | None = WAIT, **kwargs: Any) -> T:
        """Runs one pika call as a step: bounded in time (unless ``timeout`` is None, for calls that
        do not wait), pika errors turned into ours."""
        budget = max(0.05, min(timeout if timeout is not None else 0, self.sc.ctx.remaining() - 0.3))

        def fire() -> None:
            with self._lock:
                self._timer_fired = True
            self.aborted = True  # the connection is gone: nothing more is sent on it
            self._kill_socket()

        timer = threading.Timer(budget, fire) if timeout is not None else None
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            return fn(*args, **kwargs)
        except px.ChannelClosedByBroker as exc:
            self.event(f"{what} -> channel.close {exc.reply_code} {exc.reply_text}")
            raise BrokerRefused(f"[{self.label}] {what}", "channel.close", exc.reply_code, str(exc.reply_text)) from None
        except px.ConnectionClosedByBroker as exc:
            self.event(f"{what} -> connection.close {exc.reply_code} {exc.reply_text}")
            raise BrokerRefused(f"[{self.label}] {what}", "connection.close", exc.reply_code,
                                str(exc.reply_text)) from None
        except (px.AMQPError, OSError) as exc:
            with self._lock:
                fired = self._timer_fired
            if fired:
                self.event(f"{what} -> no answer within {budget:.1f}s; connection shut down")
                raise StepTimeout(f"[{self.label}] {what}: no answer within {budget:.1f}s") from None
            self.event(f"{what} -> {describe_exception(exc)}")
            raise ScenarioError(f"[{self.label}] {what}: {describe_exception(exc)}") from None
        finally:
            if timer is not None:
                timer.cancel()

    # ------------------------------------------------------------------ AMQP steps
    def channel(self) -> BlockingChannel:
        ch = self.do("channel.open", self.conn.channel)  # type: ignore[union-attr]
        ch.add_on_return_callback(self._on_return)
        self.event(f"channel {ch.channel_number} open")
        return ch

    def declare_queue(self, ch: BlockingChannel, name: str = "", *, register: bool = True, **flags: Any) -> Any:
        """queue.declare; returns the declare-ok method (queue, message_count, consumer_count)."""
        shown_flags = ", ".join(k for k, v in flags.items() if v is True)
        what = f"queue.declare(queue={name!r}{', ' + shown_flags if shown_flags else ''})"
        ok = self.do(what, ch.queue_declare, name, **flags).method
        if register and not flags.get("passive"):
            self.sc.ctx.will_delete("queue", ok.queue)
        self.event(f"{what} -> declare-ok queue={ok.queue!r} messages={ok.message_count} consumers={ok.consumer_count}")
        return ok

    def declare_exchange(self, ch: BlockingChannel, name: str, type: str, **flags: Any) -> None:
        what = f"exchange.declare(exchange={name!r}, type={type!r}{', passive' if flags.get('passive') else ''})"
        self.do(what, ch.exchange_declare, name, exchange_type=type, **flags)
        if not flags.get("passive"):
            self.sc.ctx.will_delete("exchange", name)
        self.event(f"{what} -> declare-ok")

    def bind(self, ch: BlockingChannel, queue: str, exchange: str, routing_key: str = "",
             arguments: dict[str, Any] | None = None) -> None:
        what = f"queue.bind(queue={queue!r}, exchange={exchange!r}, routing-key={routing_key!r}" + \
               (f", arguments={arguments!r})" if arguments else ")")
        self.do(what, ch.queue_bind, queue, exchange, routing_key=routing_key, arguments=arguments)
        self.event(f"{what} -> bind-ok")

    def consume(self, ch: BlockingChannel, queue: str, *, auto_ack: bool = True, exclusive: bool = False,
                tag: str | None = None, on_message: Callable[[Delivery], None] | None = None) -> str:
        """basic.consume; deliveries go to ``inbox`` (and ``on_message``) while the scenario pumps."""

        def callback(chan: BlockingChannel, method: Any, properties: Any, body: bytes) -> None:
            d = Delivery(self.label, method.consumer_tag, method.delivery_tag, bool(method.redelivered),
                         method.exchange, method.routing_key, properties, body, chan)
            self.inbox.append(d)
            self.event(f"<- {d.summary()}")
            if on_message is not None:
                on_message(d)

        what = f"basic.consume(queue={queue!r}, no-ack={auto_ack}{', exclusive' if exclusive else ''})"
        ctag = self.do(what, ch.basic_consume, queue, callback, auto_ack=auto_ack, exclusive=exclusive,
                       consumer_tag=tag)
        self.event(f"{what} -> consume-ok consumer-tag={ctag!r}")
        return ctag

    def cancel(self, ch: BlockingChannel, tag: str) -> None:
        # pika hands back, for a no-ack consumer, the deliveries that came before cancel-ok
        pending = self.do(f"basic.cancel({tag!r})", ch.basic_cancel, tag)
        for method, properties, body in pending or []:
            self.inbox.append(Delivery(self.label, tag, method.delivery_tag, bool(method.redelivered),
                                       method.exchange, method.routing_key, properties, body, ch))
        self.event(f"basic.cancel({tag!r}) -> cancel-ok" + (f" ({len(pending)} deliveries before it)" if pending else ""))

    def publish(self, ch: BlockingChannel, exchange: str, routing_key: str, body: bytes, *,
                properties: pika.BasicProperties | None = None, mandatory: bool = False) -> None:
        props = properties or pika.BasicProperties()
        self.do(f"basic.publish(exchange={exchange!r}, rk={routing_key!r})", ch.basic_publish, exchange,
                routing_key, body, properties=props, mandatory=mandatory)
        extra = [f"{n.replace('_', '-')}={getattr(props, n)!r}" for n in
                 ("correlation_id", "reply_to", "message_id", "headers") if getattr(props, n, None)]
        self.event(f"-> basic.publish(exchange={exchange!r}, rk={routing_key!r}{', mandatory' if mandatory else ''}, "
                   f"body={body[:40]!r}{', ' + ', '.join(extra) if extra else ''})")

    def qos(self, ch: BlockingChannel, prefetch_count: int) -> None:
        self.do(f"basic.qos(prefetch-count={prefetch_count})", ch.basic_qos, prefetch_count=prefetch_count)
        self.event(f"basic.qos(prefetch-count={prefetch_count}) -> qos-ok")

    def ack(self, d: Delivery) -> None:
        self.do(f"basic.ack({d.delivery_tag})", d.channel.basic_ack, d.delivery_tag,  # type: ignore[union-attr]
                timeout=None)  # asynchronous: nothing to wait for
        self.event(f"-> basic.ack(delivery-tag={d.delivery_tag}) for {d.body[:40]!r}")

    def fence(self, ch: BlockingChannel) -> None:
        """A synchronous no-op (passive declare of amq.direct, which every broker has, 3.1.3.1) on
        ``ch``: when it returns, the broker has processed everything sent before on that channel."""
        self.do("fence: exchange.declare(amq.direct, passive)", ch.exchange_declare, "amq.direct",
                exchange_type="direct", passive=True)

    def close_channel(self, ch: BlockingChannel) -> None:
        self.do(f"channel.close({ch.channel_number})", ch.close)
        self.event(f"channel {ch.channel_number} closed (close/close-ok)")

    def _on_return(self, ch: BlockingChannel, method: Any, properties: Any, body: bytes) -> None:
        self.returned.append((method, properties, body))
        self.event(f"<- basic.return({method.reply_code} {method.reply_text}, rk={method.routing_key!r}, body={body[:40]!r})")

    # ------------------------------------------------------------------ ending
    @property
    def is_open(self) -> bool:
        return self.conn is not None and not self.aborted and self.conn.is_open

    def close(self, timeout: float = 1.0) -> None:
        """Orderly connection.close; never raises (also called by the runner after the case)."""
        if not self.is_open or self.aborted:
            return
        try:
            self.do("connection.close", self.conn.close, timeout=timeout)  # type: ignore[union-attr]
            self.event("connection closed (close/close-ok)")
        except Exception:  # noqa: BLE001 - closing must never fail a case
            self.abort()

    def abort(self) -> None:
        """Ends the connection without connection.close (spec 4.5 case 3): shuts the socket down,
        which the broker sees as the connection dropping. Safe from another thread (the runner's
        deadline): the descriptor itself is released by :meth:`release`, in the case's thread, so
        that pika never touches a descriptor number the system may have handed to another socket."""
        if self.conn is None:
            return
        was_open = not self.aborted and self.conn.is_open
        self.aborted = True
        self._kill_socket()
        if was_open:
            self.event("socket closed without connection.close")

    def release(self) -> None:
        """Closes the descriptor of an aborted connection (in the case's thread)."""
        sock = self._sock()
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    def drain(self) -> None:
        """Lets pika process what has arrived (deliveries, returns) without waiting."""
        if self.is_open:
            self.do("process data", self.conn.process_data_events, 0, timeout=None)  # type: ignore[union-attr]


class Scenario(Checks):
    """The clients of one scenario case; closes them all at the end, whatever happened."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.clients: list[Client] = []

    def __enter__(self) -> "Scenario":
        return self

    def __exit__(self, *exc: Any) -> None:
        for c in self.clients:
            if not c.aborted:
                c.close()       # falls back to abort() when the broker does not answer
            if c.aborted:
                c.release()

    def client(self, label: str) -> Client:
        c = Client(self, label)
        self.clients.append(c)
        self.ctx.adopt(c)
        return c

    def name(self, what: str = "q") -> str:
        return self.ctx.name(f"{what}{uuid.uuid4().hex[:6]}")

    def step(self, text: str) -> None:
        """A line in the transcript between the clients' own events: what the scenario does next."""
        self.ctx.transcript.event(f"== {text}")

    # ------------------------------------------------------------------ waiting
    def pump(self, until: Callable[[], bool], timeout: float = WAIT) -> bool:
        """Lets every open client process incoming data until ``until()`` or ``timeout``."""
        stop = time.monotonic() + max(0.0, min(timeout, self.ctx.remaining() - 0.3))
        while True:
            for c in self.clients:
                if c.is_open:
                    try:
                        c.drain()
                    except BrokerRefused as exc:  # the broker closed this connection: what it missed
                        self.ctx.note(f"while waiting: {exc}")  # shows in the checks that follow
            if until():
                return True
            left = stop - time.monotonic()
            if left <= 0:
                return False
            socks = [s for s in (c._sock() for c in self.clients if c.is_open) if s is not None]
            if not socks:
                return until()
            try:
                select.select(socks, [], [], min(left, 0.02))
            except (OSError, ValueError):
                time.sleep(min(left, 0.02))

    def quiet(self, window: float = QUIET) -> None:
        """Processes what arrives within ``window``: for checks that nothing (more) comes."""
        self.pump(lambda: False, window)





def props(**fields: Any) -> "pika.BasicProperties":
    """Message properties (reply_to, correlation_id, headers, ...) as pika names them."""
    return pika.BasicProperties(**fields)


def run(ctx: Context, body: Callable[[Scenario], None]) -> None:
    """Runs a scenario body with its clients closed at the end; a failed check that stops the
    scenario ends it quietly (the runner reports the failed check)."""
    if pika is None:
        ctx.skip("pika is not installed: the real-client scenarios need it (pip install 'amqpspec[test]')")
    run_body(ctx, Scenario(ctx), body)


