"""``amqpspec fuzz --as-server``: the hostile-broker campaign against one client library.

Each example is drawn (seeded: the same seed gives the same examples, in the same order) from
the protocol's generator, played by the listening peer against the client launched through
its driver, and judged by :mod:`fuzz.server_oracles`. A problem is stored through the one
writer of finding files (:class:`fuzz.findings.FindingStore`), deduplicated by its signature
(target ``<driver>/<kind>``, violation, code, reaction, the point in the conversation, the
clauses).

A server-side finding is an ordinary finding file with one key more, ``server``: the driver,
workload and options the example ran with, the index of the first hostile frame in the
transcript and the required reaction, which ``amqpspec replay FINDING --driver NAME`` needs.
Its transcript is written the way every transcript file is (``send`` is what the *client*
sent, ``recv`` what the broker -- here amqpspec -- sent), so ``capture export`` makes a pcap
with the client on the client's side. ``target_url`` is ``--driver=NAME`` (there is no broker
URL), which makes the stored ``replay`` command the right one.
"""
from __future__ import annotations

import re
import secrets
import shlex
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from amqpspec.client.drivers import DriverSpec
from amqpspec.secrets import SCRUBBER
from amqpspec.transcript import Transcript

from . import draw
from .campaign import derive_seed
from .findings import FindingStore, Signature, make_finding
from .oracles import Verdict
from .server_example import Example
from .server_oracles import Run, judge

SERVER_KEY = "server"


@dataclass
class ServerConfig:
    protocol: str
    driver: DriverSpec
    seed: int
    examples: int | None = None
    duration: float | None = None
    findings_dir: str = "findings"
    rss_limit: int = 512 << 20          # octets
    deadline_s: float = 8.0             # one example, driver start to driver end
    driver_timeout: int = 3             # the driver's own per-wait timeout option
    driver_cmd: str | None = None       # --driver-cmd, for the replay command
    kinds: tuple[str, ...] = ()         # default: every kind of the protocol


@dataclass
class ServerStats:
    execs: int = 0
    not_reached: int = 0                # examples whose point the conversation never reached
    findings: dict[str, dict[str, Any]] = field(default_factory=dict)
    new: set[str] = field(default_factory=set)
    hits: dict[str, int] = field(default_factory=dict)
    by_kind: dict[str, int] = field(default_factory=dict)
    elapsed: float = 0.0


def strategy_for(protocol: str, kinds: tuple[str, ...] = ()) -> Any:
    if protocol == "1.0":
        from . import server_strategies10 as gen
    else:
        from . import server_strategies091 as gen  # type: ignore[no-redef]
    unknown = [k for k in kinds if k not in gen.KINDS]
    if unknown:
        from amqpspec.errors import UsageError

        raise UsageError(f"unknown kind(s) {', '.join(unknown)}; {protocol} has {', '.join(gen.KINDS)}")
    return gen.examples(kinds or gen.KINDS)


def executor_for(cfg: ServerConfig) -> Any:
    if cfg.protocol == "1.0":
        from .server_exec10 import Executor10

        return Executor10(cfg.driver, deadline_s=cfg.deadline_s, driver_timeout=cfg.driver_timeout)
    from .server_exec091 import Executor091

    return Executor091(cfg.driver, deadline_s=cfg.deadline_s, driver_timeout=cfg.driver_timeout)


def driver_option(cfg: ServerConfig) -> str:
    """How the replay command names the client: ``--driver=NAME`` or ``--driver-cmd=...``."""
    if cfg.driver_cmd:
        return f"--driver-cmd={cfg.driver_cmd}"
    return f"--driver={cfg.driver.name}"


class ServerCampaign:
    def __init__(self, cfg: ServerConfig, on_line: Callable[[str], None] | None = None) -> None:
        self.cfg = cfg
        self.store = FindingStore(cfg.findings_dir)
        self.stats = ServerStats()
        self.on_line = on_line or (lambda s: None)
        self.library_version = cfg.driver.library_version()
        # a fresh password per run, given to the driver in its URL and shown nowhere
        self.password = secrets.token_urlsafe(12)
        SCRUBBER.register(self.password)

    def run(self) -> ServerStats:
        cfg = self.cfg
        drawer = draw.Drawer(strategy_for(cfg.protocol, cfg.kinds), derive_seed(cfg.seed, "as-server", cfg.protocol))
        executor = executor_for(cfg)
        t0 = time.monotonic()
        stop_at = t0 + cfg.duration if cfg.duration else None
        while True:
            if cfg.examples is not None and self.stats.execs >= cfg.examples:
                break
            if stop_at is not None and time.monotonic() >= stop_at:
                break
            example, _ = drawer.draw()
            run, transcript = executor.run(example, self.password)
            self.stats.execs += 1
            self.stats.by_kind[example.kind] = self.stats.by_kind.get(example.kind, 0) + 1
            if not run.injected:
                self.stats.not_reached += 1
            verdict = judge(run, example.expect, cfg.rss_limit, cfg.protocol)
            if not verdict.ok:
                self._store(example, run, verdict, transcript)
        self.stats.elapsed = time.monotonic() - t0
        return self.stats

    def _store(self, example: Example, run: Run, verdict: Verdict, transcript: Transcript) -> None:
        cfg = self.cfg
        sig = Signature(cfg.protocol, f"{cfg.driver.name}/{example.kind}", str(verdict.violation), verdict.code,
                        verdict.condition, example.point, tuple(verdict.clauses))
        entries, hostile = capture_entries(transcript)
        finding = make_finding(
            sig, broker={"product": cfg.driver.library or cfg.driver.name, "version": self.library_version,
                         "platform": cfg.driver.language},
            target_url=driver_option(cfg), seed=cfg.seed, run_id=f"as-server-{cfg.seed}",
            clauses=list(verdict.clauses), input_hex=hostile.hex(),
            input_summary=f"{example.describe()} -- {verdict.reason}"[:2000], transcript=entries)
        finding[SERVER_KEY] = server_record(cfg, example, run)
        rec, new = self.store.record(finding)
        sid = rec["signature_id"]
        self.stats.findings[sid] = rec
        self.stats.hits[sid] = self.stats.hits.get(sid, 0) + 1
        if new:
            self.stats.new.add(sid)
            self.on_line(f"new finding {sid}: {sig.describe()} -- {verdict.reason[:300]}")


