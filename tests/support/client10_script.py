"""A scripted raw-socket AMQP 1.0 client, run as a driver, for the unit tests of the client10 cases.

Not a client library: it speaks just enough AMQP 1.0 (SASL PLAIN/ANONYMOUS, open, one session,
links, flow, transfers, dispositions, detach/end/close answered, idle time-out kept and watched)
to run the driver contract's 1.0 workloads correctly -- and, with ``bad=FAULT``, to break one
rule on purpose, so each client case is shown able to fail (tests/unit/test_client10_cases.py).

Usage (as a driver): ``client10_script.py URL WORKLOAD [bad=FAULT] [key=value ...]``; prints the
contract's JSON events. Faults are listed in ``FAULTS``.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import select
import socket
import ssl
import sys
import time
from typing import Any
from urllib.parse import unquote, urlsplit

from amqpspec.wire.amqp10 import (
    AMQPFrame, EmptyFrame, FrameReader, Message, ProtocolHeader, SASLFrame, Symbol, encode, frame, spec,
)
from amqpspec.wire.amqp10.frames import transfer_frames
from amqpspec.wire.errors import FrameError

FAULTS = (
    "no-header", "ignore-header-mismatch", "mechanism-external", "mechanism-anonymous", "no-amqp-header",
    "begin-before-open", "ignore-max-frame", "channel-5", "begin-remote-channel", "handle-5",
    "no-initial-delivery-count", "unsettled-null-key", "trust-terminus", "no-detach-reply", "no-end-reply",
    "no-close-reply", "no-close", "frames-after-close", "close-channel-1", "strict-empty", "no-heartbeat",
    "no-idle-detect", "lenient", "ignore-window", "ignore-credit", "ignore-drain", "delivery-count-zero",
    "no-settle", "same-tag", "no-tag", "keep-aborted", "ignore-echo", "dynamic-address", "content-encoding",
    "content-type", "sasl-hostname", "no-multi-frame", "empty-on-1", "big-open", "no-wait-close", "ignore-attach",
    # hostile: the server role must stay bounded and decide (tests/unit/test_server10_hostile.py)
    "garbage", "huge-frame", "flood-empty", "endless-delivery",
    "no-next-incoming-id", "session-flow-with-credit", "accept-any-idle", "disposition-role-sender",
    "answer-after-end", "unset-settled-true", "dc-none-as-current", "sender-flow-no-dc", "encoding-compress",
    "reuse-socket", "begin-answer-no-remote", "no-wrap", "sasl-header", "credit-face-value",
    "dnp-without-dynamic", "same-handle", "received-state", "keep-resumed", "drop-on-detach", "ignore-errant",
    "partner-handle", "pipelined-reattach", "bad-outcomes", "bad-node-properties", "last-frame-settled",
    "trust-filter", "answer-handle-in-use", "bare-link-error", "header-defaults", "credit-added", "drain-first",
    "answer-handle-high",
    "frame-size-lies", "unknown-performative", "close-only-on-0", "idle-at-announced", "ignore-unattached-transfer",
    "own-transfer-count", "proceed-after-auth-failure", "no-redirect", "bare-close", "sasl-as-server", "sasl-trailing",
    "redirect-keep-hostname", "no-verify", "no-sni", "no-scram", "strict-doff", "whole-reads", "reset-after-sasl",
    "ignore-protocol-id", "symmetric-channels", "plain-always", "strict-outcome",
    "array-only",
    # transactions (section 4, tests/unit/test_client10_tx_cases.py)
    "settled-declare", "no-rejected-outcome", "no-txn-state", "txn-first-frame-only", "global-id",
    "no-settle-after-discharge",
)
MIN_IDLE = 0.1   # seconds: a smaller idle-time-out from the server is refused (2.7.1/10)
HANDLE_MAX = 100
MAX_FRAME = 65536
MAX_MESSAGE = 65536   # announced on receiving links: larger messages are a link error (2.7.3)
CHANNEL_MAX = 100
OUTCOMES = ("accepted", "rejected", "released", "modified")
SENDER, RECEIVER = False, True


def emit(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


class Done(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


class Client:
    def __init__(self, url: str, opts: dict[str, str]) -> None:
        self.opts = opts
        self.bad = opts.get("bad", "")
        self.timeout = float(opts.get("timeout", "5"))
        parts = urlsplit(url)
        self.user = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else ""
        self.sock = socket.create_connection((parts.hostname, parts.port or 5672), timeout=self.timeout)
        if parts.scheme == "amqps":   # TLS from the first octet (5.2.1), the server's certificate checked (5.2)
            context = ssl.create_default_context()
            if self.bad in ("no-verify", "no-sni"):
                context.check_hostname = False
            if self.bad == "no-verify":
                context.verify_mode = ssl.CERT_NONE
            self.sock = context.wrap_socket(self.sock, server_hostname=None if self.bad == "no-sni" else parts.hostname)
        self.reader = FrameReader(1 << 24)
        self.remote_max_frame = 512
        self.remote_idle = 0.0         # seconds: send something at least this often
        heartbeat = opts.get("heartbeat")
        self.local_idle_ms = int(float(heartbeat) * 1000 / 2) if heartbeat else None
        self.last_sent = self.last_recv = time.monotonic()
        self.closed_sent = False
        self.channel = 5 if self.bad == "channel-5" else 0
        self.remote_begin: Any = None
        self.remote_window = 0          # remote-incoming-window
        self.next_outgoing_id = 0
        self.next_incoming_id = 0
        self.links: dict[int, dict[str, Any]] = {}        # our handle -> link state
        self.by_remote: dict[int, int] = {}                # their handle -> our handle
        self.next_delivery_id = 0
        self.deliveries: list[Any] = []                    # (handle, body, delivery-id, settled)
        self.partial: dict[int, tuple[Any, bytearray]] = {}
        self.settled_ids: set[int] = set()
        self.states: dict[int, Any] = {}                   # delivery-id -> the state the server told
        self.ended = False
        self.redelivered: dict[Any, bool] = {}            # delivery-id -> the header's delivery-count > 0
        self.hostname = "localhost"     # what open and sasl-init name (a redirect's hostname once followed)

    # -- wire --------------------------------------------------------------------------------
    def send(self, *items: Any) -> None:
        if self.closed_sent and self.bad != "frames-after-close":
            return
        for item in items:
            self.sock.sendall(encode(item))
        self.last_sent = time.monotonic()

    def read(self, timeout: float) -> Any:
        """The next frame or header; None on timeout; raises Done when the socket closes."""
        stop = time.monotonic() + timeout
        while True:
            try:
                item = self.reader.next()
            except FrameError as exc:
                self.fail_close("amqp:connection:framing-error", str(exc)[:100])
            if item is not None and self.bad == "strict-doff" and getattr(item, "extended", b""):
                self.sock.close()   # takes a frame with an extended header (DOFF above 2) for a broken one
                emit("error", type="FramingError", message="a frame with an extended header")
                raise Done(1)
            if item is not None:
                self.last_recv = time.monotonic()
                return item
            left = stop - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                return None
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                emit("closed", by="server")
                raise Done(1)
            if self.bad == "whole-reads" and len(data) < 8:   # takes each read for whole frames
                self.fail_close("amqp:connection:framing-error", f"a read of {len(data)} octets is no frame")
            self.reader.feed(data)

    def fail_close(self, condition: str, text: str) -> None:
        error = None if self.bad == "bare-close" else spec.Error(condition=Symbol(condition), description=text)
        self.send(AMQPFrame(0, spec.Close(error=error)))
        self.closed_sent = True
        self.drain_until_close(1.0)
        emit("error", type="ProtocolError", message=f"{condition}: {text}")
        raise Done(1)

    def drain_until_close(self, seconds: float) -> None:
        stop = time.monotonic() + seconds
        while time.monotonic() < stop:
            try:
                item = self.read(stop - time.monotonic())
            except Done:
                return
            if isinstance(item, AMQPFrame) and isinstance(item.performative, spec.Close):
                return
            if self.bad == "answer-while-discarding" and isinstance(item, AMQPFrame) and item.performative is not None:
                # answers what arrives after its own close, past the guard in send()
                self.sock.sendall(encode(AMQPFrame(item.channel, spec.Detach(handle=0, closed=True))))

    # -- opening -----------------------------------------------------------------------------
    def open(self) -> None:
        if self.bad == "no-header":
            time.sleep(self.timeout)
            raise Done(1)
        if self.bad == "garbage":
            self.sock.sendall(bytes(range(256)) * 64)
            time.sleep(self.timeout)
            raise Done(1)
        sasl = self.user is not None
        self.send(ProtocolHeader.sasl() if sasl else ProtocolHeader.amqp())
        got = self.read(self.timeout)
        if not isinstance(got, ProtocolHeader):
            raise Done(1)
        if got.protocol_id != (3 if sasl else 0) and self.bad != "ignore-protocol-id":
            self.sock.close()     # 2.2: the headers do not match (another protocol id) -- close our outgoing stream
            emit("error", type="VersionMismatch", message=got.summary())
            raise Done(1)
        if sasl:
            if self.bad == "sasl-as-server":   # announces mechanisms itself, as only the SASL server may (5.3.2)
                self.send(frame(spec.SaslMechanisms(sasl_server_mechanisms=[Symbol("PLAIN")])))
            mechs = self.read(self.timeout)
            offered = [str(m) for m in (mechs.body.sasl_server_mechanisms or [])] if isinstance(mechs, SASLFrame) else []
            if isinstance(mechs, SASLFrame) and isinstance(mechs.body.sasl_server_mechanisms, str) \
                    and self.bad != "array-only":   # a multiple field may hold one value, not in an array (1.4)
                offered = [str(mechs.body.sasl_server_mechanisms)]
            if self.bad == "mechanism-external":
                mech = "EXTERNAL"
            elif self.bad == "plain-always":   # holding a password, names PLAIN whatever was offered
                mech = "PLAIN"
            elif self.bad == "mechanism-anonymous" and "ANONYMOUS" in offered:
                mech = "ANONYMOUS"
            elif "SCRAM-SHA-1" in offered and self.bad != "no-scram":   # the stronger of the two it knows
                mech = "SCRAM-SHA-1"
            elif "PLAIN" in offered:
                mech = "PLAIN"
            elif "ANONYMOUS" in offered:
                mech = "ANONYMOUS"
            else:
                raise Done(1)   # nothing we can do: close the socket
            response = b"\0" + (self.user or "").encode() + b"\0" + self.password.encode() if mech == "PLAIN" else b""
            nonce = base64.b64encode(os.urandom(18)).decode()
            first_bare = f"n={self.user},r={nonce}"   # (a user name with ',' or '=' would need escaping: not here)
            if mech == "SCRAM-SHA-1":
                response = ("n,," + first_bare).encode()
            init = spec.SaslInit(mechanism=Symbol(mech), initial_response=response, hostname=self.hostname)
            if self.bad == "sasl-header":   # type-specific octets and an extended header where 5.3.1 asks for none
                self.send(SASLFrame(init, channel=1, extended=b"\x00" * 4))
            elif self.bad == "sasl-trailing":   # a null after the sasl-init: two values in one SASL frame body
                self.send(SASLFrame(init, trailing=b"\x40"))
            else:
                self.send(frame(init))
            if mech == "SCRAM-SHA-1" and not self.scram(first_bare, nonce):
                raise Done(1)
            outcome = self.read(self.timeout)
            if self.bad == "strict-outcome" and isinstance(outcome, SASLFrame) and outcome.body.additional_data:
                raise Done(1)   # additional data it did not ask for taken as a failed dialog
            if not isinstance(outcome, SASLFrame) or int(outcome.body.code) != 0:
                if self.bad == "proceed-after-auth-failure":   # goes on as if authenticated (5.1)
                    self.send(ProtocolHeader.amqp())
                    time.sleep(1.5)
                raise Done(1)
            if self.bad == "reset-after-sasl":   # a fresh reader for the AMQP layer: what was read ahead is lost
                self.reader = FrameReader(1 << 24)
            if self.bad != "no-amqp-header":
                self.send(ProtocolHeader.amqp())
                got = self.read(self.timeout)
        if not isinstance(got, ProtocolHeader) and self.bad != "no-amqp-header":
            raise Done(1)
        if isinstance(got, ProtocolHeader) and got.version != (1, 0, 0) and self.bad != "ignore-header-mismatch":
            self.sock.close()     # 2.2: the headers do not match -- close our outgoing stream
            emit("error", type="VersionMismatch", message=got.summary())
            raise Done(1)
        if self.bad == "begin-before-open":
            self.send(AMQPFrame(0, spec.Begin(next_outgoing_id=0, incoming_window=100, outgoing_window=100)))
        hostname = "elsewhere.example" if self.bad == "sasl-hostname" else self.hostname
        props = {"pad": "x" * 1000} if self.bad == "big-open" else None
        self.send(AMQPFrame(0, spec.Open(container_id="client10-script", hostname=hostname, max_frame_size=MAX_FRAME,
                                         channel_max=CHANNEL_MAX, idle_time_out=self.local_idle_ms, properties=props)))
        theirs = self.until(lambda f: isinstance(f, AMQPFrame) and isinstance(f.performative, spec.Open))
        self.hostile()
        self.remote_max_frame = int(theirs.performative.value_of("max-frame-size"))
        idle = theirs.performative.idle_time_out
        self.remote_idle = 0.0 if idle is None or self.bad == "no-heartbeat" else int(idle) / 1000
        if self.remote_idle and self.remote_idle < MIN_IDLE:
            if self.bad == "accept-any-idle":
                self.remote_idle = 0.0   # agrees silently, and keeps nothing
            else:
                self.fail_close("amqp:resource-limit-exceeded", f"idle-time-out {idle} ms is too small")
        emit("connected")

    def scram(self, first_bare: str, nonce: str) -> bool:
        """The SCRAM-SHA-1 exchange (RFC 5802) after the client-first message: reads the
        server-first challenge, sends client-final with the proof; False when the challenge is bad."""
        challenge = self.read(self.timeout)
        if not isinstance(challenge, SASLFrame) or not isinstance(challenge.body, spec.SaslChallenge):
            return False
        server_first = bytes(challenge.body.challenge).decode("utf-8", "replace")
        attrs = dict(kv.split("=", 1) for kv in server_first.split(",") if "=" in kv)
        if not attrs.get("r", "").startswith(nonce) or "s" not in attrs or "i" not in attrs:
            return False
        salted = hashlib.pbkdf2_hmac("sha1", self.password.encode(), base64.b64decode(attrs["s"]), int(attrs["i"]))
        client_key = hmac.new(salted, b"Client Key", "sha1").digest()
        final_bare = f"c=biws,r={attrs['r']}"
        auth = f"{first_bare},{server_first},{final_bare}".encode()
        signature = hmac.new(hashlib.sha1(client_key).digest(), auth, "sha1").digest()
        proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature))).decode()
        self.send(frame(spec.SaslResponse(response=f"{final_bare},p={proof}".encode())))
        return True

    def hostile(self) -> None:
        """The hostile faults, once the connection is open."""
        stop = time.monotonic() + self.timeout
        try:
            if self.bad == "huge-frame":
                self.sock.sendall((0xFFFFFFF0).to_bytes(4, "big") + b"\x02\x00\x00\x00" + b"\x00" * 65536)
            elif self.bad == "flood-empty":
                chunk = encode(EmptyFrame(0)) * 8192
                while time.monotonic() < stop:
                    self.sock.sendall(chunk)
            elif self.bad == "endless-delivery":
                self.begin()
                h = self.attach(SENDER, "amqpspec-q")
                payload = b"\x00" * 60000
                frames = 0
                while time.monotonic() < stop:
                    t = spec.Transfer(handle=h, delivery_id=0 if frames == 0 else None,
                                      delivery_tag=b"e" if frames == 0 else None, message_format=0, more=True)
                    self.sock.sendall(encode(AMQPFrame(self.channel, t, payload)))
                    frames += 1
        except OSError:
            raise Done(1) from None
        if self.bad in ("huge-frame", "flood-empty", "endless-delivery"):
            time.sleep(max(0.0, stop - time.monotonic()))
            raise Done(1)

    def begin(self) -> None:
        if self.bad == "unknown-performative":   # a described list whose descriptor names no performative
            self.sock.sendall(b"\x00\x00\x00\x0c\x02\x00\x00\x00" + b"\x00\x53\xff\x45")
        if self.bad == "frame-size-lies":   # the begin's SIZE three octets short of the frame
            data = encode(AMQPFrame(self.channel, spec.Begin(next_outgoing_id=0, incoming_window=1000,
                                                             outgoing_window=1000, handle_max=HANDLE_MAX)))
            self.sock.sendall((len(data) - 3).to_bytes(4, "big") + data[4:])
        self.send(AMQPFrame(self.channel, spec.Begin(remote_channel=0 if self.bad == "begin-remote-channel" else None,
                                                     next_outgoing_id=0, incoming_window=1000, outgoing_window=1000,
                                                     handle_max=HANDLE_MAX)))
        self.until(lambda f: self.remote_begin is not None)

    def attach(self, role: bool, address: str | None, *, dynamic: bool = False, coordinator: bool = False) -> int:
        handle = len(self.links) + (5 if self.bad == "handle-5" else 0)
        source = spec.Source(address=address) if role == RECEIVER else spec.Source()
        if coordinator:   # a control link that allows the rejected outcome (4.2)
            outcomes = ("accepted",) if self.bad == "no-rejected-outcome" else ("accepted", "rejected")
            source = spec.Source(outcomes=[Symbol(f"amqp:{o}:list") for o in outcomes])
        if role == RECEIVER and not dynamic:   # the outcomes it may choose (3.5.3: outcomes, default-outcome)
            source = spec.Source(address=address, outcomes=[Symbol(f"amqp:{o}:list") for o in OUTCOMES],
                                 default_outcome=spec.Modified(delivery_failed=True))
            if self.bad == "bad-outcomes":   # a delivery state that is no outcome, twice
                source = spec.Source(address=address, outcomes=[Symbol("amqp:received:list")],
                                     default_outcome=spec.Received(section_number=0, section_offset=0))
        if role == RECEIVER and dynamic:   # 3.5.3: no address where dynamic is asked for
            source = spec.Source(address="dyn-asked" if self.bad == "dynamic-address" else None, dynamic=True)
            # 3.5.9: node properties of their types (the fault: bare symbols)
            source.dynamic_node_properties = {Symbol("lifetime-policy"): spec.DeleteOnClose(),
                                              Symbol("supported-dist-modes"): [Symbol("move")]} \
                if self.bad != "bad-node-properties" else {Symbol("lifetime-policy"): Symbol("delete-on-close"),
                                                         Symbol("supported-dist-modes"): Symbol("everywhere")}
        target = spec.Target(address=address) if role == SENDER else spec.Target()
        if coordinator:
            target = spec.Coordinator(capabilities=[Symbol("amqp:local-transactions")])
        if role == SENDER and self.bad == "dnp-without-dynamic":   # node properties, no dynamic node asked for
            target = spec.Target(address=address, dynamic_node_properties={Symbol("supported-dist-modes"): Symbol("move")})
        self.links[handle] = dict(role=role, remote=None, credit=0, dc=0, remote_dc=None, drain=False, name=f"l{handle}",
                                  detached=False, pending=0)
        unsettled = {None: spec.Accepted()} if self.bad == "unsettled-null-key" else None
        self.send(AMQPFrame(self.channel, spec.Attach(
            name=f"client10-{handle}", handle=0 if self.bad == "same-handle" else handle, role=role, source=source, target=target, unsettled=unsettled,
            initial_delivery_count=0 if role == SENDER and self.bad != "no-initial-delivery-count" else None,
            snd_settle_mode=0 if role == SENDER else None,   # unsettled: it waits for our outcomes
            max_message_size=MAX_MESSAGE if role == RECEIVER else None)))
        self.until(lambda f: self.links[handle]["remote"] is not None or self.links[handle]["detached"])
        return handle

    # -- the loop ----------------------------------------------------------------------------
    def until(self, cond: Any, seconds: float | None = None) -> Any:
        stop = time.monotonic() + (self.timeout if seconds is None else seconds)
        while True:
            now = time.monotonic()
            if self.remote_idle and now - self.last_sent >= self.remote_idle / 2:
                self.send(EmptyFrame(1 if self.bad == "empty-on-1" else 0))
            threshold = (1 if self.bad == "idle-at-announced" else 2) * (self.local_idle_ms or 0) / 1000
            if self.local_idle_ms and self.bad != "no-idle-detect" and now - self.last_recv > threshold:
                self.fail_close("amqp:resource-limit-exceeded", "local-idle-timeout expired")
            if now >= stop:
                if seconds is not None:
                    return None
                emit("error", type="Timeout", message="no answer in time")
                raise Done(1)
            wait = min(stop - now, 0.1)
            item = self.read(wait)
            if item is not None:
                self.handle(item)
                if cond(item):
                    return item
            elif cond(None):
                return None

    def handle(self, item: Any) -> None:
        if isinstance(item, EmptyFrame):
            if item.channel != 0 and self.bad == "strict-empty":
                self.fail_close("amqp:internal-error", "empty frame on a session channel")
            return
        if not isinstance(item, AMQPFrame) or item.performative is None:
            return
        p, ch = item.performative, item.channel
        if len(self.reader.last_raw) > MAX_FRAME and self.bad != "lenient":
            self.fail_close("amqp:connection:framing-error", "oversized frame")
        if ch > CHANNEL_MAX and self.bad != "lenient":
            self.fail_close("amqp:connection:framing-error", f"channel {ch} beyond channel-max")
        if not hasattr(p, "NAME"):   # a described value no part of the spec defines as a performative
            self.fail_close("amqp:decode-error", f"unknown performative {str(p)[:40]}")
        name = p.NAME
        if self.bad == "symmetric-channels" and ch != self.channel and name not in ("open", "close"):
            return   # expects the server's frames of its session on its own channel number (2.5.1 says otherwise)
        if name == "close" and ch != 0 and self.bad == "close-only-on-0":
            return   # a close on another channel taken for noise (2.4.3 allows any channel up to channel-max)
        if name == "close" and self.redirected(p):
            return
        if name == "close":
            if not self.closed_sent:
                if self.bad == "no-close-reply":
                    self.sock.close()
                    raise Done(1)
                self.send(AMQPFrame(0, spec.Close()))
                self.closed_sent = True
                if self.bad == "frames-after-close":
                    self.send(EmptyFrame(0))
            emit("closed", by="server")
            raise Done(1 if p.error is not None else 0)
        if name == "begin" and p.remote_channel is None:
            # a session the server begins: answered on a channel of ours, naming its channel (2.5.1)
            remote = None if self.bad == "begin-answer-no-remote" else ch
            self.send(AMQPFrame(self.channel + 1, spec.Begin(remote_channel=remote, next_outgoing_id=0,
                                                             incoming_window=10, outgoing_window=10)))
            return
        if name == "begin":
            self.remote_begin = p
            self.next_incoming_id = 0 if self.bad == "own-transfer-count" else int(p.next_outgoing_id)
            self.remote_window = int(p.incoming_window)
        elif name == "end":
            if self.bad != "no-end-reply" and not self.ended:
                self.send(AMQPFrame(self.channel, spec.End()))
            self.ended = True
            emit("closed", by="server")
            raise Done(1)
        elif name == "attach":
            ours = next((h for h, lk in self.links.items() if f"client10-{h}" == str(p.name)), None)
            if ours is not None:
                lk = self.links[ours]
                if lk.get("error") and p.unsettled is None and self.bad != "ignore-errant":
                    self.errant_link()   # 2.6.5: a pipelined attach of a link we detached with an error
                lk["remote"] = p
                self.by_remote[int(p.handle)] = ours
                if lk["role"] == RECEIVER:
                    lk["remote_dc"] = int(p.initial_delivery_count or 0)
                if lk.pop("resuming", False):
                    self.link_flow(ours, 5)
            else:
                self.unsolicited(p)
        elif name == "detach":
            ours = self.by_remote.get(int(p.handle))
            if ours is not None and not self.links[ours]["detached"]:
                self.links[ours]["detached"] = True
                if self.bad == "drop-on-detach" and self.links[ours]["role"] == SENDER:
                    emit("error", type="LinkDetached", message="the outcomes of its deliveries dropped")
                    raise Done(1)
                if self.bad != "no-detach-reply":
                    self.send(AMQPFrame(self.channel, spec.Detach(handle=ours, closed=p.closed)))
                if p.error is not None and not p.closed and self.links[ours]["role"] == RECEIVER:
                    self.resume(ours)
                if p.error is not None and str(p.error.condition) == "amqp:link:redirect" and self.bad != "no-redirect":
                    self.follow_link_redirect(p.error)
        elif name == "flow":
            self.on_flow(p)
        elif name == "transfer":
            self.on_transfer(item)
        elif name == "disposition":
            first = int(p.first)
            last = int(p.last) if p.last is not None else first
            if p.settled:
                self.settled_ids.update(range(first, last + 1))
            if bool(p.role) == RECEIVER and p.state is not None:
                self.states.update({i: p.state for i in range(first, last + 1)})

    def redirected(self, p: Any) -> bool:
        """A close with amqp:connection:redirect: answered, then the client connects where its info
        says and opens again naming the hostname given (2.8.16); False when not followed."""
        error = p.error
        if error is None or str(error.condition) != "amqp:connection:redirect" or self.bad == "no-redirect":
            return False
        info = {str(k): v for k, v in (error.info or {}).items()}
        self.send(AMQPFrame(0, spec.Close()))
        self.sock.close()
        self.reconnect(info)
        return True

    def reconnect(self, info: dict[str, Any]) -> None:
        """Connects where a redirect's info map says and opens again, naming its hostname (2.8.16, 2.8.18)."""
        self.sock = socket.create_connection((str(info.get("network-host", "127.0.0.1")), int(info["port"])),
                                             timeout=self.timeout)
        self.reader = FrameReader(1 << 24)
        self.closed_sent = False
        if self.bad != "redirect-keep-hostname":   # (the fault follows the redirect, naming the old host)
            self.hostname = str(info.get("hostname") or self.hostname)
        self.open()

    def unsolicited(self, p: Any) -> None:
        """An attach the server began: checked, then refused (no terminus here: attach, detach)."""
        h = int(p.handle)
        if self.bad != "lenient":
            if h in self.by_remote:
                self.fail_close("amqp:session:handle-in-use", f"handle {h} is in use")
            if h > HANDLE_MAX:
                self.fail_close("amqp:connection:framing-error", f"handle {h} beyond handle-max")
        if self.bad == "ignore-attach":
            return
        # 2.7.3: the lowest handle not in use (the fault: one far above it, past a small handle-max)
        ours = min(set(range(len(self.links) + 1)) - set(self.links)) if self.bad != "answer-handle-high" \
            else 50 + len(self.links)
        self.links[ours] = dict(role=not bool(p.role), remote=p, credit=0, dc=0, remote_dc=None, drain=False,
                                name=str(p.name), detached=True, pending=0)
        self.by_remote[h] = ours
        wire = 0 if self.bad == "answer-handle-in-use" else ours   # (the fault: the handle of its first link)
        idc = None if bool(p.role) is SENDER or self.bad == "no-initial-delivery-count" else 0
        self.send(AMQPFrame(self.channel, spec.Attach(name=str(p.name), handle=wire, role=not bool(p.role),
                                                      source=None, target=None, initial_delivery_count=idc)),
                  AMQPFrame(self.channel, spec.Detach(handle=wire, closed=True)))

    def on_flow(self, p: Any) -> None:
        if p.next_outgoing_id is not None and self.bad != "own-transfer-count":
            self.next_incoming_id = int(p.next_outgoing_id)   # 2.5.6: taken directly from the flow
        if p.next_incoming_id is not None:
            self.remote_window = int(p.next_incoming_id) + int(p.incoming_window) - self.next_outgoing_id
        else:
            self.remote_window = int(p.incoming_window) - self.next_outgoing_id
        if p.handle is None:
            if p.echo and self.bad != "ignore-echo":   # 2.7.4: the session state, at once
                self.send(AMQPFrame(self.channel, spec.Flow(
                    next_incoming_id=self.next_incoming_id, incoming_window=1000,
                    next_outgoing_id=self.next_outgoing_id, outgoing_window=1000)))
            return
        ours = self.by_remote.get(int(p.handle))
        if ours is None:
            if self.bad != "lenient":
                self.send(AMQPFrame(self.channel, spec.End(error=spec.Error(
                    condition=Symbol("amqp:session:unattached-handle"), description=f"no link on handle {p.handle}"))))
                self.ended = True
                emit("error", type="ProtocolError", message="unattached handle")
                if self.bad == "answer-after-end":   # goes on answering what arrives on the ended session
                    self.until(lambda f: False, 1.5)
                self.drain_until_close(1.5)
                raise Done(1)
            return
        lk = self.links[ours]
        if lk["role"] == SENDER:
            # 2.6.7/4: a receiver that does not know delivery-count yet means our first one (0 here)
            unknown = lk["dc"] if self.bad == "dc-none-as-current" else 0
            dc_rcv = unknown if p.delivery_count is None else int(p.delivery_count)
            before = lk["credit"]
            lk["credit"] = dc_rcv + int(p.link_credit or 0) - lk["dc"]
            if self.bad == "credit-face-value":   # the classic slip: link-credit taken as it stands
                lk["credit"] = int(p.link_credit or 0)
            if self.bad == "credit-added":   # another: each flow's link-credit added to what is left
                lk["credit"] = max(0, before) + int(p.link_credit or 0)
            lk["drain"] = bool(p.drain)
            if lk["drain"] and (lk["pending"] == 0 or self.bad == "drain-first") and self.bad != "ignore-drain":
                self.answer_drain(ours)
        else:
            if p.delivery_count is not None:
                lk["remote_dc"] = int(p.delivery_count)
        if p.echo and self.bad != "ignore-echo":
            self.link_flow(ours, echo=self.bad == "echo-back")

    def answer_drain(self, handle: int) -> None:
        lk = self.links[handle]
        if lk["credit"] > 0:
            lk["dc"] += lk["credit"]
            lk["credit"] = 0
            self.link_flow(handle)

    def link_flow(self, handle: int, credit: int | None = None, echo: bool = False) -> None:
        lk = self.links[handle]
        if lk["role"] == SENDER:
            # credit-kept: link-credit not decreased as delivery-count grew (the limit drifts up)
            kept = lk["dc"] if self.bad == "credit-kept" else 0
            fields = dict(delivery_count=None if self.bad == "sender-flow-no-dc" else lk["dc"],
                          link_credit=max(0, lk["credit"]) + kept, drain=lk["drain"])
        else:
            dc = 0 if self.bad == "delivery-count-zero" else lk["remote_dc"]
            fields = dict(delivery_count=dc, link_credit=lk["credit"] if credit is None else credit)
            lk["credit"] = fields["link_credit"]
        seen_begin = self.remote_begin is not None and self.bad != "no-next-incoming-id"
        self.send(AMQPFrame(self.channel, spec.Flow(
            next_incoming_id=self.next_incoming_id if seen_begin else None, incoming_window=1000,
            next_outgoing_id=self.next_outgoing_id, outgoing_window=1000, echo=echo or None,
            handle=int(lk["remote"].handle) if self.bad == "partner-handle" and lk["remote"] is not None else handle,
            **fields)))

    def on_transfer(self, item: AMQPFrame) -> None:
        t = item.performative
        self.next_incoming_id = (self.next_incoming_id + 1) % (1 << 32)   # a serial number (2.5.6)
        ours = self.by_remote.get(int(t.handle))
        if ours is None:
            if self.bad != "ignore-unattached-transfer":   # 2.5.4: a session that cannot process input ends
                self.send(AMQPFrame(self.channel, spec.End(error=spec.Error(
                    condition=Symbol("amqp:session:unattached-handle"), description=f"no link on handle {t.handle}"))))
                self.ended = True
                emit("error", type="ProtocolError", message="transfer on an unattached handle")
                self.drain_until_close(1.5)
                raise Done(1)
            return
        if self.links[ours].get("error") and self.bad != "ignore-errant":
            self.errant_link()
        if ours not in self.partial:
            self.partial[ours] = (t, bytearray())
        first, data = self.partial[ours]
        data += bytes(item.payload)
        # more-over-aborted: more=true read as "more to come" even on an aborted transfer
        if t.more and (not t.aborted or self.bad == "more-over-aborted") and self.bad != "no-multi-frame":
            return
        del self.partial[ours]
        if first.resume and self.bad != "keep-resumed":
            # 2.7.5: a resumed delivery not in our unsettled map (always empty: no resuming here) is ignored
            self.links[ours]["remote_dc"] = ((self.links[ours]["remote_dc"] or 0) + 1) % (1 << 32)
            self.links[ours]["credit"] -= 1
            return
        if t.aborted and self.bad != "keep-aborted":
            return
        lk = self.links[ours]
        if lk["role"] == RECEIVER and len(data) > MAX_MESSAGE and self.bad != "accept-large":
            self.link_error(ours, "amqp:link:message-size-exceeded", f"{len(data)} octets")
        # delivery-count is a serial number (RFC-1982): it wraps at 2^32
        lk["remote_dc"] = ((lk["remote_dc"] or 0) + 1) % (1 << 32 if self.bad != "no-wrap" else 1 << 33)
        lk["credit"] -= 1
        try:
            msg = Message.decode(bytes(data))
            body = msg.body.value if isinstance(msg.body, (spec.AmqpValue, spec.Data)) else msg.body
            # 3.2.1: no header means its defaults (delivery-count 0); the fault takes no header for "unknown"
            self.redelivered[first.delivery_id] = self.bad == "header-defaults" if msg.header is None \
                else bool(msg.header.delivery_count)
        except Exception:  # noqa: BLE001 - a partial (aborted) message may not decode
            body = bytes(data)[-20:]
        if isinstance(body, (bytes, bytearray)):
            body = bytes(body).decode("utf-8", "replace")
        for key in self.unknown_annotations(data):   # 3.2.10: this client understands no annotation
            if not key.startswith("x-opt-") and self.bad != "ignore-annotations":
                self.link_error(ours, "amqp:not-implemented", f"annotation {key} not understood")
            if key.startswith("x-opt-") and self.bad == "strict-annotations":
                self.link_error(ours, "amqp:not-implemented", f"annotation {key} not understood")
        settled = bool(first.settled) if first.settled is not None or self.bad != "unset-settled-true" else True
        if self.bad == "last-frame-settled":   # the flag of the last frame alone (unset: unsettled)
            settled = bool(t.settled)
        self.deliveries.append((ours, str(body), first.delivery_id, settled))

    def unknown_annotations(self, data: bytes) -> list[str]:
        try:
            msg = Message.decode(bytes(data))
        except Exception:  # noqa: BLE001 - an undecodable message has no annotations to judge
            return []
        keys = []
        for section in (msg.delivery_annotations, msg.message_annotations, msg.footer):
            value = getattr(section, "value", None)
            if isinstance(value, dict):
                keys += [str(k) for k in value]
        return keys

    def link_error(self, handle: int, condition: str, text: str) -> None:
        """A link error (2.6.5): detach with the error, then end the conversation."""
        self.links[handle]["error"] = True
        self.send(AMQPFrame(self.channel, spec.Detach(handle=handle, closed=True, error=spec.Error(
            condition=Symbol(condition), description=None if self.bad == "bare-link-error" else text))))
        self.links[handle]["detached"] = True
        emit("error", type="LinkError", message=f"{condition}: {text}")
        self.until(lambda f: isinstance(f, AMQPFrame) and getattr(f.performative, "NAME", "") == "detach", 1.0)
        self.close()
        raise Done(1)

    def follow_link_redirect(self, error: Any) -> None:
        """A detach with amqp:link:redirect (2.8.18): this connection is closed, one is opened where the
        info map says, naming its hostname in sasl-init and open; this client stops there."""
        info = {str(k): v for k, v in (error.info or {}).items()}
        if "port" not in info:
            return
        self.close()
        self.reconnect(info)
        self.close()
        raise Done(0)

    def resume(self, handle: int) -> None:
        """2.6.5: the partner's link endpoint failed and is destroyed: the link is resumed (an attach with
        an unsettled map, empty: nothing is unsettled here), never re-attached."""
        lk = self.links[handle]
        lk["detached"], lk["resuming"] = False, True
        source = lk["remote"].source if lk["remote"] is not None else spec.Source()
        self.send(AMQPFrame(self.channel, spec.Attach(
            name=f"client10-{handle}", handle=handle, role=RECEIVER, source=source, target=spec.Target(),
            unsettled=None if self.bad == "pipelined-reattach" else {}, max_message_size=MAX_MESSAGE)))

    def check_source(self, handle: int) -> None:
        """2.6.3: a receiving link answered with a null source has no terminus behind it: detached."""
        remote = self.links[handle]["remote"]
        if remote is not None and remote.source is not None and remote.source.filter and self.bad != "trust-filter":
            remote = remote.replace(source=None)   # 3.5.3: a filter in place this client never asked for
        if remote is None or remote.source is not None or self.bad == "trust-terminus":
            return
        self.send(AMQPFrame(self.channel, spec.Detach(handle=handle, closed=True)))
        self.links[handle]["detached"] = True
        emit("error", type="LinkRefused", message="the node created no source")
        self.until(lambda f: isinstance(f, AMQPFrame) and getattr(f.performative, "NAME", "") == "detach", 1.0)
        self.close()
        raise Done(1)

    def errant_link(self) -> None:
        """Input on a link detached with an error (2.6.5): the session ends with errant-link."""
        self.send(AMQPFrame(self.channel, spec.End(error=spec.Error(
            condition=Symbol("amqp:session:errant-link"), description="input on a link detached with an error"))))
        self.ended = True
        emit("error", type="ProtocolError", message="errant link")
        self.until(lambda f: isinstance(f, AMQPFrame) and getattr(f.performative, "NAME", "") == "end", 1.0)
        self.close()
        raise Done(1)

    # -- sending -----------------------------------------------------------------------------
    def transfer(self, handle: int, message: Message, n: int, *, state: Any = None, settled: bool = False) -> int:
        """Sends one delivery (``n`` 0: a control message, no published event); ``state`` goes on
        every frame of it (4.4.1: all frames of a transactional delivery name the transaction)."""
        lk = self.links[handle]
        if self.bad != "ignore-credit":
            self.until(lambda f: lk["credit"] > 0 or lk["detached"])
        if self.bad != "ignore-window":
            self.until(lambda f: self.remote_window > 0 or lk["detached"])
        if lk["detached"]:
            raise Done(1)
        remote = lk["remote"]
        if remote is not None and remote.target is None and self.bad != "trust-terminus":
            self.send(AMQPFrame(self.channel, spec.Detach(handle=handle, closed=True)))
            lk["detached"] = True
            emit("error", type="LinkRefused", message="the node created no terminus")
            raise Done(1)
        if remote is not None and remote.incomplete_unsettled and self.bad != "ignore-incomplete":
            # 2.7.3: no new deliveries on this attachment; this client gives up rather than reattach
            self.send(AMQPFrame(self.channel, spec.Detach(handle=handle, closed=True)))
            lk["detached"] = True
            emit("error", type="LinkRefused", message="the node's unsettled map is incomplete")
            raise Done(1)
        did = self.next_delivery_id
        tag = b"x" if self.bad == "same-tag" else None if self.bad == "no-tag" else f"t{did}".encode()
        limit = 1 << 20 if self.bad == "ignore-max-frame" else self.remote_max_frame
        presettled = self.bad == "settle-in-unsettled-mode" or settled
        if presettled:
            self.settled_ids.add(did)
        frames = transfer_frames(self.channel, spec.Transfer(handle=handle, delivery_id=did, delivery_tag=tag,
                                                             message_format=0, settled=presettled,
                                                             state=spec.Received(section_number=0, section_offset=0)
                                                             if self.bad == "received-state" else state),
                                 message.encode(), limit)
        if state is not None and self.bad != "txn-first-frame-only":
            frames = [frames[0]] + [AMQPFrame(f.channel, f.performative.replace(state=state), f.payload)
                                    for f in frames[1:]]
        lk["pending"] = max(0, lk["pending"] - 1)
        self.send(*frames)
        self.next_delivery_id += 1
        self.next_outgoing_id += len(frames)
        self.remote_window -= len(frames)
        lk["dc"] += 1
        lk["credit"] -= 1
        if n:
            emit("published", n=n)
        return did

    def message(self, body: str, **props: Any) -> Message:
        if self.bad == "content-encoding":
            props["content_encoding"] = Symbol("identity")
        if self.bad == "content-type":
            props["content_type"] = Symbol("text/plain")
        if self.bad == "encoding-compress":   # a data body, compressed (the encoding is the fault)
            props["content_encoding"] = Symbol("compress, gzip")
            return Message(properties=spec.Properties(**props), body=body.encode())
        return Message(properties=spec.Properties(**props) if props else None, body=body)

    def close(self) -> None:
        if self.bad == "no-close":
            self.sock.close()
            raise Done(0)
        self.send(AMQPFrame(1 if self.bad == "close-channel-1" else 0, spec.Close()))
        self.closed_sent = True
        if self.bad == "no-wait-close":
            self.sock.close()
            emit("closed", by="client")
            return
        if self.bad == "frames-after-close":
            self.send(EmptyFrame(0))
        self.drain_until_close(self.timeout)
        if self.bad == "reuse-socket":   # the close exchanged, the same socket is used again
            self.sock.sendall(encode(ProtocolHeader.amqp()))
            time.sleep(1.5)
        self.sock.close()
        emit("closed", by="client")


