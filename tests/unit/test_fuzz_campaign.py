"""Campaign planning, durations, CLI usage errors and the findings directory (no broker needed)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from amqpspec.errors import UsageError
from amqpspec.fuzz.campaign import Config, derive_seed, plan, split
from amqpspec.fuzz.cli import fuzz, parse_duration
from amqpspec.fuzz.draw import Drawer, SeededDatabase, available
from amqpspec.fuzz.findings import FindingStore
from amqpspec.target import BrokerInfo, Target


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


def test_slot_owners_are_distinct_across_workers_and_slots():
    from amqpspec.fuzz.campaign import slot_owner

    for jobs in (1, 2, 3):
        owners = [slot_owner(w, jobs, s) for w in range(jobs) for s in range(64)]
        assert len(set(owners)) == len(owners)
        assert [slot_owner(w, jobs, 0) for w in range(jobs)] == list(range(jobs))  # slot 0: the worker's names


class _FakeWorker:
    """Only what the probe gate uses: the lock, the admitted count, a probe (no broker: the gate's
    bookkeeping is under test, not a broker's behaviour)."""

    def __init__(self, results):
        import threading

        self.lock = threading.RLock()
        self.judged = 0
        self.results = list(results)
        self.calls = []

    def probe(self):
        import time

        self.calls.append(self.judged)
        time.sleep(0.05)
        return self.results.pop(0) if self.results else ""


def test_probe_gate_gives_each_example_a_probe_begun_after_it_and_shares_them():
    import threading

    from amqpspec.fuzz.campaign import _ProbeGate

    w = _FakeWorker([])
    gate = _ProbeGate(w)
    got = {}

    def slot(seq):
        got[seq] = gate.covering(seq)

    threads = []
    for seq in range(1, 9):  # examples admitted while probes run
        with w.lock:
            w.judged = seq
        t = threading.Thread(target=slot, args=(seq,))
        t.start()
        threads.append(t)
        if seq % 3 == 0:
            import time
            time.sleep(0.02)
    for t in threads:
        t.join(5)
    assert sorted(got) == list(range(1, 9))
    for seq, (problem, began) in got.items():
        assert problem == "" and began >= seq  # never a probe that began before the example was admitted
    assert len(w.calls) < 8  # waiting slots share probes


def test_probe_gate_reports_a_failed_probe_to_every_example_it_covers():
    from amqpspec.fuzz.campaign import _ProbeGate

    w = _FakeWorker(["connection refused"])
    w.judged = 3
    gate = _ProbeGate(w)
    assert gate.covering(3) == ("connection refused", 3)
    assert gate.covering(2) == ("connection refused", 3)  # admitted before that probe began
    w.judged = 4
    assert gate.covering(4) == ("", 4)  # a later example needs (and gets) a new probe
    assert len(w.calls) == 2


class _ShrinkWorker:
    """What Worker._shrunk touches: the config, its bookkeeping, reports and notes."""

    def __init__(self) -> None:
        from amqpspec.fuzz.campaign import Worker

        self.cfg = _cfg(shrink_time=3.0)
        self.pending: dict = {}
        self.unreproduced: dict = {}
        self.dismissed: set = set()
        self.known: set = set()
        self.reported: list = []
        self.notes: list = []
        self._shrunk = Worker._shrunk.__get__(self)
        self._seen = Worker._seen.__get__(self)

    def report(self, sig, verdict, ex) -> None:
        self.reported.append(sig)
        self.known.add(sig.id)

    def emit(self, kind, *args) -> None:
        if kind == "note":
            self.notes.append(args[0])


@pytest.mark.parametrize("violation", ["hang", "wrong-code"])
def test_a_finding_not_shown_again_alone(violation):
    from types import SimpleNamespace

    from amqpspec.fuzz.campaign import HANG_TRIES, _Batch
    from amqpspec.fuzz.findings import Signature

    w = _ShrinkWorker()
    sig = Signature("1.0", "attach", violation, None, None, "link")
    ft = SimpleNamespace(name="attach")
    for attempt in range(HANG_TRIES):
        w._shrunk(ft, _Batch(mode="shrink", current=sig.id, best=(sig, None, None), reproduced=False))
        if violation != "hang":
            break
    if violation == "hang":   # silence the example alone never showed again: the broker was slow under load
        assert not w.reported and sig.id in w.dismissed and w._seen(sig.id)
        assert len(w.notes) == 1 and "not recorded" in w.notes[0]
    else:                     # anything else the example showed is evidence as it is
        assert w.reported == [sig] and not w.dismissed
    w2 = _ShrinkWorker()
    w2._shrunk(ft, _Batch(mode="shrink", current=sig.id, best=(sig, None, None), reproduced=True))
    assert w2.reported == [sig]                       # shown again alone: recorded


@pytest.mark.parametrize("credit", [100, 0])
def test_the_1_0_liveness_probe_asks_for_credit_when_the_broker_gave_it_at_the_start(credit):
    """Calibration against a scripted peer (its credit is the input under test, not a broker's
    behaviour being judged): a broker that grants credit at the start is probed for it; one that
    does not is probed without it, and the user is told."""
    from types import SimpleNamespace

    from amqpspec.fuzz.campaign import Worker
    from amqpspec.fuzz.targets import Env
    from tests.support import hostile
    from tests.support.hostile_fuzz10 import Log, scripted_broker, url_10

    with hostile.HostileServer(scripted_broker(Log(), credit=credit)) as server:
        target = Target.parse(url_10(server.port))
        notes = []
        w = SimpleNamespace(cfg=_cfg(protocol="1.0"), target=target, credit_node=None,
                            env=Env(target, "1.0", BrokerInfo(), "run12345", 0),
                            emit=lambda kind, *a: notes.append(a[0]))
        Worker._calibrate_credit(w)
        if credit:
            assert w.credit_node == w.env.name("live") and not notes
            assert Worker._problem(w) == ""
        else:
            assert w.credit_node is None and len(notes) == 1 and "does not ask for credit" in notes[0]


def test_a_broker_that_stopped_granting_credit_is_a_finding_apart_from_a_crash():
    from types import SimpleNamespace

    from amqpspec import brokerops
    from amqpspec.fuzz.campaign import LIVENESS_NO_CREDIT, Worker

    w = SimpleNamespace(cfg=_cfg(protocol="1.0"))
    ft, ex = SimpleNamespace(name="flow-disposition"), SimpleNamespace(state="link")
    wedged = Worker._liveness_signature(w, ft, ex, f"{brokerops.NO_CREDIT} from 'n' within 1 s")
    crashed = Worker._liveness_signature(w, ft, ex, "cannot connect: connection refused")
    assert wedged.violation == crashed.violation == "liveness"
    assert wedged.condition == LIVENESS_NO_CREDIT and crashed.condition is None and wedged.id != crashed.id
