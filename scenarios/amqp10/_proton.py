"""python-qpid-proton plumbing for the AMQP 1.0 scenarios: clients from the target, steps with deadlines.

A scenario drives the broker the way applications do, through a real AMQP 1.0 client
(python-qpid-proton's blocking API), and checks each step against the spec sentence (or the
documented extension behaviour) it relies on. proton hides the wire, so every client step and
what came back is written to the case transcript as one event: the report still shows the flow.

Why not plain ``BlockingSender``/``BlockingReceiver``: they raise on the first unexpected frame,
auto-grant credit and hide refusals that come as a session ``end`` (a blocking attach then waits
for its whole timeout). The links here carry their own handler: credit is granted only when a
scenario says so, every delivery is kept with its delivery (settled or not), and a refusal --
detach, end or close, with its error condition -- ends the wait at once and is reported as such.

Never hanging: every wait runs with a timeout taken from the case's remaining time, and under a
watchdog that shuts the socket down if proton itself does not come back in time. The clients are
registered with the case (``ctx.adopt``) and offer ``close`` and ``abort``, so the runner's hard
deadline reaches them too; ``abort`` only shuts the socket down (safe from another thread), the
proton objects are released in the case's own thread.

Failures are sorted as the suite's verdicts require: a broker refusal where the cited text says
the step must work is a failed check (:meth:`Scenario.require`); anything the spec does not decide
(a refused set-up step, no answer in time, a lost connection) raises :class:`ScenarioError`,
reported as ``error`` with the step named.

Addresses: AMQP 1.0 leaves their meaning to the broker. :class:`Addressing` holds the conventions
the scenarios use (queue-like nodes, pub-sub nodes, the three oslo.messaging RPC prefixes), with
built-in values for brokers whose conventions are documented (RabbitMQ's AMQP 1.0 plugin) and the
oslo.messaging defaults otherwise; each can be overridden with an environment variable
(``AMQPSPEC_AMQP10_<NAME>_PREFIX``), as the oslo proposal intends ("either the broker ... be
configured to match what the driver is using, or ... the driver ... configured to take account of
built-in ... conventions for a given broker").
"""
from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, TypeVar

try:
    import proton
    from proton import (Condition, Data, Delivery, Endpoint, Link, Message, ProtonException,
                        SSLDomain, Terminus, Timeout, symbol)
    from proton.handlers import MessagingHandler
    from proton.reactor import LinkOption
    from proton.utils import BlockingConnection, ConnectionClosed, LinkDetached
except ImportError:  # python-qpid-proton is optional (extra "test"): without it the scenarios skip
    proton = None  # type: ignore[assignment]
    MessagingHandler = object  # type: ignore[assignment,misc]
    LinkOption = object  # type: ignore[assignment,misc]

from amqpspec.case import Context

from .._base import (Checks, Refusal, ScenarioError, StepTimeout, StopScenario, describe_exception,  # noqa: F401
                     refused, run_body)

T = TypeVar("T")

WAIT = 3.0          # seconds for something a correct broker does at once (an attach, a delivery)
QUIET = 0.4         # window in which nothing (more) may arrive
CONNECT_S = 5.0
SLICE = 0.02        # one turn of a client's event loop while several are pumped together


class BrokerRefused(Refusal):
    """The broker detached the link, ended the session or closed the connection in answer to a step."""

    def __init__(self, what: str, kind: str, condition: str | None, description: str | None) -> None:
        self.what, self.kind, self.condition, self.description = what, kind, condition, description
        super().__init__(f"{what}: the broker answered {self.observed}")

    @property
    def observed(self) -> str:
        cond = self.condition or "no error"
        return f"{self.kind} ({cond}{': ' + self.description if self.description else ''})"




# ---------------------------------------------------------------------- messages
OUTCOMES = {35: "received", 36: "accepted", 37: "rejected", 38: "released", 39: "modified"}


