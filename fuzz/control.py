"""The control pair: a well-behaved producer and consumer beside every campaign.

While the fuzzer attacks the broker on other connections, a producer publishes
sequence-numbered messages to a queue (0-9-1) or address (1.0) of the campaign's own, one
every ``INTERVAL`` seconds, and a consumer on another connection receives them. The broker
must lose none of them and keep their order (a single queue is a single content path, 0-9-1
4.7): a gap, a message out of order, the control connections dropped by a broker that still
serves, or messages still missing when the campaign ends, is a finding (``control-loss``, or
``invariant`` for order). Messages in flight when the broker was restarted after a crash are
not counted: that crash is already a liveness finding.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

from amqpspec import brokerops
from amqpspec.peer.base import Closed, PeerError
from amqpspec.target import Target
from amqpspec.transcript import Entry, Transcript

from .findings import Signature, make_finding

INTERVAL = 0.05           # seconds between two control messages
DRAIN_S = 3.0             # how long the consumer may take to deliver the last messages at the end
KEEP_ENTRIES = 300        # transcript entries kept (the most recent ones)
SETTLE_S = 5.0            # after a control connection drops: time for a crash to be detected elsewhere


class RecentTranscript(Transcript):
    """A transcript that keeps only the most recent entries: the control pair runs for hours."""

    def __init__(self, keep: int = KEEP_ENTRIES) -> None:
        super().__init__()
        self._recent: deque[Entry] = deque(maxlen=keep)
        self.entries = self._recent  # type: ignore[assignment]

    def add(self, direction: str, data: bytes, summary: str, conn: int = 0, redacted: bool = False) -> None:
        self._recent.append(Entry(time.monotonic() - self.start, direction, bytes(data[:256]), summary, conn, redacted))

    def to_json(self) -> list[dict[str, Any]]:
        return [e.to_json() for e in self._recent]


class ControlLost(Exception):
    """A control connection ended or refused a step."""


class _Pair:
    """What the 0-9-1 and 1.0 pairs share: the consumer's receive loop. Subclasses say what an
    item means (``_refused``: a close/refusal of the consumer; ``_number``: a control message's
    sequence number, None for other items)."""

    cons: Any

    def receive(self, timeout: float) -> list[int]:
        """Sequence numbers delivered to the consumer within ``timeout`` seconds."""
        got: list[int] = []
        stop = time.monotonic() + timeout
        while (left := stop - time.monotonic()) > 0:
            item = self.cons.recv(left)
            if item is None:
                break
            if isinstance(item, Closed):
                raise ControlLost(f"consumer connection ended: {item.summary()}")
            if self._refused(item):
                raise ControlLost(f"consumer refused: {item.summary()}")
            seq = self._number(item)
            if seq is not None:
                got.append(seq)
        return got

    def _refused(self, item: Any) -> bool:
        raise NotImplementedError

    def _number(self, item: Any) -> int | None:
        raise NotImplementedError


class _Pair091(_Pair):
    """Producer and consumer over AMQP 0-9-1 (raw peers, auto-ack consumer)."""

    def __init__(self, target: Target, name: str, transcript: Transcript) -> None:
        self.target, self.queue, self.transcript = target, name, transcript
        self.prod: Any = None
        self.cons: Any = None

    def open(self) -> None:
        from amqpspec.peer.amqp091 import Peer
        from amqpspec.wire.amqp091 import MethodFrame, spec

        far = time.monotonic() + 10 ** 7
        self.prod = Peer.connect(self.target, self.transcript, far)
        self.prod.handshake()
        self.prod.open_channel(1)
        self.cons = Peer.connect(self.target, self.transcript, far)
        self.cons.handshake()
        self.cons.open_channel(1)
        # auto-delete: the queue of a pair that dropped goes with its consumer (the next pair has its own)
        self.cons.call(1, spec.QueueDeclare(queue=self.queue, durable=False, exclusive=False, auto_delete=True))
        self.cons.call(1, spec.BasicConsume(queue=self.queue, consumer_tag="amqpspec-control", no_ack=True))
        self._frame = MethodFrame

    def publish(self, seq: int) -> bool:
        """Publishes message ``seq``; True when it was sent."""
        from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, MethodFrame, spec

        body = str(seq).encode()
        ok = self.prod.send(MethodFrame(1, spec.BasicPublish(exchange="", routing_key=self.queue)),
                            HeaderFrame(1, 60, len(body), spec.BasicProperties(delivery_mode=1)), BodyFrame(1, body))
        self._check(self.prod, 0.001)
        if not ok or self.prod.link.closed is not None:
            raise ControlLost(f"producer connection ended: {self.prod.link.closed or self.prod.link.send_failed}")
        return True

    def _refused(self, item: Any) -> bool:
        from amqpspec.wire.amqp091 import MethodFrame

        return isinstance(item, MethodFrame) and item.method.NAME in ("connection.close", "channel.close")

    def _number(self, item: Any) -> int | None:
        from amqpspec.wire.amqp091 import BodyFrame

        if isinstance(item, BodyFrame):
            try:
                return int(bytes(item.data))
            except ValueError:
                pass
        return None

    def _check(self, peer: Any, timeout: float) -> None:
        from amqpspec.wire.amqp091 import MethodFrame

        item = peer.recv(timeout)
        if isinstance(item, Closed):
            raise ControlLost(f"producer connection ended: {item.summary()}")
        if isinstance(item, MethodFrame) and item.method.NAME in ("connection.close", "channel.close"):
            raise ControlLost(f"producer refused: {item.summary()}")

    def close(self, delete: bool) -> None:
        from amqpspec.wire.amqp091 import MethodFrame, spec

        if delete and self.cons is not None:
            try:
                self.cons.send(MethodFrame(1, spec.QueueDelete(queue=self.queue)))
                self.cons.recv(0.5)
            except (PeerError, OSError):
                pass
        for p in (self.prod, self.cons):
            if p is not None:
                p.close(timeout=0.5)


class _Pair10(_Pair):
    """Producer and consumer over AMQP 1.0 (sender link; receiver link the broker pre-settles)."""

    CREDIT = 1000
    WAIT = 3.0

    def __init__(self, target: Target, name: str, transcript: Transcript) -> None:
        self.target, self.address, self.transcript = target, name, transcript
        self.prod: Any = None
        self.cons: Any = None
        self.delivery = 0
        self.received = 0

    def open(self) -> None:
        from amqpspec.peer.amqp10 import Peer
        from amqpspec.wire.amqp10 import spec

        far = time.monotonic() + 10 ** 7
        self.cons = Peer.connect(self.target, self.transcript, far)
        self.cons.handshake()
        self.cch, _ = self.cons.begin()
        self.rh, _ = self.cons.attach(self.cch, name=f"{self.address}-rcv", role=spec.Role.RECEIVER,
                                      source=spec.Source(address=self.address), target=spec.Target(),
                                      snd_settle_mode=spec.SenderSettleMode.SETTLED)
        self._credit()
        self.prod = Peer.connect(self.target, self.transcript, far)
        self.prod.handshake()
        self.pch, _ = self.prod.begin()
        self.sh, _ = self.prod.attach(self.pch, name=f"{self.address}-snd", role=spec.Role.SENDER,
                                      source=spec.Source(), target=spec.Target(address=self.address))
        self.credit = 0
        if not self._await_credit(3.0):
            raise ControlLost("the broker granted the control producer no credit")

    def _await_credit(self, timeout: float) -> bool:
        """Reads the producer's frames until the broker grants credit (a correct sender waits)."""
        stop = time.monotonic() + timeout
        while self.credit <= 0 and (left := stop - time.monotonic()) > 0:
            self._producer_frame(self.prod.recv(left))
        return self.credit > 0

    def _producer_frame(self, item: Any) -> None:
        if item is None:
            return
        if isinstance(item, Closed):
            raise ControlLost(f"producer connection ended: {item.summary()}")
        perf = getattr(item, "performative", None)
        name = getattr(perf, "NAME", "")
        if name in ("close", "end", "detach"):
            raise ControlLost(f"producer refused: {item.summary()}")
        if name == "flow" and getattr(perf, "handle", None) == self.sh and perf.link_credit is not None:
            self.credit = int(perf.link_credit) - (self.delivery - int(perf.delivery_count or 0))

    def _credit(self) -> None:
        from amqpspec.wire.amqp10 import AMQPFrame, spec

        self.cons.send(AMQPFrame(self.cch, spec.Flow(next_incoming_id=0, incoming_window=65535, next_outgoing_id=0,
                                                     outgoing_window=65535, handle=self.rh,
                                                     delivery_count=self.received, link_credit=self.CREDIT)))

    def publish(self, seq: int) -> bool:
        """Publishes message ``seq`` when the broker gives credit; False when it has given none
        for a while. Withholding credit is the receiver's right (2.6.7), not a loss: the pair
        just publishes later."""
        from amqpspec.wire.amqp10 import AMQPFrame, Message, spec

        self._producer_frame(self.prod.recv(0.001))
        if self.credit <= 0 and not self._await_credit(self.WAIT):
            return False
        t = spec.Transfer(handle=self.sh, delivery_id=self.delivery, delivery_tag=f"c{seq}".encode(),
                          message_format=0, settled=True)
        self.delivery += 1
        self.credit -= 1
        if not self.prod.send(AMQPFrame(self.pch, t, Message(body=str(seq).encode()).encode())):
            raise ControlLost(f"producer connection ended: {self.prod.link.send_failed}")
        return True

    def _refused(self, item: Any) -> bool:
        return getattr(getattr(item, "performative", None), "NAME", "") in ("close", "end", "detach")

    def _number(self, item: Any) -> int | None:
        from amqpspec.wire.amqp10 import Message

        if getattr(getattr(item, "performative", None), "NAME", "") != "transfer":
            return None
        self.received += 1  # every transfer uses credit, readable or not
        if self.received % (self.CREDIT // 2) == 0:
            self._credit()
        try:
            body = Message.decode(bytes(item.payload)).body
            data = body[0].value if isinstance(body, list) else getattr(body, "value", body)
            return int(bytes(data))
        except (ValueError, TypeError, AttributeError, IndexError):
            return None

    def close(self, delete: bool) -> None:
        for p in (self.prod, self.cons):
            if p is not None:
                p.close(timeout=0.5)


class ControlPair:
    """Runs the pair in a thread; reports findings as campaign events."""

    def __init__(self, target: Target, protocol: str, cfg: Any, events: Any, shared: Any, *, window: float = 2.0) -> None:
        self.target = target
        self.protocol = protocol
        self.cfg = cfg
        self.events = events
        self.shared = shared
        self.window = window
        self.name = f"amqpspec-fuzzctl-{cfg.run_id[:12]}"
        self.transcript = RecentTranscript()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fuzz-control", daemon=True)
        self._final: list[tuple[Any, ...]] = []
        self.published = 0
        self.received = 0
        self.lost = 0
        self.opens = 0            # pairs opened so far (each on its own node)

    def start(self) -> None:
        self._thread.start()

    def stop(self, drain: bool = True) -> list[tuple[Any, ...]]:
        """Ends the pair (after letting the last messages arrive, with ``drain``); returns the
        findings of the end (missing messages) as events."""
        self._drain = drain
        self._stop.set()
        self._thread.join(timeout=DRAIN_S + 10)
        return self._final

    # -- the loop ------------------------------------------------------------------------------
    def _pair(self) -> Any:
        """A new pair, on a queue or address of its own: a pair that dropped can leave messages it
        published but never consumed in its node, and the new pair numbers from 0 again (seen: a
        1.0 pair reopened on the Proton example broker took the old pair's message 0 as a
        duplicate of its own)."""
        self.opens += 1
        cls = _Pair091 if self.protocol == "0-9-1" else _Pair10
        return cls(self.target, self.name if self.opens == 1 else f"{self.name}-{self.opens}", self.transcript)

    def _run(self) -> None:
        pair = None
        expected = 0          # next sequence number the consumer should see
        seq = 0
        epoch = self.shared.epoch.value
        try:
            while not self._stop.is_set():
                if pair is None:
                    if not self.shared.broker_ok.wait(0.5):
                        continue
                    epoch = self.shared.epoch.value
                    pair = self._pair()
                    try:
                        pair.open()
                    except (PeerError, OSError, ControlLost) as exc:
                        pair.close(False)
                        pair = None
                        self._note(f"control pair could not start: {exc}")
                        self._stop.wait(1.0)
                        continue
                    seq = expected = 0
                try:
                    if pair.publish(seq):
                        seq += 1
                        self.published += 1
                    for got in pair.receive(INTERVAL):
                        expected = self._check(got, expected)
                except (PeerError, OSError, ControlLost) as exc:
                    self._dropped(str(exc), epoch)
                    pair.close(False)
                    pair = None
            if pair is not None and getattr(self, "_drain", True):
                try:
                    stop = time.monotonic() + DRAIN_S
                    while expected < seq and time.monotonic() < stop:
                        for got in pair.receive(min(0.2, max(0.0, stop - time.monotonic()))):
                            expected = self._check(got, expected)
                    if expected < seq and self.shared.epoch.value == epoch:
                        self._finding("control-loss", f"{seq - expected} control message(s) (sequence {expected} to "
                                                      f"{seq - 1}) published but not delivered {DRAIN_S:.0f}s after the "
                                                      "last one", final=True)
                except (PeerError, OSError, ControlLost) as exc:
                    self._dropped(str(exc), epoch, final=True)
        finally:
            if pair is not None:
                pair.close(True)

    def _check(self, got: int, expected: int) -> int:
        self.received += 1
        if got == expected:
            return expected + 1
        if got > expected:
            self.lost += got - expected
            self._finding("control-loss", f"control messages {expected} to {got - 1} lost: the consumer received "
                                          f"{got} after {expected - 1}")
            return got + 1
        self._finding("invariant", f"control message {got} delivered again or out of order after {expected - 1} "
                                   "(one queue, one producer, one consumer)", clauses=("amqp091:4.7/1",)
                      if self.protocol == "0-9-1" else ())
        return expected

    def _dropped(self, why: str, epoch: int, final: bool = False) -> None:
        """A control connection ended: a finding only if the broker did not crash meanwhile."""
        waited = time.monotonic() + SETTLE_S
        while time.monotonic() < waited and not self._stop.is_set():
            if self.shared.epoch.value != epoch or not self.shared.broker_ok.is_set():
                return
            time.sleep(0.1)
        if self.shared.epoch.value != epoch or self.shared.dead.is_set():
            return
        if brokerops.problem(self.target, self.protocol):
            return  # the broker is down: a liveness finding of whichever example did it
        self._finding("control-loss", f"a control connection ended while the broker still serves: {why}", final=final)

    # -- reporting ------------------------------------------------------------------------------
    def _note(self, text: str) -> None:
        self.events.put(("note", text))

    def _finding(self, violation: str, reason: str, *, clauses: tuple[str, ...] = (), final: bool = False) -> None:
        sig = Signature(self.protocol, "control", violation, None, None, "campaign")
        record = make_finding(sig, broker=self.cfg.broker.identity(), target_url=self.target.url(), seed=self.cfg.seed,
                              run_id=self.cfg.run_id, clauses=list(clauses), input_hex="",
                              input_summary=f"control pair ({self.name}): {reason}",
                              transcript=self.transcript.to_json())
        event = ("finding", record)
        if final:
            self._final.append(event)
        else:
            self.events.put(event)
