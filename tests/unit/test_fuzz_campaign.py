"""Campaign planning, durations, CLI usage errors and the findings directory (no broker needed)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from amqpspec.errors import UsageError
from amqpspec.fuzz.campaign import Config, derive_seed, plan, split
from amqpspec.fuzz.cli import fuzz, parse_duration
from amqpspec.fuzz.draw import Drawer, SeededDatabase, available
from amqpspec.fuzz.findings import FindingStore
from amqpspec.target import BrokerInfo


def _cfg(**kw):
    base = dict(url="amqp://guest:guest@127.0.0.1:1/", protocol="0-9-1", targets=["a", "b", "c"], broker=BrokerInfo())
    base.update(kw)
    return Config(**base)


def test_split_spreads_evenly_first_parts_take_the_rest():
    assert split(10, 3) == [4, 3, 3]
    assert split(2, 4) == [1, 1, 0, 0]
    assert sum(split(12345, 7)) == 12345


def test_plan_examples_mode_shares_every_target_among_workers():
    cfg = _cfg(examples=10, jobs=2)
    shares = [plan(cfg, w) for w in range(2)]
    per_target: dict[str, int] = {}
    for share in shares:
        for name, n in share:
            per_target[name] = per_target.get(name, 0) + n
    assert per_target == {"a": 4, "b": 3, "c": 3}


def test_plan_drops_empty_shares_and_duration_mode_rotates():
    assert plan(_cfg(examples=1, jobs=2), 1) == []
    cfg = _cfg(duration=5.0, jobs=2)
    assert [n for n, _ in plan(cfg, 1)] == ["b", "c", "a"]
    assert all(count is None for _, count in plan(cfg, 0))


def test_derive_seed_is_stable_and_distinct():
    assert derive_seed(1, "a", 0, 0) == derive_seed(1, "a", 0, 0)
    assert derive_seed(1, "a", 0, 0) != derive_seed(1, "a", 0, 1)
    assert 0 <= derive_seed("x") < 1 << 63


@pytest.mark.parametrize("text,seconds", [("30s", 30.0), ("10m", 600.0), ("1h", 3600.0), ("90", 90.0), ("250ms", 0.25)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "ten", "5 days", "0s", "-3s"])
def test_parse_duration_refuses(text):
    with pytest.raises(UsageError):
        parse_duration(text)


@pytest.mark.parametrize("args", [
    ["amqp://127.0.0.1:1/", "--duration", "soon"],
    ["amqp://127.0.0.1:1/", "--examples", "0"],
    ["amqp://127.0.0.1:1/", "--jobs", "0"],
    ["amqp://127.0.0.1:1/", "--protocol", "2.0"],
])
def test_cli_usage_errors_exit_2_with_one_line(args):
    result = CliRunner().invoke(fuzz, args)
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1


def test_cli_unknown_target_is_a_usage_error():
    result = CliRunner().invoke(fuzz, ["amqp://127.0.0.1:1/", "--protocol", "0-9-1", "--target", "no-such-target",
                                       "--examples", "1"])
    assert result.exit_code == 2
    assert "no-such-target" in result.output
    assert "Traceback" not in result.output


def test_findings_dir_that_is_a_file_is_refused(tmp_path):
    path = tmp_path / "plain-file"
    path.write_text("x")
    with pytest.raises(OSError):
        FindingStore(path)
    result = CliRunner().invoke(fuzz, ["amqp://127.0.0.1:1/", "--protocol", "0-9-1", "--findings", str(path),
                                       "--examples", "1"])
    assert result.exit_code == 2
    assert "--findings" in result.output and "is a file" in result.output and "Traceback" not in result.output


def test_findings_dir_unwritable_is_refused():
    # /proc takes no new directories, not even from root
    with pytest.raises(OSError):
        FindingStore("/proc/amqpspec-findings")
    result = CliRunner().invoke(fuzz, ["amqp://127.0.0.1:1/", "--protocol", "0-9-1", "--findings",
                                       "/proc/amqpspec-findings", "--examples", "1"])
    assert result.exit_code == 2
    assert "findings directory" in result.output and "Traceback" not in result.output


def test_findings_dir_is_created_and_empty_dir_knows_nothing(tmp_path):
    store = FindingStore(tmp_path / "new" / "dir")
    assert (tmp_path / "new" / "dir").is_dir()
    assert store.known() == {}
    (tmp_path / "new" / "dir" / "junk.json").write_text("{not json")
    assert store.known() == {}


def test_direct_draws_are_seeded_and_shrinkable():
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings, strategies as st

    assert available()
    s = st.lists(st.integers(0, 1000), min_size=1)
    first = [Drawer(s, 7).draw()[0] for _ in range(1)]
    assert first == [Drawer(s, 7).draw()[0]]
    d = Drawer(s, 7)
    while True:
        value, choices = d.draw()
        if sum(value) > 1500:
            break
    seen = []

    def body(x):
        seen.append(x)
        assert sum(x) <= 1500

    test = settings(database=SeededDatabase(choices), max_examples=100, phases=[Phase.reuse, Phase.shrink],
                    deadline=None, suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)(given(s)(body))
    with pytest.raises(AssertionError):
        test()
    assert seen[0] == value  # the recorded example is replayed first
    assert min((len(x), x) for x in seen if sum(x) > 1500)[0] <= len(value)
