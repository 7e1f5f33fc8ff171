"""The runner of client-role cases: the broker-side Runner, with what differs in this role.

Verdicts, deadlines, transcripts and the result record are the broker runner's. What
differs: no liveness probe or cleanup of a broker (there is none: we are the broker), one
case at a time (each case's client connects to the one listening peer, so two cases must
not wait for a connection at once), results that say which role and library they judge,
the close verdict told from the client's side, and a replay command for ``amqpspec client``.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from amqpspec.case import CaseSpec, Context
from amqpspec.client.session import ClientTarget
from amqpspec.result import Result, clean_record
from amqpspec.runner import Runner


@dataclass
class ClientResult(Result):
    """A result record of a client case: the keys of every record, and whose conduct it judges."""

    role: str = "client"
    driver: str = ""
    library: str = ""
    library_version: str = ""


class ClientRunner(Runner):
    def __init__(self, target: ClientTarget, cases: list[CaseSpec], options: Any, **kwargs: Any) -> None:
        options.liveness = False
        if not target.per_case_listen:  # one listening port: one case waits for a connection at a time
            options.jobs = 1
        super().__init__(target, cases, options, **kwargs)
        self.client: ClientTarget = target

    def _cleanup(self, ctx: Context) -> None:  # nothing was declared on any broker
        return

    def _result(self, c: CaseSpec, ctx: Context, verdict: Any, reason: str, duration: float, started_at: str) -> Result:
        base = super()._result(c, ctx, verdict, reason, duration, started_at)
        if base.close.who == "broker":  # close_info names the peer observed: here, the client
            base.close.who = "client"
        elif base.close.who == "none":  # a case that judged by its own record: how the socket ended
            ended = [peer.link.closed for peer in ctx.peers if getattr(peer, "link", None) is not None
                     and peer.link.closed is not None and peer.link.closed.how in ("fin", "rst")]
            if ended:
                base.close.who, base.close.how = "client", ended[0].how
        driver = self.client.driver
        record = base.to_json()
        record.update(role="client", driver=driver.name if driver else "external",
                      library=driver.library if driver else "", library_version=self.client.library_version)
        cleaned = clean_record(record)
        out = ClientResult.from_json({**cleaned, "verdict": base.verdict.value})
        assert isinstance(out, ClientResult)
        return out

    def skipped(self, reason: str) -> list[Result]:
        """Every case as skipped for ``reason`` (a driver whose library is not usable): the run
        still reports each case, so a matrix of libraries shows why one has no verdicts."""
        import datetime as _dt
        import time as _time

        from amqpspec.result import Verdict

        out = []
        for c in self.cases:
            self.on_start(c.id)
            ctx = Context(c, self.target, _time.monotonic(), 0, self.options.run_id)
            started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
            r = self._result(c, ctx, Verdict.SKIPPED, reason, 0.0, started)
            self.on_result(r)
            out.append(r)
        return out

    def replay_command(self, c: CaseSpec) -> str:
        driver = self.client.driver
        if driver is None:
            args = ["amqpspec", "serve", "--protocol", c.protocol, "--case", c.id]
        elif driver.name == "custom":
            args = ["amqpspec", "client", "--protocol", c.protocol, "--driver-cmd", shlex.join(driver.command),
                    "--case", c.id]
        else:
            args = ["amqpspec", "client", "--protocol", c.protocol, "--driver", driver.name, "--case", c.id]
        return shlex.join(args + ["--seed", str(self.options.seed), "-v"])
