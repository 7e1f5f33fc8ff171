"""The mutation bench's --merge (bench/mutation/merge.py) and broker keeper (run.Keeper).

No broker: outcomes are built by hand, written with report.write, read back with merge.read.
"""
from __future__ import annotations

import tomllib

import pytest

from bench.mutation import merge, report
from bench.mutation.mutations import Mutation
from bench.mutation.run import Keeper, Outcome, Tried

FIRST = "Broker A 1.0"
SECOND = "Broker B 2.0"


def _flipped(cid: str) -> Outcome:
    m = Mutation("code", 1, 3)
    return Outcome(cid, "passed", "", status="flipped", by=Tried(m, ["code c1#3: 404 -> 406"], "failed", "wrong code"))


def _earlier(tmp_path):
    outcomes = [
        _flipped("x/1"),
        Outcome("x/2", "failed", "it failed", status="fails-unmutated"),
        Outcome("x/3", "skipped", "not offered", status="skipped-unmutated"),
        Outcome("x/4", "passed", "", status="not-flipped", why="tolerant"),
        Outcome("x/5", "skipped", "not offered", status="skipped-unmutated"),
    ]
    outcomes[3].tried = [outcomes[0].by] * 24
    outcomes[3].frames = 7
    path = tmp_path / "first.toml"
    report.write(path, outcomes, command="cmd", protocol="1.0", broker=FIRST, seed=1, budget=24, wall_s=10.0)
    return path


def test_read_gives_back_each_case_with_its_status_and_broker(tmp_path):
    earlier = merge.read(_earlier(tmp_path))
    assert earlier.protocol == "1.0" and earlier.brokers == FIRST
    assert {cid: o.status for cid, o in earlier.outcomes.items()} == {
        "x/1": "flipped", "x/2": "fails-unmutated", "x/3": "skipped-unmutated", "x/4": "not-flipped",
        "x/5": "skipped-unmutated"}
    assert earlier.shown() == {"x/1", "x/2"}
    assert all(o.broker == FIRST for o in earlier.outcomes.values())


def test_a_case_counts_when_either_broker_shows_it(tmp_path):
    earlier = merge.read(_earlier(tmp_path))
    new = [_flipped("x/3"),                                                         # skipped on A, flipped on B
           Outcome("x/4", "skipped", "", status="skipped-unmutated"),               # ran on A, skipped on B
           Outcome("x/5", "passed", "", status="not-flipped", why="accepts-close"),  # skipped on A, ran on B
           Outcome("x/6", "failed", "", status="fails-unmutated")]                  # new in the catalog
    out = merge.combine(earlier, new, SECOND, ["x/1", "x/2", "x/3", "x/4", "x/5", "x/6"])
    by_id = {o.case: o for o in out}
    assert [o.case for o in out] == ["x/1", "x/2", "x/3", "x/4", "x/5", "x/6"]
    assert (by_id["x/3"].status, by_id["x/3"].broker) == ("flipped", SECOND)
    assert (by_id["x/4"].status, by_id["x/4"].broker) == ("not-flipped", FIRST)      # the pass that ran it
    assert by_id["x/4"].also == f"{SECOND}: skipped-unmutated"
    assert (by_id["x/5"].status, by_id["x/5"].also) == ("not-flipped", f"{FIRST}: skipped-unmutated")
    assert report.summary(out)["shown_able_to_fail"] == 4

    path = tmp_path / "merged.toml"
    report.write(path, out, command="cmd --merge first.toml", protocol="1.0", broker=SECOND, seed=1, budget=24,
                 wall_s=5.0, merged_from="first.toml (A, 10 s)")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data["run"]["broker"] == f"{FIRST} + {SECOND}"
    assert data["summary"]["shown_able_to_fail"] == 4
    assert data["shown_by"] == {"x/1": FIRST, "x/2": FIRST, "x/3": SECOND, "x/6": SECOND}
    assert "404 -> 406" in data["flipped"]["x/1"]          # the earlier pass's note, kept
    kept = {c["id"]: c for c in data["case"]}
    assert kept["x/4"]["mutations_tried"] == 24 and kept["x/4"]["why"] == "tolerant"
    # and the merged list merges again (a third broker)
    again = merge.read(path)
    assert again.shown() == {"x/1", "x/2", "x/3", "x/6"}
    assert again.outcomes["x/3"].broker == SECOND and again.outcomes["x/1"].broker == FIRST


def test_a_list_that_is_not_one_is_refused(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("not = [toml")
    with pytest.raises(SystemExit):
        merge.read(bad)


class _Note(str):
    ok = True


def test_keeper_restarts_a_dead_broker_once_and_has_every_spoiled_run_done_again(monkeypatch):
    from bench.mutation import run as run_mod

    alive = [False]
    restarts = []
    monkeypatch.setattr(run_mod.brokerops, "problem", lambda *a, **k: "" if alive[0] else "refused")

    def restart(command, *a, **k):
        restarts.append(command)
        alive[0] = True
        return _Note("restarted")

    monkeypatch.setattr(run_mod.brokerops, "restart", restart)
    keeper = Keeper(object(), "1.0", "restart-it")   # type: ignore[arg-type]
    started = keeper.generation
    assert keeper.after(started) is True              # the run that found it dead
    assert keeper.after(started) is True              # another run of the same generation: spoiled too
    assert keeper.after(keeper.generation) is False   # a run after the restart counts
    assert restarts == ["restart-it"]
    assert Keeper(object(), "1.0", None).after(0) is False   # type: ignore[arg-type]
