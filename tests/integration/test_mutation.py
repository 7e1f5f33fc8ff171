"""The mutation bench (bench/mutation) against the real local RabbitMQ: a few cases, a few mutations.

A case that expects connection.close with 503 must flip when the proxy changes the broker's
reply code; a case RabbitMQ fails must be reported as shown able to fail without mutation;
the command writes a TOML list that parses and counts every case.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

from amqpspec.case import discover, select
from bench.mutation.__main__ import main
from bench.mutation.run import FLIPPED, SHOWN, run_all

URL = "amqp://guest:guest@127.0.0.1:5672/"
CODE_CASE = "amqp091/4.2.3/connection-close-nonzero-channel"   # expects connection.close 503
CASES = [CODE_CASE, "amqp091/4.2.3/tune-ok-nonzero-channel", "amqp091/2.3.7/channel-close-content-in-flight",
         "amqp091/4.2.3/method-frame-at-frame-max", "amqp091/4.2.3/type-4"]


def test_a_case_expecting_a_reply_code_flips_when_the_code_is_changed(rabbitmq) -> None:
    cases = select(discover("0-9-1"), CASES, [])
    assert len(cases) == len(CASES)
    outcomes = {o.case: o for o in run_all(URL, "0-9-1", cases, jobs=2, budget=8, seed=1)}
    flipped = outcomes[CODE_CASE]
    assert flipped.baseline == "passed"
    assert flipped.status == FLIPPED and flipped.by is not None
    assert flipped.by.mutation.kind == "code" and flipped.by.verdict == "failed"
    assert any("connection.close reply-code 503 ->" in a for a in flipped.by.applied)
    assert all(o.status in SHOWN for o in outcomes.values()), {o.case: o.status for o in outcomes.values()}


def test_the_command_writes_a_list_that_counts_every_case(rabbitmq, tmp_path: Path) -> None:
    out = tmp_path / "mutation.toml"
    args = [URL, "--protocol", "0-9-1", "--mutations", "8", "--jobs", "2", "--out", str(out)]
    for c in CASES:
        args += ["--case", c]
    assert main(args) == 0
    data = tomllib.loads(out.read_text(encoding="utf-8"))
    s = data["summary"]
    assert s["cases"] == len(CASES) and s["shown_able_to_fail"] == len(CASES)
    assert s["flipped"] + s["fails_unmutated"] == len(CASES)
    assert CODE_CASE in data["flipped"]
    assert "python -m bench.mutation" in out.read_text(encoding="utf-8").splitlines()[2]
    assert "guest:guest" not in out.read_text(encoding="utf-8")
