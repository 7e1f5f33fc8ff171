"""The oracles of fuzz --as-server catch a client that crashes, hangs, grows or misreacts --
shown with scripted clients (tests/support), each also shown passing when it behaves -- and a
finding they make is stored in the findings format and replays."""
from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from amqpspec.client.drivers import DriverOutcome, DriverSpec
from amqpspec.fuzz import server_strategies091 as s091
from amqpspec.fuzz import server_strategies10 as s10
from amqpspec.fuzz.findings import validate
from amqpspec.fuzz.server_campaign import ServerCampaign, ServerConfig
from amqpspec.fuzz.server_example import Example, Expect, Item
from amqpspec.fuzz.server_exec091 import Executor091
from amqpspec.fuzz.server_exec10 import Executor10
from amqpspec.fuzz.server_oracles import Run, crash_condition, judge
from amqpspec.fuzz.server_replay import replay_server_finding
from amqpspec.peer.amqp091 import Observation
from amqpspec.wire.amqp091 import MethodFrame, spec

SUPPORT = Path(__file__).resolve().parents[1] / "support"
PY = sys.executable
START = MethodFrame(0, spec.ConnectionStart(0, 9, {"product": "amqpspec"}, b"PLAIN", b"en_US"))
PLAIN = Example("0-9-1", "server-properties", "connect", "connection.start", (Item(START),))
BAD_END = Example("0-9-1", "bad-frame-end", "connect", "channel.open-ok",
                  (Item(replace(MethodFrame(1, spec.ChannelOpenOk()), end=0), "frame-end 0x00"),),
                  expect=Expect("silent-close", (), s091.FRAME_ERROR, "a frame with an invalid frame-end"))
CLOSE = Example("0-9-1", "close-codes", "connect", "channel.open-ok",
                (Item(MethodFrame(0, spec.ConnectionClose(999, "odd", 1, 2))),),
                expect=Expect("close-ok", (), s091.CLOSE_OK, "a connection.close", channel=0))
UNATTACHED = Example("1.0", "flow-credit", "send", "flow", (Item(s10.Recipe("flow", (
    ("next_incoming_id", 0), ("incoming_window", 100), ("next_outgoing_id", 0), ("outgoing_window", 100),
    ("handle", 77), ("delivery_count", 0), ("link_credit", 0)))),),
    expect=Expect("close-condition", (), s10.UNATTACHED, "a flow naming a handle no link is attached to",
                  conditions=("amqp:session:unattached-handle",), scope="end"))


def hostile(mode: str) -> DriverSpec:
    return DriverSpec.from_command(f"{PY} {SUPPORT / 'hostile_client_driver.py'} {{url}} {{workload}} mode={mode}",
                                   "0-9-1")


def scripted091(fault: str = "") -> DriverSpec:
    return DriverSpec.from_command(f"{PY} {SUPPORT / 'client091_scripted.py'} {{url}} {{workload}} fault={fault}",
                                   "0-9-1")


def scripted10(bad: str = "") -> DriverSpec:
    return DriverSpec.from_command(f"{PY} {SUPPORT / 'client10_script.py'} {{url}} {{workload}} bad={bad}", "1.0")


# ---------------------------------------------------------------------------- the verdict alone

def _run(**outcome: object) -> Run:
    return Run(DriverOutcome(**outcome), Observation(end="fin"), True)  # type: ignore[arg-type]


def test_crash_names_the_signal_or_the_exception() -> None:
    assert crash_condition(DriverOutcome(returncode=-11)) == "SIGSEGV"
    tb = "Traceback (most recent call last):\n  File \"x\", line 1\nKeyError: 'x'\n"
    assert crash_condition(DriverOutcome(returncode=1, stderr_tail=tb)) == "KeyError"
    node = "/x/driver.js:10\n    throw e\nTypeError: Cannot read properties of undefined\n    at f (x.js:1)\n"
    assert crash_condition(DriverOutcome(returncode=70, stderr_tail=node)) == "TypeError"


def test_order_crash_memory_hang_then_reaction() -> None:
    assert judge(_run(returncode=-6), BAD_END.expect, 1 << 30).violation == "crash"
    big = _run(returncode=0, events=[{"event": "done"}])
    big.rss_peak = 2 << 30
    assert judge(big, None, 1 << 30).violation == "memory"
    assert judge(_run(returncode=None, killed=True), BAD_END.expect, 1 << 30).violation == "hang"
    # a library error reported the contract's way is not a crash
    caught = _run(returncode=1, events=[{"event": "error", "type": "X"}])
    assert judge(caught, None, 1 << 30).ok
    assert judge(caught, BAD_END.expect, 1 << 30).ok   # silent close observed
    caught.injected = False
    assert judge(caught, CLOSE.expect, 1 << 30).ok      # the point was never reached: no reaction due


# ---------------------------------------------------------------------------- scripted clients

@pytest.mark.parametrize("mode,violation,condition", [("signal", "crash", "SIGSEGV"),
                                                      ("exception", "crash", "IndexError"),
                                                      ("ok", None, None)])