def _plain(value: Any) -> Any:
    """proton values as plain Python (memoryview bodies as bytes, symbols as str)."""
    if isinstance(value, memoryview):
        return bytes(value)
    if proton is not None and isinstance(value, symbol):
        return str(value)
    return value


def terminus_list(data: Any) -> list[str]:
    """The symbols of a terminus field kept as proton ``Data`` (capabilities, outcomes)."""
    if data is None:
        return []
    items: list[str] = []
    try:
        data.rewind()
        while data.next():
            obj = data.get_object()
            elements = getattr(obj, "elements", None)
            items.extend(str(e) for e in (elements if elements is not None else [obj]))
    except (ProtonException, TypeError, AttributeError):
        pass
    return items


DIST_MODES = {0: None, 1: "copy", 2: "move"}
SETTLE_MODES = {0: "unsettled", 1: "settled", 2: "mixed"}
EXPIRY = {0: "link-detach", 1: "session-end", 2: "connection-close", 3: "never"}


def describe_terminus(t: Any) -> str:
    if t is None or t.type == Terminus.UNSPECIFIED:
        return "null"
    parts = [f"address={t.address!r}"]
    if t.dynamic:
        parts.append("dynamic")
    mode = DIST_MODES.get(t.distribution_mode)
    if mode:
        parts.append(f"distribution-mode={mode}")
    caps = terminus_list(t.capabilities)
    if caps:
        parts.append(f"capabilities={caps}")
    return "(" + ", ".join(parts) + ")"


def message(body: Any = None, **fields: Any) -> "Message":
    """A proton Message; ``ttl`` in seconds, ``to`` for the to field, binary bodies as one data section."""
    to = fields.pop("to", None)
    m = Message(body=body, **fields)
    if to is not None:
        m.address = to
    if isinstance(body, (bytes, bytearray)):
        m.inferred = True  # a data section, not an amqp-value holding binary
    return m


def message_summary(m: "Message") -> str:
    parts = [f"body={_short(_plain(m.body))}"]
    for name, label in (("id", "message-id"), ("correlation_id", "correlation-id"), ("reply_to", "reply-to"),
                        ("address", "to"), ("subject", "subject"), ("content_type", "content-type")):
        v = getattr(m, name, None)
        if v not in (None, "", b"") and str(v) != "None":  # proton gives symbol('None') for no content-type
            parts.append(f"{label}={_plain(v)!r}")
    if m.ttl:
        parts.append(f"ttl={int(round(m.ttl * 1000))}ms")
    if m.delivery_count:
        parts.append(f"delivery-count={m.delivery_count}")
    if m.properties:
        parts.append(f"application-properties={dict(m.properties)!r}")
    return ", ".join(parts)


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "...'"


@dataclass
class Received:
    """One delivery as a scenario receiver got it."""

    client: str
    link: str
    message: "Message"
    delivery: "Delivery" = field(repr=False)
    settled: bool            # settled by the broker when it arrived (pre-settled)
    at: float

    @property
    def body(self) -> Any:
        return _plain(self.message.body)

    def summary(self) -> str:
        return f"transfer({message_summary(self.message)}{', settled' if self.settled else ''})"


def shown(items: Iterable[Any], limit: int = 24) -> str:
    items = list(items)
    text = ", ".join(x.decode(errors="replace") if isinstance(x, bytes) else str(x) for x in items[:limit])
    return f"[{text}{', ...' if len(items) > limit else ''}]"


