"""A scripted raw-socket AMQP 0-9-1 client, run as a driver, for the tests of the client cases.

It follows the driver contract (``client091_scripted.py URL WORKLOAD [key=value ...]``) and
does each workload with the suite's own codec, the way a careful client library would:
every frame checked, closes answered, heartbeats kept, limits respected. ``fault=NAME``
(repeatable, comma-separated) makes it misbehave in one named way, so that each client
case can be shown both passing (a correct client) and failing (the fault it looks for). It
is a test fixture, never a stand-in for a real client library in a verdict.
"""
from __future__ import annotations

import json
import socket
import struct
import sys
import time
import urllib.parse
from typing import Any

sys.path.insert(0, __file__.rsplit("/tests/", 1)[0])

from amqpspec.wire.amqp091 import (  # noqa: E402
    PROTOCOL_HEADER, BodyFrame, FrameReader, HeaderFrame, HeartbeatFrame, MalformedFrame, MethodFrame,
    ProtocolHeader, RawFrame, spec,
)
from amqpspec.wire.amqp091.base import UnknownMethod  # noqa: E402
from amqpspec.wire.errors import FrameError  # noqa: E402

OPTIONS = {"queue": "amqpspec-q", "exchange": "", "routing_key": None, "count": "1", "body": "hello",
           "ack": "true", "prefetch": "0", "persistent": "false", "timeout": "5", "heartbeat": None, "fault": ""}
FRAME_MIN = 4096
CONTENT_METHODS = ("basic.deliver", "basic.get-ok", "basic.return")