def test_crashing_client_is_caught(mode: str, violation: str | None, condition: str | None) -> None:
    run, _ = Executor091(hostile(mode), deadline_s=4.0).run(PLAIN, "pw")
    v = judge(run, None, 1 << 30)
    assert (v.violation, v.condition) == (violation, condition), v.reason


def test_hanging_client_is_killed_at_the_deadline() -> None:
    run, _ = Executor091(hostile("hang"), deadline_s=2.5).run(PLAIN, "pw")
    assert run.outcome.killed
    assert judge(run, None, 1 << 30).violation == "hang"


@pytest.mark.parametrize("mode", ["flood", "noread"])
def test_flooding_or_deaf_client_cannot_hold_the_campaign(mode: str) -> None:
    """The peer's bounds and the example's deadline end the example; the driver is killed."""
    t0 = time.monotonic()
    run, transcript = Executor091(hostile(mode), deadline_s=3.0).run(BAD_END, "pw")
    assert time.monotonic() - t0 < 3.0 + 4.0        # the deadline, plus the kill and the socket's end
    assert run.outcome.returncode is not None        # the driver is gone (killed or ended by the closed socket)
    assert len(transcript.entries) <= 5001           # the transcript's own cap


def test_growing_client_is_caught() -> None:
    run, _ = Executor091(hostile("memory"), deadline_s=10.0).run(PLAIN, "pw")   # room for a loaded machine
    assert judge(run, None, 100 << 20).violation == "memory"
    assert judge(run, None, 1 << 30).ok


@pytest.mark.parametrize("example,fault,violation", [(BAD_END, "", None), (BAD_END, "lenient", "wrong-code"),
                                                     (CLOSE, "", None), (CLOSE, "no-close-ok", "wrong-code")],
                         ids=["frame-end-ok", "frame-end-closes-with-541", "close-ok", "no-close-ok"])
def test_091_misreaction_is_caught(example: Example, fault: str, violation: str | None) -> None:
    run, _ = Executor091(scripted091(fault), deadline_s=5.0).run(example, "pw")
    assert run.injected
    v = judge(run, example.expect, 1 << 30)
    assert v.violation == violation, v.reason
    if violation:
        assert v.clauses == example.expect.clauses


@pytest.mark.parametrize("bad,violation", [("", None), ("lenient", "wrong-code")])
def test_10_misreaction_is_caught(bad: str, violation: str | None) -> None:
    run, _ = Executor10(scripted10(bad), deadline_s=5.0, driver_timeout=1).run(UNATTACHED, "pw")
    assert run.injected
    v = judge(run, UNATTACHED.expect, 1 << 30, "1.0")
    assert v.violation == violation, v.reason


# ---------------------------------------------------------------------------- findings and replay

def test_findings_are_stored_and_replay(tmp_path: Path) -> None:
    """A short campaign of bad frame-ends against the lenient scripted client (it answers them
    with connection.close 541, where 4.2.3/4 requires a silent close): findings in the common
    format, with the transcript turned to the client's side, and each replays."""
    cmd = f"{PY} {SUPPORT / 'client091_scripted.py'} {{url}} {{workload}} fault=lenient"
    driver = DriverSpec.from_command(cmd, "0-9-1")
    cfg = ServerConfig("0-9-1", driver, seed=4, examples=3, findings_dir=str(tmp_path), deadline_s=5.0,
                       driver_cmd=cmd, kinds=("bad-frame-end",))
    stats = ServerCampaign(cfg).run()
    assert stats.execs == 3 and stats.findings
    for sid, rec in stats.findings.items():
        path = tmp_path / f"{sid}.json"
        assert validate(rec) == [] and path.exists()
        assert rec["signature"]["violation"] == "wrong-code"
        assert rec["replay"].startswith("amqpspec replay ") and "--driver-cmd=" in rec["replay"]
        first = next(e for e in rec["transcript"] if e["dir"] in ("send", "recv"))
        assert first["dir"] == "send" and bytes.fromhex(first["hex"]).startswith(b"AMQP")   # the client's header
        assert bytes.fromhex(rec["input"]["hex"])[-1] != 0xCE
        result = replay_server_finding(str(path), driver)
        assert result.reproduced, (result.observed, result.reason)
    # exported as a pcap, the client is the client: its protocol header is the first payload from CLIENT_IP
    from amqpspec.capture import transcripts
    from amqpspec.capture.pcap import CLIENT_IP, to_packets

    packets = to_packets(transcripts.load(str(tmp_path / f"{next(iter(stats.findings))}.json")))
    first = next(p for p in packets if bytes(p["TCP"].payload))
    assert first["IP"].src == CLIENT_IP and bytes(first["TCP"].payload).startswith(b"AMQP")
    # a well-behaved client does not reproduce it, and replay says so
    path = tmp_path / f"{next(iter(stats.findings))}.json"
    result = replay_server_finding(str(path), scripted091())
    assert not result.reproduced and result.observed == "no problem"