# ---------------------------------------------------------------------- links
class _Options(LinkOption):  # type: ignore[misc,valid-type]
    """Terminus fields and settle modes of an attach, set before proton opens the link."""

    def __init__(self, *, mode: str | None = None, snd_settle: str | None = None, capabilities: Iterable[str] = (),
                 expiry: str | None = None, durable: int | None = None, target_address: str | None = None) -> None:
        self.mode, self.snd_settle, self.capabilities = mode, snd_settle, list(capabilities)
        self.expiry, self.durable, self.target_address = expiry, durable, target_address

    def apply(self, link: "Link") -> None:
        if self.snd_settle is not None:
            link.snd_settle_mode = {"unsettled": Link.SND_UNSETTLED, "settled": Link.SND_SETTLED,
                                    "mixed": Link.SND_MIXED}[self.snd_settle]
        if link.is_receiver:
            terminus = link.source
            if self.mode is not None:
                modes = {"copy": Terminus.DIST_MODE_COPY, "move": Terminus.DIST_MODE_MOVE}
                terminus.distribution_mode = modes[self.mode]
            if self.capabilities:
                terminus.capabilities.put_array(False, Data.SYMBOL)
                terminus.capabilities.enter()
                for c in self.capabilities:
                    terminus.capabilities.put_symbol(symbol(c))
                terminus.capabilities.exit()
            if self.expiry is not None:
                terminus.expiry_policy = {v: k for k, v in EXPIRY.items()}[self.expiry]
            if self.durable is not None:
                terminus.durability = self.durable


class _Events(MessagingHandler):  # type: ignore[misc,valid-type]
    """The handler of one link: keeps deliveries and the broker's detach, never raises."""

    def __init__(self, owner: "LinkBase") -> None:
        super().__init__(prefetch=0, auto_accept=False, auto_settle=False, peer_close_is_error=False)
        self.owner = owner

    def on_message(self, event: Any) -> None:
        self.owner._arrived(event.message, event.delivery)

    def on_link_remote_close(self, event: Any) -> None:
        self.owner._detached(event.link.remote_condition)
        if event.link.state & Endpoint.LOCAL_ACTIVE:
            event.link.close()


class LinkBase:
    def __init__(self, client: "Client", link: "Link", label: str) -> None:
        self.client, self.link, self.label = client, link, label
        self.detach: "Condition | None" = None
        self.detached = False

    def _arrived(self, msg: "Message", dlv: "Delivery") -> None:  # pragma: no cover - receivers only
        pass

    def _detached(self, condition: "Condition | None") -> None:
        self.detached, self.detach = True, condition
        self.client.event(f"<- detach {self.label}" + (f" error={condition.name} {condition.description or ''}"
                                                       if condition else ""))

    @property
    def attached(self) -> bool:
        return not (self.link.state & Endpoint.REMOTE_UNINIT)

    def refusal(self, what: str) -> BrokerRefused | None:
        """How the broker refused or ended this link, if it did."""
        conn, session = self.link.connection, self.link.session
        if conn.state & Endpoint.REMOTE_CLOSED or self.client.closed_by_broker:
            cond = conn.remote_condition
            return BrokerRefused(what, "close", cond.name if cond else None, cond.description if cond else None)
        if session.state & Endpoint.REMOTE_CLOSED:
            cond = session.remote_condition
            return BrokerRefused(what, "end", cond.name if cond else None, cond.description if cond else None)
        if self.detached or self.link.state & Endpoint.REMOTE_CLOSED:
            cond = self.detach or self.link.remote_condition
            return BrokerRefused(what, "detach", cond.name if cond else None, cond.description if cond else None)
        return None

    def _ended(self) -> bool:
        return (bool(self.link.state & Endpoint.REMOTE_CLOSED) or self.detached
                or bool(self.link.session.state & Endpoint.REMOTE_CLOSED)
                or bool(self.link.connection.state & Endpoint.REMOTE_CLOSED))


