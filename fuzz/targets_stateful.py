"""The stateful machines as fuzz targets: ``stateful-0-9-1`` and ``stateful-1.0``.

A stateful target has no single stimulus to draw: an example is a whole sequence of rules
on one connection (``stateful091`` / ``stateful10``), judged as it goes by the protocol's
model. So the campaign does not draw and judge examples for it; it hands the target a batch
(:meth:`StatefulTarget.run_batch`): a bounded :func:`~amqpspec.fuzz.model_runner.run_stateful`
whose examples become the campaign's ``exec`` events and whose findings go to the same
findings directory, in the same format, as every other target's. Each finding's transcript
is one connection, so ``amqpspec replay FILE URL`` re-sends its octets; ``rerun`` holds the
``amqpspec fuzz`` command that repeats the stateful run itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from amqpspec.errors import UsageError

from .model_runner import TARGET_NAMES
from .targets import FuzzTarget, register

MAX_HITS_EVENTS = 1000   # hit events sent for one known signature per batch (a count, bounded)


def _not_drawn(*_: Any) -> Any:
    raise UsageError("a stateful target runs its own state machine: use run_batch (the campaign does)")


@dataclass(frozen=True)
class StatefulTarget(FuzzTarget):
    stateful: bool = True

    def run_batch(self, worker: Any, examples: int | None, duration: float | None, seed: int) -> int:
        """Runs up to ``examples`` examples (or for ``duration`` seconds) for a campaign worker.

        Returns how many examples ran. Findings are sent as the worker's ``finding`` events,
        signatures it already knows as ``hit`` events; a broker that stopped serving ends the
        campaign unless a restart command brings it back.
        """
        from .model_runner import run_stateful

        cfg = worker.cfg
        worker.wait_broker()
        ran = 0

        def example_done() -> None:
            nonlocal ran
            ran += 1
            worker.emit("exec", worker.index, self.name, False, True)

        def on_finding(record: dict[str, Any]) -> None:
            sid = record["signature_id"]
            if sid in worker.known:
                for _ in range(min(int(record.get("count", 1)), MAX_HITS_EVENTS)):
                    worker.emit("hit", sid)
                return
            worker.known.add(sid)
            worker.emit("finding", record)

        restart = (lambda: (worker._restart(), True)[1]) if cfg.restart_command else None
        report = run_stateful(worker.target, self.protocol, examples=examples, duration=duration, seed=seed,
                              on_finding=on_finding, run_id=cfg.run_id, reply_timeout=max(cfg.window, 2.0),
                              restart=restart, cafile=cfg.cafile, insecure=cfg.insecure, known=set(worker.known),
                              on_example=example_done)
        if report.broker_dead is not None and restart is None:
            worker.shared.dead.set()
            worker.shared.stop.set()
            worker.emit("note", f"the broker stopped serving ({report.broker_dead}) and there is no "
                                "--restart-command: the campaign ends")
        return ran


for _protocol, _name in TARGET_NAMES.items():
    register(StatefulTarget(
        name=_name, protocol=_protocol, start="connection",
        description="state machine over one connection, judged against a model of the broker "
                    + ("(channels, consumers, delivery tags, prefetch, transactions)" if _protocol == "0-9-1"
                       else "(sessions, links, credit, drain, deliveries)"),
        build=_not_drawn, runner=_not_drawn))