def tx(c: Client, address: str, body: str, count: int, rollback: bool) -> None:
    """The tx workload: declare on a coordinator link, send in the transaction, discharge."""
    ctl = c.attach(SENDER, None, coordinator=True)
    declare = spec.Declare(global_id=b"amqpspec-gtrid" if c.bad == "global-id" else None)
    did = c.transfer(ctl, Message(body=declare), 0, settled=c.bad == "settled-declare")
    c.until(lambda f: did in c.states)
    if not isinstance(c.states[did], spec.Declared):
        emit("error", type="TransactionDeclareFailed", message=str(c.states[did])[:100])
        c.close()
        raise Done(1)
    txn = bytes(c.states[did].txn_id)
    h = c.attach(SENDER, address)
    c.links[h]["pending"] = count
    ids = []
    for n in range(1, count + 1):
        state = None if c.bad == "no-txn-state" else spec.TransactionalState(txn_id=txn)
        ids.append(c.transfer(h, c.message(body), n, state=state))
    c.until(lambda f: all(i in c.states for i in ids))
    for n, i in enumerate(ids, 1):
        outcome = getattr(c.states[i], "outcome", c.states[i])
        emit("confirmed", n=n, ack=isinstance(outcome, spec.Accepted))
    dis = c.transfer(ctl, Message(body=spec.Discharge(txn_id=txn, fail=rollback)), 0)
    c.until(lambda f: dis in c.states)
    if isinstance(c.states[dis], spec.Rejected):
        emit("error", type="TransactionRollback", message=str(c.states[dis])[:100])
        c.close()
        raise Done(1)
    emit("rolled-back" if rollback else "committed")
    unsettled = [i for i in ids if i not in c.settled_ids]
    if unsettled and c.bad != "no-settle-after-discharge":   # 4.4.4: settled once discharged
        c.send(AMQPFrame(c.channel, spec.Disposition(role=SENDER, first=min(unsettled), last=max(unsettled),
                                                     settled=True)))
    for handle in (h, ctl):
        c.send(AMQPFrame(c.channel, spec.Detach(handle=handle, closed=True)))
        c.links[handle]["detached"] = True   # the server's detach is the answer, not one to answer
        c.until(lambda f: isinstance(f, AMQPFrame) and getattr(f.performative, "NAME", "") == "detach")