class Receiver(LinkBase):
    """A receiving link; credit only as the scenario grants it."""

    def __init__(self, client: "Client", link: "Link", label: str) -> None:
        super().__init__(client, link, label)
        self.inbox: list[Received] = []

    def _arrived(self, msg: "Message", dlv: "Delivery") -> None:
        r = Received(self.client.label, self.label, msg, dlv, bool(dlv.settled), time.monotonic())
        self.inbox.append(r)
        self.client.event(f"<- {r.summary()} on {self.label}")

    @property
    def address(self) -> str | None:
        return self.link.remote_source.address

    @property
    def mode(self) -> str | None:
        return DIST_MODES.get(self.link.remote_source.distribution_mode)

    @property
    def snd_settle_mode(self) -> str:
        return SETTLE_MODES.get(self.link.remote_snd_settle_mode, str(self.link.remote_snd_settle_mode))

    def flow(self, credit: int) -> None:
        """Adds ``credit`` (proton's pn_link_flow adds to the link-credit it has granted)."""
        self.link.flow(credit)
        self.client.event(f"-> flow {self.label} link-credit +{credit} (now {self.link.credit})")
        self.client.pump_once()

    def _dispose(self, r: Received, state: int, what: str, *, failed: bool | None = None,
                 here: bool | None = None) -> None:
        dlv = r.delivery
        if failed is not None:
            dlv.local.failed = failed
        if here is not None:
            dlv.local.undeliverable = here
        dlv.update(state)
        dlv.settle()
        self.client.event(f"-> disposition {what} (settled) for {_short(r.body)} on {self.label}")
        self.client.pump_once()

    def accept(self, r: Received) -> None:
        self._dispose(r, Delivery.ACCEPTED, "accepted")

    def release(self, r: Received) -> None:
        self._dispose(r, Delivery.RELEASED, "released")

    def modify(self, r: Received, *, failed: bool = True, here: bool = False) -> None:
        self._dispose(r, Delivery.MODIFIED, f"modified(delivery-failed={str(failed).lower()}, "
                                            f"undeliverable-here={str(here).lower()})", failed=failed, here=here)

    def settle(self, r: Received) -> None:
        """Settles locally a delivery the broker sent settled (nothing is reported back)."""
        r.delivery.settle()

    def bodies(self) -> list[Any]:
        return [r.body for r in self.inbox]


class Sender(LinkBase):
    @property
    def presettled(self) -> bool:
        return self.link.snd_settle_mode == Link.SND_SETTLED

    @property
    def address(self) -> str | None:
        return self.link.remote_target.address

    def send(self, msg: "Message", *, timeout: float = WAIT) -> str:
        """Sends one message; returns the broker's outcome ("accepted", ...) or "settled" for a
        pre-settled delivery once it has left (credit permitting). Raises when the link ends."""
        what = f"transfer on {self.label}"
        dlv = self.link.send(msg)
        settled = ", settled" if self.presettled else ""
        self.client.event(f"-> transfer({message_summary(msg)}{settled}) on {self.label}")
        if self.presettled:
            ok = self.client.wait(what, lambda: self.link.queued == 0 or self._ended(), timeout)
            refusal = self.refusal(what)
            if refusal:
                raise refusal
            if not ok:
                raise StepTimeout(f"[{self.client.label}] {what}: no link-credit to send within {timeout:.1f}s")
            return "settled"
        ok = self.client.wait(what, lambda: bool(dlv.remote_state) or dlv.settled or self._ended(), timeout)
        state = OUTCOMES.get(dlv.remote_state, "settled" if dlv.settled else "none")
        if dlv.remote_state or dlv.settled:
            dlv.settle()
            settled = " (settled)" if dlv.settled else ""
            self.client.event(f"<- disposition {state}{settled} for the transfer on {self.label}")
            return state
        refusal = self.refusal(what)
        if refusal:
            raise refusal
        raise StepTimeout(f"[{self.client.label}] {what}: no outcome within {timeout:.1f}s")


