"""Framework logic without a broker: targets, verifiers, verdicts, registration, baselines."""
from __future__ import annotations

import json

import pytest

from amqpspec import baseline as bl
from amqpspec.case import CaseDefinitionError, CaseSpec, Context, case, close_info, select, verdict_for_failure
from amqpspec.clauses import Level
from amqpspec.errors import UsageError
from amqpspec.peer.amqp091 import Observation
from amqpspec.result import Result, ResultWriter, Verdict, read_results
from amqpspec.secrets import Scrubber, Secret
from amqpspec.target import Target
from amqpspec.verify import (
    AnyClose, AnyOf, ChannelException, ConnectionException, HeaderThenClose, Replies, SilentClose, StaysOpen,
)
from amqpspec.wire.amqp091 import HeartbeatFrame, MethodFrame, ProtocolHeader, spec


# ----------------------------------------------------------------------------- target

def test_target_parse_and_redaction():
    t = Target.parse("amqp://alice:s%40cret@broker.example:5673/my%2Fvhost")
    assert (t.host, t.port, t.vhost, t.username) == ("broker.example", 5673, "my/vhost", "alice")
    assert t.password.reveal() == "s@cret"
    assert "s@cret" not in repr(t) and "s%40cret" not in t.url()
    assert t.url() == "amqp://alice@broker.example:5673/my%2Fvhost"


@pytest.mark.parametrize("url, vhost", [("amqp://h", "/"), ("amqp://h/", "/"), ("amqp://h/%2F", "/"), ("amqp://h/v", "v")])
def test_target_vhost_forms(url, vhost):
    assert Target.parse(url).vhost == vhost


def test_target_defaults_and_tls_port():
    t = Target.parse("amqps://h")
    assert t.tls and t.port == 5671 and t.username == "guest"


@pytest.mark.parametrize("url", ["http://h", "amqp://", "amqp://h:99999/", "h:5672"])
def test_target_bad_urls(url):
    with pytest.raises(UsageError):
        Target.parse(url)


def test_cafile_needs_amqps():
    with pytest.raises(UsageError):
        Target.parse("amqp://h", cafile="/etc/hosts")


# ----------------------------------------------------------------------------- secrets

def test_secret_never_prints():
    s = Secret("hunter22")
    assert "hunter22" not in repr(s) + str(s) + f"{s}"


def test_scrubber_removes_text_and_hex():
    sc = Scrubber()
    sc.register("hunter22")
    text = "pw hunter22 hex " + b"hunter22".hex()
    assert "hunter22" not in sc.scrub(text) and b"hunter22".hex() not in sc.scrub(text)


# ----------------------------------------------------------------------------- verifiers

def close_frame(code: int) -> MethodFrame:
    return MethodFrame(0, spec.ConnectionClose(code, "x", 0, 0))


def obs(*received, end="fin", probe_ok=None) -> Observation:
    return Observation(received=list(received), end=end, probe_ok=probe_ok)


def test_connection_exception_codes():
    v = ConnectionException(501, 503)
    assert v.accepts(obs(close_frame(501)))
    assert v.accepts(obs(close_frame(503), end="open"))
    assert not v.accepts(obs(close_frame(504)))
    assert not v.accepts(obs())
    assert "501 (frame-error) or 503 (command-invalid)" in v.describe()


def test_silent_close_rejects_any_data():
    assert SilentClose().accepts(obs())
    assert not SilentClose().accepts(obs(close_frame(501)))
    assert not SilentClose().accepts(obs(HeartbeatFrame(0)))
    assert not SilentClose().accepts(obs(end="open"))


def test_header_then_close():
    good = ProtocolHeader(b"AMQP\x00\x00\x09\x01")
    assert HeaderThenClose().accepts(obs(good))
    assert not HeaderThenClose().accepts(obs(good, end="open"))
    assert not HeaderThenClose().accepts(obs(ProtocolHeader(b"XMQP\x00\x00\x09\x01")))
    assert not HeaderThenClose(at_most=(0, 0, 8, 0)).accepts(obs(good))
    assert HeaderThenClose(at_most=(0, 2, 0, 0)).accepts(obs(good))


def test_channel_exception_and_any_of():
    chclose = MethodFrame(1, spec.ChannelClose(404, "nf", 50, 10))
    assert ChannelException(404, channel=1).accepts(obs(chclose, end="open"))
    assert not ChannelException(404, channel=2).accepts(obs(chclose, end="open"))
    either = ConnectionException(505) | ChannelException(404)
    assert isinstance(either, AnyOf) and either.accepts(obs(chclose, end="open"))
    assert set(either.codes) == {505, 404}


def test_stays_open_and_replies():
    assert StaysOpen().accepts(obs(end="open", probe_ok=True))
    assert not StaysOpen().accepts(obs(end="open", probe_ok=False))
    assert not StaysOpen().accepts(obs(MethodFrame(1, spec.ChannelClose(406, "", 0, 0)), end="open", probe_ok=True))
    assert Replies("connection.start").accepts(obs(MethodFrame(0, spec.ConnectionStart()), end="open"))
    assert AnyClose().accepts(obs()) and AnyClose().accepts(obs(close_frame(530), end="open"))