def run(url: str, workload: str, opts: dict[str, str]) -> int:
    c = Client(url, opts)
    count = int(opts.get("count", "1"))
    address = opts.get("address") or opts.get("queue") or "amqpspec-q"
    body = opts.get("body", "hello")
    try:
        c.open()
        if workload == "connect":
            pass
        elif workload == "idle":
            c.until(lambda f: False, float(opts.get("timeout", "5")))
        elif workload == "send":
            c.begin()
            h = c.attach(SENDER, address)
            c.links[h]["pending"] = count
            ids = []
            for n in range(1, count + 1):
                ids.append(c.transfer(h, c.message(body), n))
                if c.bad != "same-tag":
                    c.until(lambda f: ids[-1] in c.settled_ids)
                    emit("confirmed", n=n, ack=True)
            if c.bad == "same-tag":
                c.until(lambda f: all(i in c.settled_ids for i in ids))
            if c.links[h]["drain"] and c.bad != "ignore-drain":
                c.answer_drain(h)
            c.until(lambda f: False, 0.3)
            c.send(AMQPFrame(c.channel, spec.Detach(handle=h, closed=True)))
            c.until(lambda f: c.links[h]["detached"] or (isinstance(f, AMQPFrame) and getattr(f.performative, "NAME", "") == "detach"))
        elif workload == "tx":
            c.begin()
            tx(c, address, body, count, opts.get("rollback", "false") == "true")
        elif workload in ("receive", "rpc"):
            c.begin()
            if workload == "rpc":
                out = c.attach(SENDER, address)
                h = c.attach(RECEIVER, None, dynamic=True)
                reply_to = str(c.links[h]["remote"].source.address)
                c.link_flow(h, 1)
                c.links[out]["pending"] = 1
                c.transfer(out, c.message(body, reply_to=reply_to, message_id="rpc-1"), 1)
                count = 1
            else:
                h = c.attach(RECEIVER, address)
                c.check_source(h)
                c.link_flow(h, int(opts.get("credit") or 5))
            for n in range(1, count + 1):
                c.until(lambda f: len([d for d in c.deliveries if d[0] == h]) >= n)
                mine = [d for d in c.deliveries if d[0] == h]
                _, text, did, settled = mine[n - 1]
                emit("delivered", n=n, body=text, redelivered=c.redelivered.get(did, False))
                # the session window, kept open with a flow about the session alone (no link fields)
                extra = dict(link_credit=7) if c.bad == "session-flow-with-credit" else {}
                c.send(AMQPFrame(c.channel, spec.Flow(next_incoming_id=c.next_incoming_id, incoming_window=1000,
                                                      next_outgoing_id=c.next_outgoing_id, outgoing_window=1000, **extra)))
                if not settled and opts.get("ack", "true") == "true":
                    role = SENDER if c.bad == "disposition-role-sender" else RECEIVER
                    c.send(AMQPFrame(c.channel, spec.Disposition(role=role, first=did, settled=c.bad != "no-settle",
                                                                 state=spec.Accepted())))
                if c.links[h]["credit"] <= 0 and n < count:
                    c.link_flow(h, int(opts.get("credit") or 5))
            c.send(AMQPFrame(c.channel, spec.Detach(handle=h, closed=True)))
            c.until(lambda f: isinstance(f, AMQPFrame) and getattr(f.performative, "NAME", "") == "detach")
        else:
            emit("unsupported")
            return 3
        c.close()
    except Done as d:
        return d.code
    return 0


def main() -> None:
    url, workload = sys.argv[1], sys.argv[2]
    opts = dict(a.split("=", 1) for a in sys.argv[3:] if "=" in a)
    try:
        code = run(url, workload, opts)
    except OSError as exc:
        emit("error", type=type(exc).__name__, message=str(exc))
        code = 1
    if code == 0:
        emit("done")
    sys.stdout.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