# ---------------------------------------------------------------------- connections
class Client:
    """One proton BlockingConnection of a scenario (one session), named ``label`` in the transcript."""

    def __init__(self, sc: "Scenario", label: str) -> None:
        self.sc = sc
        self.label = label
        self.conn_no = sc.ctx.transcript.new_connection()
        self.bc: "BlockingConnection | None" = None
        self.aborted = False
        self.closed = False
        self.closed_by_broker: str | None = None
        self._sock: socket.socket | None = None
        self._fired = False
        self._lock = threading.Lock()
        target = sc.ctx.target
        t = max(0.5, min(CONNECT_S, sc.ctx.remaining() - 0.5))
        scheme = "amqps" if target.tls else "amqp"
        host = f"[{target.host}]" if ":" in target.host else target.host
        kwargs: dict[str, Any] = {"container_id": f"amqpspec-{label}-{uuid.uuid4().hex[:8]}"}
        if target.credentials_given:
            kwargs.update(user=target.username, password=target.password.reveal(), allowed_mechs="PLAIN",
                          allow_insecure_mechs=True)
        else:
            kwargs.update(allowed_mechs="ANONYMOUS")
        if target.vhost not in ("", "/"):
            kwargs["virtual_host"] = f"vhost:{target.vhost}"  # RabbitMQ's convention for the open hostname
        ssl_domain = None
        if target.tls:
            ssl_domain = SSLDomain(SSLDomain.MODE_CLIENT)
            if target.cafile:
                ssl_domain.set_trusted_ca_db(target.cafile)
            ssl_domain.set_peer_authentication(
                SSLDomain.ANONYMOUS_PEER if target.insecure else SSLDomain.VERIFY_PEER_NAME)
        self.event(f"connect to {target.host}:{target.port}{' (TLS)' if target.tls else ''}, SASL "
                   f"{kwargs['allowed_mechs']}")
        try:
            self.bc = BlockingConnection(f"{scheme}://{host}:{target.port}", timeout=t, ssl_domain=ssl_domain, **kwargs)
        except (ProtonException, OSError) as exc:
            self.event(f"connection failed: {describe_exception(exc)}")
            raise ScenarioError(f"{label}: proton could not open a connection: {describe_exception(exc)}") from None
        try:
            self._sock = self.bc.conn.transport._selectable._delegate  # type: ignore[union-attr]
        except AttributeError:
            self._sock = None
        remote = self.bc.conn
        self.event(f"connection open (SASL/open done by proton; broker container-id {remote.remote_container!r})")

    # ------------------------------------------------------------------ transcript
    def event(self, text: str) -> None:
        self.sc.ctx.transcript.event(f"[{self.label}] {text}", self.conn_no)

    @property
    def is_open(self) -> bool:
        return self.bc is not None and not self.aborted and not self.closed and self.closed_by_broker is None

    # ------------------------------------------------------------------ guarded waiting
    def _kill_socket(self) -> None:
        sock = self._sock
        if sock is None:
            return
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def wait(self, what: str, cond: Callable[[], bool], timeout: float = WAIT) -> bool:
        """Runs this client's event loop until ``cond()`` or ``timeout``: True when cond held. A
        connection closed by the broker raises :class:`BrokerRefused`; a lost one ScenarioError."""
        if not self.is_open:
            return cond()
        budget = max(0.0, min(timeout, self.sc.ctx.remaining() - 0.3))

        def fire() -> None:
            with self._lock:
                self._fired = True
            self.aborted = True
            self._kill_socket()

        timer = threading.Timer(budget + 1.0, fire)
        timer.daemon = True
        timer.start()
        bc = self.bc
        try:
            bc.wait(cond, timeout=budget)  # type: ignore[union-attr]
            return True
        except Timeout:
            return cond()
        except ConnectionClosed as exc:
            cond_ = exc.connection.remote_condition
            self.closed_by_broker = f"{cond_.name if cond_ else 'no error'}"
            self.event(f"{what} -> close{' error=' + cond_.name + ' ' + (cond_.description or '') if cond_ else ''}")
            raise BrokerRefused(f"[{self.label}] {what}", "close", cond_.name if cond_ else None,
                                cond_.description if cond_ else None) from None
        except LinkDetached as exc:  # a link without our handler (should not happen)
            raise BrokerRefused(f"[{self.label}] {what}", "detach", exc.condition, str(exc)) from None
        except (ProtonException, OSError) as exc:
            with self._lock:
                fired = self._fired
            self.aborted = True
            if fired:
                self.event(f"{what} -> no answer within {budget:.1f}s; connection shut down")
                raise StepTimeout(f"[{self.label}] {what}: no answer within {budget:.1f}s") from None
            self.event(f"{what} -> {describe_exception(exc)}")
            raise ScenarioError(f"[{self.label}] {what}: {describe_exception(exc)}") from None
        finally:
            timer.cancel()

    def idle(self, seconds: float) -> None:
        """Keeps this connection's event loop running for ``seconds`` (what was sent leaves, what
        comes is processed) -- the way to let time pass in a scenario."""
        if self.is_open:
            self.wait(f"idle {seconds:g}s", lambda: False, seconds)
        else:
            time.sleep(max(0.0, min(seconds, self.sc.ctx.remaining() - 0.3)))

    def pump_once(self, slice_: float = 0.0) -> None:
        """One turn of the event loop (writes what proton has queued, reads what has come)."""
        if self.is_open:
            try:
                self.wait("process data", lambda: False, slice_)
            except BrokerRefused as exc:
                self.sc.ctx.note(f"while waiting: {exc}")

    # ------------------------------------------------------------------ links
    def _name(self, kind: str) -> str:
        return f"{kind}-{self.label}-{uuid.uuid4().hex[:8]}"

    def _attached(self, lnk: LinkBase, what: str, timeout: float) -> None:
        self.wait(what, lambda: lnk.attached or lnk._ended(), timeout)
        if lnk.attached and not lnk._ended():
            terminus = lnk.link.remote_source if lnk.link.is_receiver else lnk.link.remote_target
            if terminus.type == Terminus.UNSPECIFIED:  # a refusal: attach without terminus, then detach
                self.wait(what, lnk._ended, timeout)
        refusal = lnk.refusal(what)
        if refusal is not None:
            if refusal.kind != "detach":
                self.event(f"<- {refusal.kind}" + (f" error={refusal.condition} {refusal.description or ''}"
                                                  if refusal.condition else ""))
            raise refusal
        if not lnk.attached:
            self.event(f"{what} -> no attach within {timeout:.1f}s")
            raise StepTimeout(f"[{self.label}] {what}: no attach within {timeout:.1f}s")

    def receiver(self, address: str | None, *, dynamic: bool = False, mode: str | None = None,
                 snd_settle: str | None = None, capabilities: Iterable[str] = (), expiry: str | None = None,
                 durable: int | None = None, credit: int = 0, timeout: float = WAIT) -> Receiver:
        """Attaches a receiving link from ``address`` (or a dynamic node) and grants ``credit``."""
        name = self._name("rcv")
        opts = _Options(mode=mode, snd_settle=snd_settle, capabilities=capabilities, expiry=expiry, durable=durable)
        lnk = Receiver(self, None, name)  # type: ignore[arg-type]
        handler = _Events(lnk)
        extra = [x for x in (f"distribution-mode={mode}" if mode else "", "dynamic" if dynamic else "",
                             f"snd-settle-mode={snd_settle}" if snd_settle else "",
                             f"capabilities={list(capabilities)}" if capabilities else "",
                             f"expiry-policy={expiry}" if expiry else "") if x]
        what = f"attach receiver {name} source=({address!r}{', ' + ', '.join(extra) if extra else ''})"
        self.event(f"-> {what}")
        lnk.link = self.bc.container.create_receiver(self.bc.conn, address, name=name, dynamic=dynamic,  # type: ignore
                                                     handler=handler, options=opts)
        self._attached(lnk, what, timeout)
        self.event(f"<- attach {name} source={describe_terminus(lnk.link.remote_source)} "
                   f"snd-settle-mode={lnk.snd_settle_mode}")
        if credit:
            lnk.flow(credit)
        return lnk

    def sender(self, address: str | None, *, presettled: bool = False, timeout: float = WAIT) -> Sender:
        """Attaches a sending link to ``address`` (None: the anonymous terminus)."""
        name = self._name("snd")
        opts = _Options(snd_settle="settled" if presettled else None)
        holder = Sender(self, None, name)  # type: ignore[arg-type]
        handler = _Events(holder)
        what = f"attach sender {name} target=({address!r}{', snd-settle-mode=settled' if presettled else ''})"
        self.event(f"-> {what}")
        holder.link = self.bc.container.create_sender(self.bc.conn, address, name=name, handler=handler,  # type: ignore
                                                      options=opts)
        self._attached(holder, what, timeout)
        self.event(f"<- attach {name} target={describe_terminus(holder.link.remote_target)}")
        return holder

    # ------------------------------------------------------------------ ending
    def close(self, timeout: float = 1.0) -> None:
        """Orderly close; never raises (also called by the runner after the case)."""
        if self.bc is None or self.closed or self.aborted:
            return
        self.closed = True
        try:
            self.bc.timeout = max(0.1, timeout)
            self.bc.close()
            self.event("connection closed (close/close)")
        except Exception:  # noqa: BLE001 - closing must never fail a case
            self.aborted = True
            self._kill_socket()
            self.event("connection close not answered in time; socket shut down")

    def abort(self) -> None:
        """Ends the connection without close: shuts the socket down. Safe from another thread; the
        proton objects are released by :meth:`release` in the case's thread."""
        if self.bc is None:
            return
        was_open = not self.aborted and not self.closed
        self.aborted = True
        self._kill_socket()
        if was_open:
            self.event("socket closed without close")

    def release(self) -> None:
        """Frees proton's side of an aborted connection (in the case's thread)."""
        bc, self.bc = self.bc, None
        if bc is None or self.closed:
            return
        self.closed = True
        try:
            bc.timeout = 0.2
            bc.close()
        except Exception:  # noqa: BLE001
            pass