def emit(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


class Fatal(Exception):
    """The connection must end: with connection.close ``code`` or, when silent, the socket alone."""

    def __init__(self, code: int = 0, text: str = "", silent: bool = False, method: Any = None) -> None:
        super().__init__(text)
        self.code, self.text, self.silent = code, text, silent
        self.method = method  # the method that provoked it: its class and method id go in the close


class Ended(Exception):
    """The server closed the connection (answered) or the socket ended."""


class Retry(Exception):
    """The server answered our header with its own: reconnect (4.2.2/5)."""


class Client:
    def __init__(self, url: str, faults: set[str], timeout: float) -> None:
        parts = urllib.parse.urlsplit(url)
        self.addr = (parts.hostname or "127.0.0.1", parts.port or 5672)
        self.user = urllib.parse.unquote(parts.username or "guest")
        self.password = urllib.parse.unquote(parts.password or "guest")
        self.vhost = urllib.parse.unquote(parts.path[1:]) if len(parts.path) > 1 else "/"
        if "raw-vhost-path" in faults:  # the fault: the URL's path segment sent undecoded
            self.vhost = parts.path[1:] or "/"
        self.faults = faults
        self.timeout = timeout
        self.frame_max = FRAME_MIN
        self.heartbeat = 0
        self.channel_max = 0
        self.open_channels: set[int] = set()
        self.closing: set[int] = set()
        self.closing_connection = False
        self.deliveries: list[tuple[int, Any, bytes]] = []
        self.confirms: list[tuple[int, int, bool, bool]] = []
        self.published = 0                        # publishes on the (one) channel, the confirm sequence
        self.confirmed: dict[int, bool] = {}
        self.cancelled: list[str] = []
        self.cancelling = False                   # our basic.cancel sent, its cancel-ok not yet read
        self.empties = 0                          # basic.get-empty answers read
        self.blocked = False
        self.paused: set[int] = set()            # channels the server stopped with channel.flow
        self.content: dict[int, list[Any]] = {}   # channel -> [method, header, body bytes]
        self.last_recv = self.last_send = time.monotonic()
        self.opened = False          # before open-ok an error ends the socket silently (2.2.4/1)

    # -- socket -----------------------------------------------------------------------
    def connect(self) -> None:
        self.sock = socket.create_connection(self.addr, timeout=self.timeout)
        self.reader = FrameReader(1024 if "small-read-buffer" in self.faults else FRAME_MIN * 4)
        header = b"AMQP\x00\x00\x09\x00" if "bad-header" in self.faults else PROTOCOL_HEADER
        self.sock.sendall(header)

    def send(self, *frames: Any) -> None:
        self.sock.sendall(b"".join(f.encode() if not isinstance(f, bytes) else f for f in frames))
        self.last_send = time.monotonic()

    def method(self, channel: int, method: Any) -> None:
        self.send(MethodFrame(channel, method))

    def publish(self, channel: int, body: bytes, props: Any = None, exchange: str = "", key: str = "") -> None:
        limit = self.frame_max - 8 if self.frame_max else len(body) or 1
        if "frame-max-off-by-one" in self.faults:
            limit += 1
        if "ignore-frame-max" in self.faults:
            limit = max(len(body), 1)
        content_ch = 0 if "content-on-channel-zero" in self.faults else channel
        size = len(body) + (1 if "wrong-body-size" in self.faults else 0)
        frames: list[Any] = [MethodFrame(channel, spec.BasicPublish(0, exchange, key, False, False),
                                         end=0 if "bad-frame-end" in self.faults else 0xCE),
                             HeaderFrame(content_ch, 60, size, props or spec.BasicProperties(),
                                         weight=1 if "header-weight" in self.faults else 0)]
        if "interleave-content" in self.faults:  # the fault: a method inside the content (4.2.6)
            frames.append(MethodFrame(channel, spec.BasicQos(0, 0, False)))
        frames += [BodyFrame(content_ch, body[i:i + limit]) for i in range(0, len(body), limit)]
        self.send(*frames)
        self.published += 1

    # -- reading ----------------------------------------------------------------------
    def next_frame(self, until: float) -> Any:
        while True:
            try:
                item = self.reader.next()
            except FrameError as exc:
                if "lenient" in self.faults:
                    raise Fatal(541, f"lenient: {exc}") from None
                if "announces" in str(exc):
                    raise Fatal(501, "FRAME_ERROR - oversized frame") from None
                if "decode-before-end" in self.faults and "frame-end" in str(exc):
                    raise Fatal(502, "SYNTAX_ERROR - payload decoded before its frame-end") from None
                raise Fatal(silent=True, text=str(exc)) from None
            if item is not None:
                if "count-heartbeats-only" not in self.faults or isinstance(item, HeartbeatFrame):
                    self.last_recv = time.monotonic()
                return item
            now = time.monotonic()
            if self.heartbeat:
                last = self.last_recv if "beat-by-recv" in self.faults else self.last_send  # the fault: received traffic resets the send timer
                if now - last >= self.heartbeat / 2 and "no-heartbeats" not in self.faults:
                    self.send(HeartbeatFrame(0))
                if now - self.last_recv >= 2 * self.heartbeat and "no-silence-detection" not in self.faults:
                    raise Fatal(silent=True, text="server silent for two heartbeat intervals")
            if now >= until:
                return None
            wait = min(until - now, self.heartbeat / 4 if self.heartbeat else until - now)
            self.sock.settimeout(max(wait, 0.01))
            try:
                data = self.sock.recv(65536)
            except (socket.timeout, TimeoutError):
                continue
            except OSError:
                raise Ended() from None
            if not data:
                raise Ended()
            self.reader.feed(data)

    def wait_for(self, name: str | None, channel: int | None = None, timeout: float | None = None,
                 strict: bool = False) -> Any:
        """Processes what the server sends until the method ``name`` (None: until the timeout);
        ``strict``: any other method is an error (the handshake's fixed order)."""
        until = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            item = self.next_frame(until)
            if item is None:
                if name is None:
                    return None
                raise TimeoutError(f"no {name} within the timeout")
            got = self.handle(item)
            if got is not None and name is not None and got.method.NAME == name and (channel is None or got.channel == channel):
                return got
            if got is not None and strict and "lenient" not in self.faults:
                raise Fatal(503, f"COMMAND_INVALID - {got.method.NAME} instead of {name}")

    def handle(self, item: Any) -> MethodFrame | None:
        lenient = "lenient" in self.faults
        if isinstance(item, ProtocolHeader):
            raise Retry()
        if isinstance(item, RawFrame):
            if lenient:
                return None
            raise Fatal(silent=True, text="unknown frame type")
        channel = getattr(item, "channel", 0)
        if self.opened and self.channel_max and channel > self.channel_max and not lenient:
            raise Fatal(504, "CHANNEL_ERROR - channel above channel-max")  # 2.3.3/3: past the limits
        if isinstance(item, HeartbeatFrame):
            if self.content and "strict-content-sequence" in self.faults:
                raise Fatal(505, "UNEXPECTED_FRAME - heartbeat inside a content")
            if (item.channel != 0 or item.data) and not lenient:
                raise Fatal(501, "FRAME_ERROR - invalid heartbeat")
            if self.heartbeat == 0 and "strict-heartbeat" in self.faults:
                raise Fatal(501, "FRAME_ERROR - heartbeat not negotiated")
            return None
        if isinstance(item, (HeaderFrame, BodyFrame, MalformedFrame)):
            self.content_frame(item)
            return None
        assert isinstance(item, MethodFrame)
        m, ch = item.method, item.channel
        if isinstance(m, UnknownMethod):
            if lenient:
                return None
            raise Fatal(540, "NOT_IMPLEMENTED - unknown method")
        if m.CLASS_ID == 10 and ch != 0 and not lenient:
            raise Fatal(503, "COMMAND_INVALID - connection method on a channel", method=m)
        if ch in self.content and not lenient:
            raise Fatal(505, "UNEXPECTED_FRAME - method inside a content")
        name = m.NAME
        if self.closing_connection and name not in ("connection.close", "connection.close-ok"):
            if "ack-after-close" in self.faults and name == "basic.deliver":
                self.method(ch, spec.BasicAck(m.delivery_tag, False))
            return None  # discarded (connection.close/stability)
        if ch in self.closing and name not in ("channel.close", "channel.close-ok"):
            if "ack-after-close" in self.faults and name == "basic.deliver":
                self.method(ch, spec.BasicAck(m.delivery_tag, False))
            if "ack-after-close" in self.faults and name == "channel.flow":
                self.method(ch, spec.ChannelFlowOk(m.active))
            return None  # discarded (channel.close/stability)
        if name == "connection.close":
            if self.closing_connection and "no-crossing-close-ok" in self.faults:
                raise Ended()
            if "no-close-ok" not in self.faults:
                self.method(0, spec.ConnectionCloseOk())
            if "hide-close-code" in self.faults:
                emit("closed", by="server")  # the fault: the application never learns the code
            else:
                emit("closed", by="server", code=m.reply_code, text=str(m.reply_text))
            raise Ended()
        if name == "channel.close":
            if not (ch in self.closing and "no-crossing-close-ok" in self.faults) and "no-channel-close-ok" not in self.faults:
                self.method(ch, spec.ChannelCloseOk())
                if ch not in self.closing and "publish-after-close" in self.faults:
                    # the fault at once, not only if the workload still had messages to publish
                    # (a fast client may have published them all before the server's close came)
                    self.publish(ch, b"after close", key="amqpspec-q")
            if ch not in self.closing and "hide-close-code" in self.faults:
                emit("closed", by="server")  # the fault: the application never learns the code
            elif ch not in self.closing:
                emit("closed", by="server", code=m.reply_code, text=str(m.reply_text))
            self.open_channels.discard(ch)
            return item
        if name == "channel.flow":
            if "publish-while-paused" not in self.faults and not (m.active and "never-resume" in self.faults):
                (self.paused.discard if m.active else self.paused.add)(ch)
            if "ignore-flow" not in self.faults:
                self.method(ch, spec.ChannelFlowOk(m.active))
            return item
        if name == "basic.deliver" and self.cancelling and "strict-after-cancel" in self.faults:
            raise Fatal(505, "UNEXPECTED_FRAME - delivery after basic.cancel")
        if name == "basic.get-empty":
            if "empty-fatal" in self.faults:
                raise Fatal(503, "COMMAND_INVALID - basic.get-empty")
            self.empties += 1
        if name in CONTENT_METHODS:
            self.content[ch] = [item, None, b""]
            return None
        if name in ("basic.ack", "basic.nack"):
            if name == "basic.nack" and "nack-fatal" in self.faults:
                raise Fatal(406, "PRECONDITION_FAILED - nack")
            tag = int(m.delivery_tag)
            if "count-from-zero" in self.faults and tag:
                tag += 1  # the fault: its publishes numbered from 0, the server's tag 1 taken as its second
            open_seqs = [n for n in range(1, self.published + 1) if n not in self.confirmed]
            multiple = bool(m.multiple) and "ignore-multiple" not in self.faults
            multiple = multiple or "assume-order" in self.faults  # the fault: confirms taken as in order
            covered = [n for n in open_seqs if n == tag or (multiple and (tag == 0 or n <= tag))]
            # the rule validates a non-zero tag: a multiple confirm of tag 0 ("all outstanding") that
            # finds none outstanding (an earlier one took them all) names no message and is no error
            vacuous = multiple and tag == 0
            if not covered and not vacuous and "trust-confirms" not in self.faults:
                self.closing.add(ch)  # a channel exception: rabbitmq091 basic.nack.multiple/exists
                self.method(ch, spec.ChannelClose(406, "PRECONDITION_FAILED - unknown delivery tag", m.CLASS_ID, m.METHOD_ID))
                return item
            # the fault nack-requeue-as-ack reads a nack's requeue flag (a client must ignore it)
            acked = name == "basic.ack" or ("nack-requeue-as-ack" in self.faults and bool(m.requeue))
            for n in covered:
                self.confirmed[n] = acked
                self.confirms.append((ch, n, acked, bool(m.multiple)))
            return item
        if name == "basic.cancel":
            if "cancel-fatal" in self.faults:
                raise Fatal(503, "COMMAND_INVALID - basic.cancel from the server")
            self.cancelled.append(str(m.consumer_tag))
            if not m.no_wait:
                self.method(ch, spec.BasicCancelOk(m.consumer_tag))
            return item
        if name == "connection.blocked":
            self.blocked = True
        if name == "connection.unblocked" and "stay-blocked" not in self.faults:
            self.blocked = False
        return item

    def content_frame(self, item: Any) -> None:
        lenient = "lenient" in self.faults
        if item.channel == 0 and not lenient:
            raise Fatal(504, "CHANNEL_ERROR - content on channel 0")
        state = self.content.get(item.channel)
        if state is None and (self.closing_connection or item.channel in self.closing):
            return  # the content of a discarded method (connection.close/stability)
        if state is None:
            if lenient:
                return
            raise Fatal(505, "UNEXPECTED_FRAME - content without a method")
        method = state[0]
        if isinstance(item, MalformedFrame):
            if lenient:
                del self.content[item.channel]
                return
            raise Fatal(501 if item.type == 2 and "class-id" in item.error else 505, "bad content header")
        if isinstance(item, HeaderFrame):
            raw_flags = struct.unpack_from(">H", self.reader.last_raw, 7 + 12)[0]
            if not lenient:
                if item.class_id != method.method.CLASS_ID:
                    raise Fatal(501, "FRAME_ERROR - class-id mismatch")
                if raw_flags & 0x0003:
                    raise Fatal(505, "UNEXPECTED_FRAME - unknown property flags")
            state[1] = item
        else:
            if state[1] is None:
                if lenient:
                    return
                raise Fatal(505, "UNEXPECTED_FRAME - body before header")
            data = bytes(item.data) if "first-frame-only" not in self.faults or not state[2] else b""
            state[2] += data
            if len(state[2]) > state[1].body_size and not lenient:
                raise Fatal(505, "UNEXPECTED_FRAME - body past its size")
        header = state[1]
        if "wait-for-body" in self.faults and isinstance(item, HeaderFrame):
            return  # the fault: a content is only complete after a body frame
        if header is not None and (len(state[2]) >= header.body_size or
                                   ("first-frame-only" in self.faults and isinstance(item, BodyFrame))):
            del self.content[item.channel]
            if method.method.NAME != "basic.return":
                self.deliveries.append((item.channel, method, state[2]))

    # -- connection life --------------------------------------------------------------
    def handshake(self, requested_heartbeat: int | None) -> None:
        start = self.wait_for("connection.start", 0, strict=True)
        m = start.method
        if (m.version_major, m.version_minor) != (0, 9) and "ignore-version" not in self.faults:
            raise Fatal(silent=True, text="server version not handled")
        if "narrow-tables" in self.faults and _has_wide_values(m.server_properties):
            raise Fatal(silent=True, text="server-properties with a field type this client does not read")
        props = {} if "no-properties" in self.faults else {
            "product": "amqpspec scripted client", "version": "1", "platform": "Python",
            "capabilities": {"consumer_cancel_notify": True, "connection.blocked": True, "publisher_confirms": True}}
        if "bad-field-name" in self.faults:
            props["1-not-a-name"] = "x"
        if "duplicate-field" in self.faults:
            props = list(props.items()) + [("product", "twice")]  # type: ignore[assignment]
        offered = bytes(m.mechanisms).split() if isinstance(m.mechanisms, (bytes, bytearray)) else str(m.mechanisms).split()
        words = {w.decode() if isinstance(w, bytes) else w for w in offered}
        mech = "EXTERNAL" if "bad-mechanism" in self.faults else next((m for m in ("PLAIN", "AMQPLAIN") if m in words), "")
        if not mech:
            raise Fatal(silent=True, text="no usable SASL mechanism offered")
        locales = (bytes(m.locales).decode() if isinstance(m.locales, (bytes, bytearray)) else str(m.locales)).split()
        locale = "xx_XX" if "bad-locale" in self.faults else (locales[0] if locales else "en_US")
        response = b"\0" + self.user.encode() + b"\0" + self.password.encode()
        if "bad-sasl" in self.faults:
            response = self.user.encode() + b":" + self.password.encode()
        self.method(0, spec.ConnectionStartOk(props, mech, response, locale))
        tune = self.wait_for("connection.tune", 0, strict=True).method
        if 0 < tune.frame_max < FRAME_MIN and "accept-small-frame-max" not in self.faults:
            raise Fatal(silent=True, text="frame-max below frame-min-size proposed")  # an error before open (2.2.4/1)
        chmax = tune.channel_max or 2047
        fmax = tune.frame_max
        if "raise-channel-max" in self.faults:
            chmax = tune.channel_max + 10
        if "raise-frame-max" in self.faults:
            fmax = (tune.frame_max or 131072) * 2
        if "small-frame-max" in self.faults:
            fmax = 1024
        hb = tune.heartbeat if requested_heartbeat is None else min(tune.heartbeat, requested_heartbeat)
        self.channel_max, self.frame_max = chmax, fmax
        self.heartbeat = 0 if "late-heartbeats" in self.faults else hb  # from tune on (4.2.7)
        self.method(0, spec.ConnectionTuneOk(chmax, fmax, hb))
        self.reader.max_payload = (fmax - 8) if fmax and "accept-oversized" not in self.faults else (16 << 20)
        if fmax and "strict-frame-max" in self.faults:
            self.reader.max_payload = fmax - 9  # the fault: a frame of exactly frame-max refused
        self.method(1 if "open-on-channel-1" in self.faults else 0, spec.ConnectionOpen(self.vhost, "", False))
        self.wait_for("connection.open-ok", 0, strict=True)
        self.heartbeat = hb
        self.opened = True
        emit("connected")

    def open_channel(self, ch: int = 1) -> int:
        if "use-channel-2" in self.faults:
            ch = 2
        if "open-channel-zero" in self.faults:
            ch = 0
        self.method(ch, spec.ChannelOpen())
        if "reopen-channel" in self.faults:
            self.method(ch, spec.ChannelOpen())
        if "pipeline" not in self.faults:  # the fault: publishes before open-ok
            self.wait_for("channel.open-ok", ch)
        self.open_channels.add(ch)
        return ch

    def call(self, ch: int, method: Any, reply: str) -> MethodFrame:
        self.method(ch, method)
        return self.wait_for(reply, ch)

    def close_channel(self, ch: int) -> None:
        if ch not in self.open_channels:
            return
        self.closing.add(ch)
        self.method(ch, spec.ChannelClose(0 if "close-code-zero" in self.faults else 200, "bye", 0, 0))
        self.wait_for("channel.close-ok", ch)
        self.closing.discard(ch)
        self.open_channels.discard(ch)
        if "publish-after-close" in self.faults:
            self.publish(ch, b"after close", key="amqpspec-q")

    def close(self) -> None:
        if "drop-socket" in self.faults:
            self.sock.close()
            return
        self.closing_connection = True
        self.method(0, spec.ConnectionClose(200, "bye", 0, 0))
        if "no-wait-close-ok" in self.faults:  # the fault: the socket closed before close-ok came
            self.sock.close()
            emit("closed", by="client")
            return
        try:
            self.wait_for("connection.close-ok", 0)
        except Ended:
            pass
        self.sock.close()
        emit("closed", by="client")

    def ack(self, ch: int, tag: int) -> None:
        if "wrong-ack-tag" in self.faults:
            tag += 1
        self.method(ch, spec.BasicAck(tag, False))
        if "double-ack" in self.faults:
            self.method(ch, spec.BasicAck(tag, False))

    def settle(self, ch: int, n: int, tag: int, ack: bool) -> bool:
        """Settles the n-th delivery as the workload asks; False when a fault turned it away
        instead (rejected or nacked: the application never sees it)."""
        if n == 1 and "reject-first" in self.faults:
            self.method(ch, spec.BasicReject(tag, True))
            return False
        if n == 1 and "nack-first" in self.faults:
            self.method(ch, spec.BasicNack(tag, False, True))
            return False
        if ack or "ack-no-ack" in self.faults:
            self.ack(ch, tag)
        return True


def _has_wide_values(table: Any) -> bool:
    """Values beyond strings, integers, booleans and tables (fault narrow-tables refuses them)."""
    values = table.values() if isinstance(table, dict) else table if isinstance(table, list) else [table]
    for v in values:
        if isinstance(v, (dict, list)):
            if isinstance(v, list) or _has_wide_values(v):
                return True
        elif v is None or not isinstance(v, (str, bytes, bytearray, int)):
            return True
    return False


def run(url: str, workload: str, opts: dict[str, Any]) -> int:
    faults = {f for f in opts["fault"].split(",") if f}
    timeout, count = float(opts["timeout"]), int(opts["count"])
    queue = opts["queue"]
    key = opts["routing_key"] if opts["routing_key"] is not None else queue
    body = opts["body"].encode()
    ack = opts["ack"].lower() == "true"
    if workload not in ("connect", "publish", "consume", "get", "rpc", "tx", "confirm", "idle"):
        emit("unsupported")
        return 3
    c = Client(url, faults, timeout)
    c.connect()
    try:
        try:
            c.handshake(int(opts["heartbeat"]) if opts["heartbeat"] is not None else None)
        except Retry:
            if "no-retry" in faults:
                emit("error", type="Retry", message="server sent its protocol header")
                return 1
            c.sock.close()
            c.connect()  # again, with the same (only) version this client speaks
            c.handshake(None)
        ch = c.open_channel()
        if workload in ("publish", "tx", "confirm"):
            if workload == "tx":
                if "pipeline" in faults:
                    c.method(ch, spec.TxSelect())
                elif "commit-without-select" not in faults:
                    c.call(ch, spec.TxSelect(), "tx.select-ok")
            if workload == "confirm":
                if "tx-and-confirm" in faults:  # the fault: a transacted channel put in confirm mode
                    c.call(ch, spec.TxSelect(), "tx.select-ok")
                if "pipeline" in faults:
                    c.method(ch, spec.ConfirmSelect(False))
                else:
                    c.call(ch, spec.ConfirmSelect(False), "confirm.select-ok")
            for n in range(1, count + 1):
                if ch not in c.open_channels and "publish-after-close" not in faults:
                    emit("error", type="ChannelClosed", message="the server closed the channel")
                    c.close()
                    return 1
                while (c.blocked and "ignore-blocked" not in faults) or ch in c.paused:
                    c.wait_for(None, timeout=0.1)
                persistent = opts["persistent"].lower() == "true" and "no-persistent" not in faults
                c.publish(ch, body, spec.BasicProperties(delivery_mode=2) if persistent else None,
                          exchange=opts["exchange"], key=key)
                emit("published", n=n)
                c.wait_for(None, timeout=0.01)
            if workload == "tx":
                if "pipeline" in faults:
                    c.method(ch, spec.TxCommit())
                else:
                    c.call(ch, spec.TxCommit(), "tx.commit-ok")
            if workload == "confirm":
                until = time.monotonic() + (0.5 if "confirm-timeout" in faults else timeout)
                while len(c.confirms) < count and time.monotonic() < until and not c.closing:
                    c.wait_for(None, timeout=0.1)
                if c.closing:  # the channel exception it raised: wait for close-ok, then end
                    c.wait_for("channel.close-ok", ch, timeout=2.0)
                    c.closing.discard(ch)
                    c.open_channels.discard(ch)
                    emit("error", type="ChannelError", message="confirm for an unknown delivery tag")
                    c.close()
                    return 1
                if len(c.confirms) < count:
                    c.sock.close()
                    emit("error", type="Timeout", message="confirms missing")
                    return 1
                for _, n, acked, _ in c.confirms:
                    emit("confirmed", n=n, ack=acked)
            while c.blocked and "ignore-blocked" not in faults:
                c.wait_for(None, timeout=0.1)
            c.wait_for(None, timeout=0.2)
        elif workload in ("consume", "rpc"):
            if int(opts["prefetch"]):
                if "pipeline" in faults:
                    c.method(ch, spec.BasicQos(0, int(opts["prefetch"]), False))
                else:
                    c.call(ch, spec.BasicQos(0, int(opts["prefetch"]), False), "basic.qos-ok")
            if workload == "rpc":
                own = "amq.gen-client-1" if "amq-queue-name" in faults else ""  # the fault: a reserved name
                queue = str(c.call(ch, spec.QueueDeclare(0, own, False, False, True, True, False, {}),
                                   "queue.declare-ok").method.queue)
                count, ack = 1, False
            tag = str(c.call(ch, spec.BasicConsume(0, queue, "", False, not ack, False, False, {}),
                             "basic.consume-ok").method.consumer_tag)
            if "duplicate-consumer-tag" in faults:
                c.call(ch, spec.BasicConsume(0, queue, tag, False, not ack, False, False, {}), "basic.consume-ok")
            if workload == "rpc":
                c.publish(ch, body, spec.BasicProperties(reply_to=queue, correlation_id="1"), key=key)
                emit("published", n=1)
            until = time.monotonic() + timeout
            while len(c.deliveries) < count and time.monotonic() < until and not c.cancelled:
                c.wait_for(None, timeout=0.1)
            if len(c.deliveries) < count and not c.cancelled:
                emit("error", type="Timeout", message="deliveries missing")
            for n, (dch, m, data) in enumerate(c.deliveries[:count], 1):
                if m.method.redelivered and "drop-redelivered" in faults:
                    continue
                if not c.settle(dch, n, int(m.method.delivery_tag), ack):
                    continue
                emit("delivered", n=n, body=data.decode("utf-8", "replace"), redelivered=bool(m.method.redelivered))
            if not c.cancelled:
                cancel_tag = tag + "-other" if "cancel-wrong-tag" in faults else tag
                c.cancelling = True
                c.call(ch, spec.BasicCancel(cancel_tag, False), "basic.cancel-ok")
                c.cancelling = False
        elif workload == "get":
            for _ in range(count):
                c.method(ch, spec.BasicGet(0, queue, not ack))
                until = time.monotonic() + timeout
                before, empties = len(c.deliveries), c.empties
                got = None
                while time.monotonic() < until and got is None and ch in c.open_channels:  # a closed channel answers no get
                    got = c.wait_for(None, timeout=0.1)
                    if c.empties > empties:
                        emit("empty")
                        break
                    if len(c.deliveries) > before:
                        dch, m, data = c.deliveries[-1]
                        if m.method.redelivered and "drop-redelivered" in faults:
                            break
                        if c.settle(dch, len(c.deliveries), int(m.method.delivery_tag), ack):
                            emit("delivered", n=1, body=data.decode("utf-8", "replace"), redelivered=False)
                        break
        elif workload == "idle":
            c.wait_for(None, timeout=timeout)
        c.close_channel(ch)
        c.close()
    except Fatal as exc:
        if exc.silent or (not c.opened and "close-method-in-handshake" not in faults):
            c.sock.close()
        else:
            try:
                c.closing_connection = True
                ids = (exc.method.CLASS_ID, exc.method.METHOD_ID) if exc.method is not None else (0, 0)
                c.method(0, spec.ConnectionClose(exc.code, exc.text, *ids))
                c.wait_for("connection.close-ok", 0, timeout=2.0)
            except (Ended, TimeoutError, Fatal, OSError):
                pass
            c.sock.close()
        emit("error", type="ProtocolError", message=exc.text or str(exc.code))
        return 1
    except (Ended, OSError, TimeoutError) as exc:
        emit("error", type=type(exc).__name__, message=str(exc))
        return 1
    emit("done")
    return 0


def main(argv: list[str]) -> int:
    opts = dict(OPTIONS)
    faults: list[str] = []
    for arg in argv[3:]:
        k, _, v = arg.partition("=")
        if k == "fault":
            faults.append(v)
        elif k in opts:
            opts[k] = v
    opts["fault"] = ",".join(faults)
    return run(argv[1], argv[2], opts)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