def server_record(cfg: ServerConfig, example: Example, run: Run) -> dict[str, Any]:
    executor = executor_for(cfg)
    return {"driver": cfg.driver.name, "driver_cmd": cfg.driver_cmd, "protocol": cfg.protocol,
            "workload": example.workload, "options": executor.options(example), "kind": example.kind,
            "point": example.point, "example": example.describe(), "heartbeats": example.heartbeats,
            "expect": example.expect.to_json() if example.expect is not None else None,
            "inject_entry": run.inject_entry, "deadline_s": cfg.deadline_s}


_ACCEPTED = re.compile(r"^accepted a connection from ")
_PEER_CLOSED = re.compile(r"^socket closed \((fin|rst|tls-error)")
_WE_CLOSED = re.compile(r"^socket closed \(local")


def capture_entries(transcript: Transcript) -> tuple[list[dict[str, Any]], bytes]:
    """The transcript in the convention of transcript files (``send``: the client's octets,
    ``recv``: the broker's), and the octets of the hostile frames (the finding's input)."""
    out: list[dict[str, Any]] = []
    hostile = bytearray()
    for e in transcript.to_json():
        e = dict(e)
        text = str(e.get("summary", ""))
        if e["dir"] == "send":
            e["dir"] = "recv"
            if "[hostile" in text:
                hostile += bytes.fromhex(e.get("hex") or "")
        elif e["dir"] == "recv":
            e["dir"] = "send"
        elif _ACCEPTED.match(text):
            e["summary"] = "connected to 127.0.0.1:5672 (amqpspec played the broker; " + text + ")"
        elif _PEER_CLOSED.match(text):
            e["summary"] = "client " + text[len("socket "):]
        elif _WE_CLOSED.match(text):
            e["summary"] = "socket closed (fin) by amqpspec at the end of the example"
        out.append(e)
    return out, bytes(hostile)


def summary_lines(stats: ServerStats, cfg: ServerConfig, again: str) -> list[str]:
    out = [f"examples per kind: {', '.join(f'{k} {n}' for k, n in sorted(stats.by_kind.items()))}"]
    if stats.not_reached:
        out.append(f"{stats.not_reached} example(s) never reached their point (the client stopped before it)")
    for sid, rec in sorted(stats.findings.items(), key=lambda kv: kv[1]["signature"]["target"]):
        sig = rec["signature"]
        mark = "new" if sid in stats.new else "again"
        what = sig["violation"] + (f" {sig['code']}" if sig["code"] is not None else "") + \
            (f" ({sig['condition']})" if sig["condition"] else "")
        out.append(f"  {mark:5} {sid}  {sig['target']}: {what} at {sig['state']}  x{stats.hits.get(sid, 0)}  "
                   f"{', '.join(rec['clauses']) or 'robustness'}")
        out.append(f"        replay: {rec['replay']}")
    rate = stats.execs / stats.elapsed if stats.elapsed else 0.0
    verdict = "no findings" if not stats.findings else f"{len(stats.findings)} finding(s), {len(stats.new)} new"
    out.append(f"{stats.execs} examples in {stats.elapsed:.1f}s ({rate:.2f}/s): {verdict}  (seed {cfg.seed}; "
               f"same again: {again})")
    return out


def again_command(cfg: ServerConfig) -> str:
    args = ["amqpspec", "fuzz", "--as-server", "--protocol", cfg.protocol]
    args += ["--driver-cmd", cfg.driver_cmd] if cfg.driver_cmd else ["--driver", cfg.driver.name]
    args += ["--seed", str(cfg.seed), "--findings", cfg.findings_dir]
    if cfg.examples:
        args += ["--examples", str(cfg.examples)]
    if cfg.duration:
        args += ["--duration", f"{cfg.duration:g}s"]
    if cfg.rss_limit != 512 << 20:
        args += ["--rss-limit", str(cfg.rss_limit >> 20)]
    return shlex.join(args)


__all__ = ["ServerConfig", "ServerCampaign", "ServerStats", "capture_entries", "summary_lines", "again_command",
           "SERVER_KEY", "strategy_for", "executor_for"]