class Scenario(Checks):
    """The clients of one scenario case; closes them all at the end, whatever happened."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.clients: list[Client] = []
        self._addressing: Addressing | None = None
        self._registered: set[str] = set()

    def __enter__(self) -> "Scenario":
        return self

    def __exit__(self, *exc: Any) -> None:
        for c in self.clients:
            if not c.aborted:
                c.close()
            if c.aborted:
                c.release()

    def client(self, label: str) -> Client:
        c = Client(self, label)
        self.clients.append(c)
        self.ctx.adopt(c)
        return c

    def step(self, text: str) -> None:
        self.ctx.transcript.event(f"== {text}")

    def token(self) -> str:
        return f"{self.ctx.rng.randrange(1 << 32):08x}"

    @property
    def addressing(self) -> "Addressing":
        if self._addressing is None:
            self._addressing = Addressing.for_target(self.ctx)
        return self._addressing

    def node(self, kind: str, what: str = "q", *, name: str | None = None) -> str:
        """The address of a kind of node (see :class:`Addressing`) for ``name`` (default: a name
        unique to this case); queues the broker creates are registered for deletion on brokers that
        also speak 0-9-1 (the runner cleans up with it)."""
        name = name or self.ctx.name(f"{what}{uuid.uuid4().hex[:6]}")
        address = self.addressing.address(kind, name)
        queue = self.addressing.queue_name(kind, address)
        if queue and queue not in self._registered and speaks_amqp091(self.ctx):
            self._registered.add(queue)
            self.ctx.will_delete("queue", queue)
        return address

    # ------------------------------------------------------------------ waiting
    def pump(self, until: Callable[[], bool], timeout: float = WAIT) -> bool:
        """Lets every open client process incoming data until ``until()`` or ``timeout``."""
        stop = time.monotonic() + max(0.0, min(timeout, self.ctx.remaining() - 0.3))
        while True:
            if until():
                return True
            open_clients = [c for c in self.clients if c.is_open]
            if not open_clients or time.monotonic() >= stop:
                return until()
            for c in open_clients:
                try:
                    c.wait("waiting", until, min(SLICE, max(0.0, stop - time.monotonic())))
                except ScenarioError as exc:  # this client is gone (closed by the broker or lost): what it missed
                    self.ctx.note(f"while waiting: {exc}")  # shows in the checks that follow

    def quiet(self, window: float = QUIET) -> None:
        """Processes what arrives within ``window``: for checks that nothing (more) comes."""
        self.pump(lambda: False, window)





def run(ctx: Context, body: Callable[[Scenario], None]) -> None:
    """Runs a scenario body with its clients closed at the end; a failed check that stops the
    scenario ends it quietly (the runner reports the failed check)."""
    if proton is None:
        ctx.skip("python-qpid-proton is not installed: the AMQP 1.0 scenarios need it "
                 "(pip install 'amqpspec[test]')")
    run_body(ctx, Scenario(ctx), body)




# ---------------------------------------------------------------------- addressing conventions
@dataclass(frozen=True)
class Addressing:
    """Address prefixes per kind of node. Kinds: ``queue`` (messages shared by the receivers of
    the node), ``topic`` (a pub-sub node), and the oslo.messaging RPC patterns ``server``
    (exclusive), ``group`` (unicast) and ``broadcast``."""

    source: str                  # where the values come from, for the notes
    queue: str
    topic: str
    server: str
    group: str
    broadcast: str
    queue_kinds: tuple[str, ...]  # kinds whose address names a queue the broker creates (cleanup)

    ENV = "AMQPSPEC_AMQP10_{}_PREFIX"

    @classmethod
    def for_target(cls, ctx: Context) -> "Addressing":
        product = (ctx.target.broker.product or "").lower()
        if product == "rabbitmq":
            # the 3.x plugin's documented address forms, still accepted (as "v1") by 4.x
            base = cls("RabbitMQ AMQP 1.0 plugin addresses (/queue/Q, /topic/RK)", "/queue/", "/topic/",
                       "/queue/exclusive.", "/queue/unicast.", "/topic/broadcast.", ("queue", "server", "group"))
        else:
            # oslo.messaging's defaults ('exclusive', 'unicast', '/broadcast/'); plain names elsewhere
            base = cls("oslo.messaging default prefixes; plain node names", "", "", "exclusive.", "unicast.",
                       "/broadcast/", ())
        kinds = ("queue", "topic", "server", "group", "broadcast")
        overrides = {k: os.environ[cls.ENV.format(k.upper())] for k in kinds if cls.ENV.format(k.upper()) in os.environ}
        if overrides:
            values = {k: getattr(base, k) for k in kinds}
            values.update(overrides)
            return cls(base.source + f"; overridden by the environment: {sorted(overrides)}", **values,
                       queue_kinds=tuple(k for k in base.queue_kinds if k not in overrides))
        return base

    def address(self, kind: str, name: str) -> str:
        return getattr(self, kind) + name

    def queue_name(self, kind: str, address: str) -> str | None:
        if kind not in self.queue_kinds:
            return None
        return address.split("/")[-1]


# ---------------------------------------------------------------------- protocol detection
_AMQP091: dict[tuple[str, str, int], bool] = {}
_AMQP091_LOCK = threading.Lock()


def speaks_amqp091(ctx: Context, timeout: float = 2.0) -> bool:
    """Whether the target's port also speaks AMQP 0-9-1: sends the 0-9-1 protocol header and looks
    for a method frame (connection.start) in answer. Cached per target."""
    target = ctx.target
    key = (target.scheme, target.host, target.port)
    with _AMQP091_LOCK:
        if key in _AMQP091:
            return _AMQP091[key]
    answer = b""
    try:
        sock = target.open_socket(min(timeout, max(0.2, ctx.remaining() - 0.5)))
    except OSError:
        return False
    try:
        sock.settimeout(timeout)
        sock.sendall(b"AMQP\x00\x00\x09\x01")
        deadline = time.monotonic() + timeout
        while len(answer) < 7 and time.monotonic() < deadline:
            chunk = sock.recv(64)
            if not chunk:
                break
            answer += chunk
    except OSError:
        pass
    finally:
        try:
            sock.close()
        except OSError:
            pass
    result = len(answer) >= 7 and answer[0] == 1 and answer[1:3] == b"\x00\x00"
    with _AMQP091_LOCK:
        _AMQP091[key] = result
    return result
