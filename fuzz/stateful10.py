"""Stateful fuzzing of an AMQP 1.0 broker: a hypothesis RuleBasedStateMachine over one connection.

Each example opens one connection through the raw peer (``amqpspec.peer.amqp10.Peer``, so
every frame is in the transcript, SASL masked) and runs a sequence of rules: begin and end
sessions, attach and detach (or close) sending and receiving links on nodes named with the
run's own prefix, transfer messages (settled or not, bodies from empty to several frames),
grant, withdraw and drain link credit, settle received deliveries (accepted or released),
and *interleave* transfers of several links frame by frame in one write. Everything the
broker sends goes to :class:`~amqpspec.fuzz.model10.Model10`, which knows what the spec
allows; a violation fails the example and hypothesis shrinks it to a minimal sequence.

The machine is a correct peer itself: it sends only within the credit and session window the
broker granted, numbers transfers and deliveries as 2.5.6 and 2.7.5 require, and answers an
unsolicited end, detach or close as the spec asks, so that whatever goes wrong is the
broker's doing. max-frame-size is proposed at 4096 so that bodies of a few KiB span frames.

Run it with :func:`amqpspec.fuzz.model_runner.run_stateful` (``protocol="1.0"``), or as the
fuzz target ``stateful-1.0``.
"""
from __future__ import annotations

import time
import uuid
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from amqpspec.peer.amqp10 import Peer, performative_name
from amqpspec.peer.base import Closed, PeerError
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, Message, describe, spec, transfer_frames

from .model import Violation
from .model10 import SOFT, Model10, bare_of
from .model_runner import RunConfig
from .stateful_base import StatefulMachine, round_robin

TARGET = "stateful-1.0"
PROTOCOL = "1.0"
FRAME_MAX = 4096            # proposed max-frame-size: bodies of a few KiB span transfer frames
CHANNELS = 4                # session channels the rules use (reused after end)
NODES = 2                   # nodes per example
WINDOW = 2048               # our session windows
PAUSE = 0.05                # how long "pause" lets deliveries arrive
CREDIT_WAIT = 0.3           # how long a transfer waits for the broker's first credit
EXAMPLE_BUDGET = 120.0      # hard deadline of one example's connection
PICK = st.integers(0, 255)  # an index into whatever exists when the rule runs
APP_KEY = r"[a-z][a-z0-9_-]{0,11}"