def test_close_info_matches_codes():
    info = close_info(obs(close_frame(501)), ConnectionException(501), True)
    assert (info.who, info.how, info.code, info.matched, info.expected_codes) == ("broker", "connection.close", 501, True, [501])
    info = close_info(obs(), ConnectionException(501), False)
    assert (info.how, info.matched) == ("fin", False)
    info = close_info(obs(end="open", probe_ok=True), StaysOpen(), True)
    assert (info.who, info.matched) == ("none", None)


# ----------------------------------------------------------------------------- verdicts and cases

def test_failure_weight_follows_the_strongest_level():
    assert verdict_for_failure([Level.MUST]) is Verdict.FAILED
    assert verdict_for_failure([Level.SHOULD, Level.MUST_NOT]) is Verdict.FAILED
    assert verdict_for_failure([Level.SHOULD]) is Verdict.WARNING
    assert verdict_for_failure([Level.MAY]) is Verdict.INFORMATIONAL
    assert verdict_for_failure([]) is Verdict.FAILED


def _noop(ctx):  # pragma: no cover - never run
    pass


def test_case_decorator_validates():
    with pytest.raises(CaseDefinitionError):
        case("bad id", title="t", clauses=("amqp091:4.2.3/1",))(_noop)
    with pytest.raises(CaseDefinitionError):
        case("amqp091/4.2.3/x-unknown-clause", title="t", clauses=("amqp091:9.9/9",))(_noop)
    with pytest.raises(CaseDefinitionError):
        case("amqp091/4.2.3/x-no-clause", title="t")(_noop)


def test_context_check_levels():
    spec_ = CaseSpec("amqp091/4.2.5.5/t", "t", "0-9-1", "4.2.5.5", ("amqp091:4.2.5.5/2",), (), 1.0, _noop)
    ctx = Context(spec_, Target.parse("amqp://h"), 0.0, 1)
    assert not ctx.check(obs(end="open", probe_ok=True), ConnectionException(502, 503))
    assert ctx.checks[-1].verdict is Verdict.WARNING  # 4.2.5.5/2 is a SHOULD
    ctx.record(False, expected="e", observed="o", clauses=("amqp091:4.2.3/4",))
    assert ctx.checks[-1].verdict is Verdict.FAILED


def test_select_globs():
    specs = [CaseSpec(f"amqp091/{s}/{n}", "t", "0-9-1", s, (), (), 1.0, _noop) for s, n in
             [("4.2.2", "a"), ("4.2.3", "b"), ("connection.tune-ok", "c")]]
    assert [c.id for c in select(specs, ["amqp091/4.2.*"], [])] == ["amqp091/4.2.2/a", "amqp091/4.2.3/b"]
    assert [c.id for c in select(specs, [], ["*/4.2.3/*"])] == ["amqp091/4.2.2/a", "amqp091/connection.tune-ok/c"]


# ----------------------------------------------------------------------------- results and baselines

def _result(case_id: str, verdict: Verdict) -> Result:
    return Result(case=case_id, title="t", section="4.2.3", section_title="", clauses=[], protocol="0-9-1", verdict=verdict)


def test_result_writer_round_trip_and_truncated_line(tmp_path):
    path = tmp_path / "r.jsonl"
    with ResultWriter(path) as w:
        w.write(_result("a", Verdict.PASSED))
        w.write(_result("b", Verdict.FAILED))
    with open(path, "a") as fh:
        fh.write('{"case": "c", "verd')  # a run killed mid-line
    got = list(read_results(path))
    assert [(r.case, r.verdict) for r in got] == [("a", Verdict.PASSED), ("b", Verdict.FAILED)]


def test_result_from_json_ignores_unknown_fields():
    data = _result("a", Verdict.PASSED).to_json()
    data["future"] = 1
    data["close"]["future"] = 2
    assert Result.from_json(json.loads(json.dumps(data))).case == "a"


def test_baseline_compare(tmp_path):
    results = [_result("a", Verdict.FAILED), _result("b", Verdict.PASSED), _result("c", Verdict.FAILED),
               _result("d", Verdict.WARNING)]
    path = tmp_path / "b.json"
    bl.write_baseline(path, [_result("a", Verdict.FAILED), _result("b", Verdict.FAILED), _result("c", Verdict.PASSED),
                             _result("e", Verdict.PASSED)], "amqp://h", {})
    base = bl.load_baseline(path)
    cmp = bl.compare(results, base)
    assert cmp.regressions == [("c", "passed", "failed")]
    assert cmp.improvements == [("b", "failed", "passed")]
    assert cmp.new_failures == [] and cmp.missing == ["e"]
    assert bl.compare(results, base, strict=True).new_failures == [("d", "warning")]
