"""The 4.3 fairness cases (conformance/amqp091/s4_3_channel_fairness.py) fail a broker that writes
one channel's whole backlog before anything of another channel: a fake that answers basic.consume
with every queued message at once, first come first served (the queue and publish bookkeeping of
tests/support/hostile_restart.py, with no restart)."""
from __future__ import annotations

from pathlib import Path

from amqpspec.case import discover, select
from amqpspec.result import Verdict
from amqpspec.runner import Runner, RunOptions
from amqpspec.target import Target
from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, MethodFrame, spec
from tests.support.hostile import HostileServer
from tests.support.hostile_restart import Forgetful


class FirstComeFirstServed(Forgetful):
    """Writes a consumer's whole backlog in one go when it starts consuming."""

    def answer(self, frame: MethodFrame) -> tuple[list[bytes], bool]:
        m, ch = frame.method, frame.channel
        if m.NAME != "basic.consume":
            return super().answer(frame)
        with self.lock:
            count, self.queues[m.queue] = self.queues.get(m.queue, 0), 0
        out = [MethodFrame(ch, spec.BasicConsumeOk(f"ctag-{ch}")).encode()]
        for tag in range(1, count + 1):
            out += [MethodFrame(ch, spec.BasicDeliver(f"ctag-{ch}", tag, False, "", m.queue)).encode(),
                    HeaderFrame(ch, 60, 1, spec.BasicProperties()).encode(), BodyFrame(ch, b"x").encode()]
        return [b"".join(out)], False


def test_a_broker_serving_one_channel_to_the_end_first_warns_in_both_cases(tmp_path: Path) -> None:
    fake = FirstComeFirstServed(tmp_path / "never", "nothing")
    cases = select(discover("0-9-1"), ["amqp091/4.3/busy-*"], [])
    assert len(cases) == 2
    with HostileServer(fake.behaviour) as server:
        results = Runner(Target.parse(server.url), cases, RunOptions(seed=1, jobs=2)).run()
    assert {r.case: r.verdict for r in results} == {c.id: Verdict.WARNING for c in cases}, \
        [(r.case, r.reason) for r in results]