def _body(msg_id: str, size: int) -> bytes:
    seed = (msg_id + ":").encode()
    return (seed * (size // len(seed) + 1))[:size]


def build_machine(cfg: RunConfig) -> type[RuleBasedStateMachine]:
    """A machine class bound to one run (target, budget, known signatures)."""
    room = FRAME_MAX - 64   # about what one transfer frame carries after its performative
    body_sizes = st.one_of(st.integers(0, 64), st.sampled_from([room - 1, room, room + 1, 2 * room]),
                           st.integers(0, 3 * FRAME_MAX))
    app_props = st.dictionaries(st.from_regex(APP_KEY, fullmatch=True),
                                st.one_of(st.integers(-(1 << 31), (1 << 31) - 1), st.text(max_size=12), st.booleans()),
                                max_size=3)
    delivery = st.fixed_dictionaries({
        "size": body_sizes, "settled": st.booleans(),
        "props": st.one_of(st.none(), st.none(), st.none(), app_props),
    })
    token = uuid.uuid4().hex[:6]
    prefix = f"amqpspec-fuzz-{cfg.run_id[:8]}-sf"

    class Stateful10(StatefulMachine):
        PROTOCOL, TARGET = PROTOCOL, TARGET
        TRUST_PASSED_LOST_PROBE = True

        def __init__(self) -> None:
            super().__init__(cfg, Model10())
            self.tags = 0
            if self.expired:
                return
            cfg.examples_run += 1
            self.nodes = [f"{prefix}-{token}-{cfg.examples_run}-n{i}" for i in range(NODES)]
            cfg.nodes.extend(self.nodes)
            self._connect()

        # -------------------------------------------------------------- connection and I/O
        def _connect(self) -> None:
            try:
                peer = Peer.connect(cfg.target, self.transcript, time.monotonic() + EXAMPLE_BUDGET)
                self.peer = peer
                peer.handshake(max_frame_size=FRAME_MAX, timeout=cfg.reply_timeout,
                               container_id=f"amqpspec-{token}-{cfg.examples_run}")
            except (PeerError, OSError) as exc:
                self.dead = True
                self._lost(f"a fresh connection failed: {exc}", handshake=True)

        def _step(self, text: str) -> None:
            super()._step(text)
            self.model.last_step = "after-" + text.split("(")[0].replace("_", "-")

        def _encode(self, frame: Any) -> bytes:
            return frame.encode()

        def _describe(self, frame: Any) -> str:
            return describe(frame)

        def _next_deadline(self, default: float) -> float:
            return self.model.next_deadline(default)

        def _stuck(self) -> bool:
            # an overdue drain is a violation of its own and traffic goes on; an unanswered request ends it
            return any(v.kind == "hang" for v in self.model.violations[self.reported:])

        def _framing_violation(self, text: str) -> tuple[tuple[str, ...], str] | None:
            if "max" in text and "frame" in text:
                return ("amqp10:2.7.1/4",), f"the broker sent a frame larger than our max-frame-size: {text}"
            return None

        def _send_close(self) -> None:
            self._step("close()")
            self.model.sent_close(time.monotonic())
            self.peer.send(AMQPFrame(0, spec.Close()))

        def _soft(self, v: Violation) -> bool:
            return v.clauses in SOFT

        def _dispatch(self, item: Any) -> None:
            m = self.model
            if isinstance(item, Closed):
                m.on_socket_closed(item.how)
                self.dead = True
                return
            if isinstance(item, EmptyFrame):
                return
            if not isinstance(item, AMQPFrame):
                cfg.anomalies[f"unexpected item from the broker: {describe(item)[:100]}"] += 1
                return
            name = performative_name(item) or "?"
            perf = item.performative
            before_closing = m.connection
            m.on_frame(item.channel, name, perf, bytes(item.payload or b""), time.monotonic())
            # a correct peer answers what the broker started (2.4.3, 2.5, 2.6.4)
            if name == "close":
                if before_closing == "open" and self.peer is not None and not self.peer.close_sent:
                    self.peer.send(AMQPFrame(0, spec.Close()))
                self.dead = True
            elif name == "end":
                ours = self._ours(item.channel, ended=True)
                if ours is not None and ours[1] == "unsolicited":
                    self.peer.send(AMQPFrame(ours[0], spec.End()))  # type: ignore[union-attr]
            elif name == "detach":
                self._answer_detach(item.channel, perf)

        def _ours(self, channel: int, ended: bool = False) -> tuple[int, str] | None:
            """Our channel of the session the broker's channel belonged to, and whether we ended it."""
            for s in self.model.sessions.values():
                if s.remote_channel == channel and s.state == "ended":
                    return s.channel, "answer" if s.ended_by_us else "unsolicited"
            return None

        def _answer_detach(self, channel: int, perf: Any) -> None:
            ours = self.model.by_remote.get(channel)
            s = self.model.sessions.get(ours) if ours is not None else None
            if s is None:
                return
            for lk in s.links.values():
                if lk.remote_handle == int(perf.handle) and lk.state == "detached" and not lk.detach_sent:
                    lk.detach_sent = True
                    self.peer.send(AMQPFrame(s.channel, spec.Detach(handle=lk.handle,  # type: ignore[union-attr]
                                                                    closed=bool(perf.closed))))

        def _next(self, what: str) -> str:
            self.counter += 1
            return f"{prefix}-{token}-{cfg.examples_run}-{what}{self.counter}"

        def _flow(self, ch: int, handle: int | None = None, **link: Any) -> AMQPFrame:
            s = self.model.sessions[ch]
            return AMQPFrame(ch, spec.Flow(next_incoming_id=s.next_incoming_id, incoming_window=WINDOW,
                                           next_outgoing_id=s.next_outgoing_id, outgoing_window=WINDOW,
                                           handle=handle, **link))

        # -------------------------------------------------------------- rules
        # As in stateful091: every rule is always enabled and draws the same shape of
        # arguments whatever the broker did; a choice among things that exist now is an index
        # taken modulo their number, and a rule with nothing to act on does nothing.
        @initialize()
        def first_session_and_links(self) -> None:
            """Every example starts with session 0, a sender and a receiver on node 0."""
            self.begin(0)
            self.attach(0, "sender", 0, 0)
            self.attach(0, "receiver", 0, 2)

        @rule(n=st.integers(0, CHANNELS - 1))
        def begin(self, n: int) -> None:
            if not self._live():
                return
            s = self.model.sessions.get(n)
            if s is not None and s.state != "ended":
                return
            self._step(f"begin({n})")
            self.model.sent_begin(n, time.monotonic())
            self._write([AMQPFrame(n, spec.Begin(next_outgoing_id=0, incoming_window=WINDOW, outgoing_window=WINDOW))])
            self._settle()

        @rule(pick=PICK)
        def end(self, pick: int) -> None:
            ch = self._pick(self.model.mapped(), pick) if self._live() else None
            if ch is None:
                return
            self._step(f"end({ch})")
            self.model.sent_end(ch, time.monotonic())
            self._write([AMQPFrame(ch, spec.End())])
            self._settle()

        @rule(pick=PICK, role=st.sampled_from(["sender", "receiver"]), node=st.integers(0, NODES - 1),
              credit=st.integers(0, 5))
        def attach(self, pick: int, role: str, node: int, credit: int) -> None:
            ch = self._pick(self.model.mapped(), pick) if self._live() else None
            if ch is None:
                return
            handle = self.model.free_handle(ch)
            name = self._next("l")
            address = self.nodes[node]
            self._step(f"attach({ch}, {role}, h{handle}, n{node}{f', credit={credit}' if role == 'receiver' else ''})")
            lk = self.model.sent_attach(ch, handle, name, role, address, time.monotonic())
            if role == "sender":
                perf = spec.Attach(name=name, handle=handle, role=spec.Role.SENDER, source=spec.Source(),
                                   target=spec.Target(address=address), initial_delivery_count=0)
            else:
                perf = spec.Attach(name=name, handle=handle, role=spec.Role.RECEIVER,
                                   source=spec.Source(address=address), target=spec.Target())
            self._write([AMQPFrame(ch, perf)])
            self._settle()
            if role == "receiver" and credit and lk.state == "attached" and not lk.refused and self._live():
                dc = self.model.sent_flow(ch, handle, credit, False, time.monotonic())
                self._write([self._flow(ch, handle, delivery_count=dc, link_credit=credit)])
                self._settle()

        def _links(self, role: str | None = None) -> list[tuple[int, int]]:
            return [(c, h) for c, h in self.model.links(role) if not self.model.sessions[c].links[h].refused]

        @rule(pick=PICK, closed=st.booleans())
        def detach(self, pick: int, closed: bool) -> None:
            found = self._pick(self.model.links(), pick) if self._live() else None
            if found is None:
                return
            ch, h = found
            self._step(f"detach({ch}, h{h}{', closed' if closed else ''})")
            self.model.sent_detach(ch, h, closed, time.monotonic())
            self.model.sessions[ch].links[h].detach_sent = True
            self._write([AMQPFrame(ch, spec.Detach(handle=h, closed=closed))])
            self._settle()

        def _delivery(self, ch: int, h: int, d: dict[str, Any]) -> tuple[list[AMQPFrame], str]:
            """The frames of one delivery on link h (numbers assigned now, in the order they are sent)."""
            msg_id = self._next("m")
            message = Message(properties=spec.Properties(message_id=msg_id), application_properties=d["props"],
                              body=_body(msg_id, d["size"]))
            payload = message.encode()
            self.tags += 1
            s = self.model.sessions[ch]
            transfer = spec.Transfer(handle=h, delivery_id=s.next_delivery_id, delivery_tag=b"d%d" % self.tags,
                                     message_format=0, settled=d["settled"] or None)
            frames = transfer_frames(ch, transfer, payload, self.peer.opened.max_frame_size)  # type: ignore[union-attr]
            self.model.sent_transfer(ch, h, msg_id, bare_of(payload), len(frames), d["settled"])
            return frames, (f"{msg_id[-6:]} {d['size']}B{' settled' if d['settled'] else ''}"
                            f"{' app-props' if d['props'] else ''}")

        def _wait_credit(self, ch: int, h: int) -> bool:
            if not self.model.room_to_send(ch, h):
                self._pump(lambda: self.model.room_to_send(ch, h) or self.model.sessions[ch].links[h].state
                           != "attached", CREDIT_WAIT)
            return self._live() and self.model.sessions[ch].links[h].state == "attached" \
                and self.model.room_to_send(ch, h)

        @rule(pick=PICK, d=delivery)
        def transfer(self, pick: int, d: dict[str, Any]) -> None:
            found = self._pick(self._links("sender"), pick) if self._live() else None
            if found is None or not self._wait_credit(*found):
                return
            ch, h = found
            frames, what = self._delivery(ch, h, d)
            self._step(f"transfer({ch}, h{h}, {what})")
            self._write(frames, f"delivery on link {h} of session {ch}")
            self._settle()

        @rule(picks=st.lists(PICK, min_size=3, max_size=3), ds=st.lists(delivery, min_size=3, max_size=3))
        def interleave(self, picks: list[int], ds: list[dict[str, Any]]) -> None:
            """Deliveries on different links, frame by frame alternately, in one write (2.6.14/2)."""
            links = self._links("sender") if self._live() else []
            chosen: list[tuple[int, int]] = []
            for p in picks:
                left = [x for x in links if x not in chosen]
                if left:
                    chosen.append(self._pick(left, p))
            chosen = [x for x in chosen if self._wait_credit(*x)]
            if len(chosen) < 2:
                return
            streams, what = [], []
            for (ch, h), d in zip(chosen, ds):
                frames, text = self._delivery(ch, h, d)
                streams.append(frames)
                what.append(f"{ch}/h{h}:{text}")
            merged = round_robin(streams)
            self._step(f"interleave({', '.join(what)})")
            self._write(merged, f"{len(chosen)} deliveries interleaved frame by frame")
            self._settle()

        @rule(pick=PICK, credit=st.integers(0, 6), drain=st.booleans(), echo=st.booleans())
        def flow(self, pick: int, credit: int, drain: bool, echo: bool) -> None:
            found = self._pick(self._links("receiver"), pick) if self._live() else None
            if found is None:
                return
            ch, h = found
            self._step(f"flow({ch}, h{h}, credit={credit}{', drain' if drain else ''}{', echo' if echo else ''})")
            dc = self.model.sent_flow(ch, h, credit, drain, time.monotonic())
            self._write([self._flow(ch, h, delivery_count=dc, link_credit=credit, drain=drain or None,
                                   echo=echo or None)])
            self._settle()

        @rule(pick=PICK, outcome=st.sampled_from(["accepted", "released"]), upto=st.booleans())
        def disposition(self, pick: int, outcome: str, upto: bool) -> None:
            live = sorted((c, d) for c, s in self.model.sessions.items() if s.state == "mapped"
                          for d in s.unsettled_in) if self._live() else []
            found = self._pick(live, pick)
            if found is None:
                return
            ch, last = found
            ids = sorted(d for c, d in live if c == ch and (d <= last if upto else d == last))
            first = ids[0]
            self._step(f"disposition({ch}, {first}..{last}, {outcome})")
            self.model.sent_disposition(ch, first, last)
            state = spec.Accepted() if outcome == "accepted" else spec.Released()
            self._write([AMQPFrame(ch, spec.Disposition(role=spec.Role.RECEIVER, first=first,
                                                       last=last if last != first else None, settled=True,
                                                       state=state))])
            self._settle()

        @rule()
        def pause(self) -> None:
            """A short wait: deliveries the broker owes arrive and are judged."""
            if not self._live():
                return
            self._step("pause()")
            self._drain(PAUSE)

    return Stateful10


__all__ = ["build_machine", "TARGET", "PROTOCOL"]
