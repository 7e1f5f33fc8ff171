"""Console and JUnit reporters, fed with hand-built result records."""
from __future__ import annotations

import io
import threading
import xml.etree.ElementTree as ET

import pytest
from rich.console import Console

from amqpspec.reports.console import (
    ConsoleReporter,
    count_verdicts,
    fails_run,
    format_close,
    format_summary,
    group_by_section,
    printable,
    run_failed,
    section_sort_key,
    transcript_lines,
)
from amqpspec.reports.junit import junit_tree, write_junit, xml_safe
from amqpspec.result import CloseInfo, Result, Verdict

HOSTILE = "[bold]x[/] [link=http://evil]click[/link]"
CONTROL = "bad\x00reply\x1b[2Jtext\x07"

TRANSCRIPT = [
    {"t": 0.003, "dir": "send", "summary": "protocol-header AMQP 0-9-1", "hex": "414d515000000901"},
    {"t": 0.010, "dir": "recv", "summary": "connection.start(version-major=0, version-minor=9)", "hex": "01"},
    {"t": 0.012, "dir": "event", "summary": "peer closed: fin", "hex": ""},
    {"t": 0.5, "dir": "recv", "hex": "0100000000"},  # no summary: hex shown instead
]


def make(case: str, verdict: Verdict, section: str = "4.2.3", **kw) -> Result:
    defaults = dict(
        case=case,
        title=f"title of {case}",
        section=section,
        section_title=kw.pop("section_title", f"Section {section}"),
        clauses=[f"amqp091-{section}-1"],
        protocol="amqp091",
        verdict=verdict,
        target="amqp://guest@localhost:5672/",
        broker={"product": "RabbitMQ", "version": "3.13.7", "platform": "Erlang/OTP 26"},
        duration_s=0.25,
        seed=1234,
        started_at="2024-05-01T10:00:00Z",
        replay=f"amqpspec run amqp://localhost:5672/ --case {case} --seed 1234",
    )
    defaults.update(kw)
    return Result(**defaults)


@pytest.fixture
def results() -> list[Result]:
    return [
        make("frame.ok", Verdict.PASSED, transcript=TRANSCRIPT),
        make(
            "frame.bad-end",
            Verdict.FAILED,
            reason="broker accepted a frame-end of 0x00",
            evidence={"expected": "connection.close 501 FRAME_ERROR", "observed": "connection.tune"},
            close=CloseInfo(who="none", how="none", expected_codes=[501], matched=False),
            transcript=TRANSCRIPT,
        ),
        make(
            "frame.size",
            Verdict.FAILED,
            section="4.2.10",
            reason="oversized frame accepted",
            deviation="RabbitMQ accepts frames up to frame-max + 8",
            evidence={"expected": "close 501", "observed": "nothing"},
        ),
        make(
            "frame.hostile",
            Verdict.WARNING,
            section="4.2.10",
            reason=HOSTILE,
            evidence={"expected": "reply text FRAME_ERROR", "observed": HOSTILE, "extra": object()},
            close=CloseInfo(who="broker", how="connection.close", code=501, text=CONTROL,
                            expected_codes=[501, 505], matched=True),
        ),
        make("start.mechanisms", Verdict.INFORMATIONAL, section="connection.start",
             reason="offers PLAIN and AMQPLAIN"),
        make("open.vhost", Verdict.SKIPPED, section="channel.open", reason="broker has no vhosts"),
        make("tune.timeout", Verdict.ERROR, section="connection.start", reason="timeout after 5s",
             transcript="/tmp/run/transcripts/tune.timeout.json"),
        make("frame.case-10", Verdict.PASSED, section="4.2.3"),
        make("frame.case-2", Verdict.PASSED, section="4.2.3"),
    ]


def render(results, *, verbose=False, strict=False, elapsed=12.34, run_info=None) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=120, force_terminal=False)
    reporter = ConsoleReporter(console, verbose=verbose, strict=strict)
    reporter.start(run_info or {
        "target": "amqp://guest@localhost:5672/",
        "broker": {"product": "RabbitMQ", "version": "3.13.7", "platform": "Erlang/OTP 26"},
        "protocol": "amqp091", "cases": len(results), "seed": 1234, "jobs": 4,
    })
    for r in results:
        reporter.case_started(r.case)
        reporter.case_finished(r)
    reporter.finish(results, elapsed)
    return buf.getvalue()


# ---------------------------------------------------------------------------- helpers


def test_section_order_numeric_then_named():
    sections = ["connection.start", "4.2.10", "channel.open", "4.2.3", "", "4.10", "4.2"]
    ordered = sorted(sections, key=section_sort_key)
    assert ordered == ["4.2", "4.2.3", "4.2.10", "4.10", "channel.open", "connection.start", ""]


def test_group_by_section_orders_cases_naturally(results):
    groups = group_by_section(results)
    assert [g.section for g in groups] == ["4.2.3", "4.2.10", "channel.open", "connection.start"]
    assert [r.case for r in groups[0].results] == [
        "frame.bad-end", "frame.case-2", "frame.case-10", "frame.ok"]


@pytest.mark.parametrize("close, expected", [
    (CloseInfo(who="broker", how="connection.close", code=501, expected_codes=[501], matched=True),
     "closed by broker with connection.close 501 (expected 501): matched"),
    (CloseInfo(who="broker", how="fin"), "closed by broker: fin"),
    (CloseInfo(), "still open"),
    (CloseInfo(expected_codes=[501, 502, 505], matched=False),
     "still open (expected 501, 502 or 505): NOT matched"),
    (CloseInfo(who="broker", how="channel.close", code=404, text="NOT_FOUND"),
     'closed by broker with channel.close 404 "NOT_FOUND"'),
    (CloseInfo(who="broker", how="rst", expected_codes=[], matched=False),
     "closed by broker: rst (expected no close): NOT matched"),
    ({"who": "suite", "how": "connection.close", "code": 200, "bogus": 1},
     "closed by suite with connection.close 200"),
    (None, "unknown"),
])
def test_format_close(close, expected):
    assert format_close(close) == expected


def test_format_close_escapes_control_characters():
    text = format_close(CloseInfo(who="broker", how="connection.close", code=501, text=CONTROL))
    assert "\x00" not in text and "\x1b" not in text
    assert "bad\\x00reply\\x1b[2Jtext\\x07" in text


def test_printable_escapes_bidi_and_keeps_multiline():
    assert printable("a\u202eb") == "a\\u202eb"
    assert printable("a\nb") == "a\\x0ab"
    assert printable("a\r\nb", multiline=True) == "a\nb"
    assert printable({"k": 1}) == '{"k": 1}'
    assert printable(b"\x01\xce") == "01 ce"


def test_transcript_lines():
    lines = transcript_lines(TRANSCRIPT)
    assert lines[0] == "  0.003 -> protocol-header AMQP 0-9-1"
    assert lines[1].startswith("  0.010 <- connection.start(")
    assert lines[2] == "  0.012 ** peer closed: fin"
    assert lines[3] == "  0.500 <- hex 0100000000"
    assert transcript_lines("/some/path.json") == ["transcript: /some/path.json"]
    assert transcript_lines([]) == []
    odd = transcript_lines([{"t": "soon", "dir": 3}, "junk"])
    assert len(odd) == 2 and "??" in odd[0]


def test_counts_and_run_failed(results):
    counts = count_verdicts(results)
    assert counts == {"passed": 3, "failed": 2, "warning": 1, "informational": 1,
                      "skipped": 1, "error": 1, "total": 9, "deviations": 1}
    assert run_failed(results)
    decided = [r for r in results if r.case != "frame.bad-end" and r.verdict is not Verdict.ERROR]
    assert not run_failed(decided)
    assert run_failed(decided, strict=True)
    warning = make("w", Verdict.WARNING)
    assert not fails_run(warning) and fails_run(warning, strict=True)
    # an undecided case fails the run (CI must notice), though it never counts against the broker
    assert fails_run(make("e", Verdict.ERROR)) and fails_run(make("e", Verdict.ERROR), strict=True)


def test_format_summary(results):
    assert format_summary(results, 12.34) == (
        "9 cases: 3 passed, 2 failed (1 documented deviation), 1 warning, 1 informational, "
        "1 skipped, 1 error  in 12.3s")


# ---------------------------------------------------------------------------- console


def test_console_tree(results):
    out = render(results)
    # header
    first = out.splitlines()[0]
    assert "amqp://guest@localhost:5672/" in first and "RabbitMQ 3.13.7" in first
    assert "amqp091" in first and "seed 1234" in first
    # groups in spec order
    headings = ["4.2.3 Section 4.2.3", "4.2.10 Section 4.2.10",
                "channel.open Section channel.open", "connection.start Section connection.start"]
    positions = [out.index(h) for h in headings]
    assert positions == sorted(positions)
    # case order inside a group
    assert out.index("frame.case-2") < out.index("frame.case-10")
    # markers
    for marker in "✔✘!i-?":
        assert marker in out
    assert "✘ frame.bad-end: title of frame.bad-end — broker accepted a frame-end of 0x00" in out
    # evidence of the failed case
    assert "clauses: amqp091-4.2.3-1" in out
    assert "expected: connection.close 501 FRAME_ERROR" in out
    assert "observed: connection.tune" in out
    assert "close: still open (expected 501): NOT matched" in out
    assert "replay: amqpspec run amqp://localhost:5672/ --case frame.bad-end --seed 1234" in out
    # deviation
    assert "documented deviation: RabbitMQ accepts frames up to frame-max + 8" in out
    # summary and final line
    assert ("9 cases: 3 passed, 2 failed (1 documented deviation), 1 warning, 1 informational, "
            "1 skipped, 1 error  in 12.3s") in out
    assert "RUN FAILED: 1 failed case" in out
    # no transcript without verbose
    assert "protocol-header AMQP 0-9-1" not in out


def test_console_hostile_text_printed_literally(results):
    out = render(results)
    assert HOSTILE in out                      # not interpreted as markup
    assert "\x1b" not in out and "\x00" not in out and "\x07" not in out
    assert "bad\\x00reply\\x1b[2Jtext\\x07" in out


def test_console_fails_run_with_only_errors(results):
    errors = [r for r in results if r.verdict is Verdict.ERROR]
    out = render(errors)
    assert "RUN FAILED: undecided cases; 1 case could not be decided (error)" in out


def test_console_passes_with_only_deviation_and_warning(results):
    rest = [r for r in results if r.case != "frame.bad-end" and r.verdict is not Verdict.ERROR]
    out = render(rest)
    assert "RUN PASSED (1 documented deviation accepted; 1 warning not counted without --strict)" in out
    strict = render(rest, strict=True)
    assert "RUN FAILED: 1 failed case (including 1 documented deviation, --strict), 1 warning (--strict)" in strict


def test_console_verbose_prints_transcripts(results):
    out = render(results, verbose=True)
    assert "  0.003 -> protocol-header AMQP 0-9-1" in out
    assert "  0.010 <- connection.start(version-major=0, version-minor=9)" in out
    assert "transcript: /tmp/run/transcripts/tune.timeout.json" in out
    # the passed case gets its details too in verbose mode
    assert "replay: amqpspec run amqp://localhost:5672/ --case frame.ok --seed 1234" in out


def test_console_not_terminal_prints_only_the_final_tree(results):
    buf = io.StringIO()
    reporter = ConsoleReporter(Console(file=buf, width=120, force_terminal=False))
    reporter.start({"cases": 3})
    reporter.case_started("x")
    reporter.case_finished(results[0])
    assert buf.getvalue() == ""
    reporter.finish([results[0]], 1.0)
    assert buf.getvalue().startswith("amqpspec")


def test_console_terminal_progress_is_transient(results):
    buf = io.StringIO()
    console = Console(file=buf, width=120, force_terminal=True, color_system=None)
    reporter = ConsoleReporter(console)
    reporter.start({"cases": len(results)})
    for r in results:
        reporter.case_finished(r)
    reporter.finish(results, 2.0)
    assert "9 cases: 3 passed" in buf.getvalue()


def test_console_ascii_fallback(results):
    class Latin1(io.StringIO):
        encoding = "latin-1"

    buf = Latin1()
    reporter = ConsoleReporter(Console(file=buf, width=120, force_terminal=False))
    reporter.finish(results, 1.0)
    out = buf.getvalue()
    assert "✔" not in out and "✘" not in out and "—" not in out
    assert "x frame.bad-end: title of frame.bad-end -- broker accepted" in out
    out.encode("latin-1")  # printable without replacement


def test_console_odd_input_does_not_crash():
    odd = [
        make("a", Verdict.FAILED, section="", section_title="", title=12345, evidence="just a string"),
        make("b", "warning", section=None, title=None, evidence={"checks": [
            {"description": "frame-end", "clauses": ["c1"], "verdict": "failed",
             "expected": "0xCE", "observed": "0x00"}]}),
        make("c", "nonsense", close={"who": "broker", "how": "fin"}, transcript=[None, 3]),
        make("d", Verdict.ERROR, broker="not a dict", clauses="c-1", close=None),
    ]
    out = render(odd, verbose=True, run_info={})
    assert "(no section)" in out
    assert "12345" in out
    assert "observed: just a string" in out
    assert "check: failed: frame-end [c1]" in out and "expected: 0xCE" in out
    assert "closed by broker: fin" in out
    assert "4 cases:" in out
    out_empty = render([], run_info={})
    assert "0 cases" in out_empty and "NO CASES RAN" in out_empty


def test_console_multi_protocol_headings():
    mixed = [make("a", Verdict.PASSED), make("b", Verdict.PASSED, protocol="amqp10", section="2.3")]
    out = render(mixed)
    assert out.index("amqp091") < out.index("  4.2.3") < out.index("amqp10\n") < out.index("  2.3")


def test_console_redacts_password_in_target():
    out = render([make("a", Verdict.PASSED)],
                 run_info={"target": "amqp://guest:secret@localhost:5672/", "seed": 1})
    assert "secret" not in out and "guest:***@localhost:5672" in out


def test_case_finished_is_thread_safe(results):
    for force_terminal in (False, True):
        buf = io.StringIO()
        console = Console(file=buf, width=120, force_terminal=force_terminal, color_system=None)
        reporter = ConsoleReporter(console)
        per_thread = 200
        reporter.start({"cases": 8 * per_thread})
        barrier = threading.Barrier(8)
        errors = []

        def worker(n: int) -> None:
            try:
                barrier.wait()
                for i in range(per_thread):
                    r = results[(n + i) % len(results)]
                    reporter.case_started(r.case)
                    reporter.case_finished(r)
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert len(reporter._results) == 8 * per_thread
        reporter.finish(None, 1.0)  # None: the results collected by case_finished
        assert f"{8 * per_thread} cases:" in buf.getvalue()


# ---------------------------------------------------------------------------- junit


def parse(path) -> ET.Element:
    return ET.parse(path).getroot()


def suites_by_name(root: ET.Element) -> dict[str, ET.Element]:
    return {s.get("name"): s for s in root.findall("testsuite")}


def test_junit_structure_and_counts(tmp_path, results):
    path = tmp_path / "out" / "junit.xml"
    write_junit(results, path, properties={"ci.job": "42"})
    root = parse(path)
    assert root.tag == "testsuites"
    names = [s.get("name") for s in root.findall("testsuite")]
    assert names == ["amqp091 4.2.3 Section 4.2.3", "amqp091 4.2.10 Section 4.2.10",
                     "amqp091 channel.open Section channel.open",
                     "amqp091 connection.start Section connection.start"]
    # per-suite counts are consistent with the testcase children
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
        assert int(suite.get("errors")) == sum(1 for c in cases if c.find("error") is not None)
        assert int(suite.get("skipped")) == sum(1 for c in cases if c.find("skipped") is not None)
        assert float(suite.get("time")) == pytest.approx(0.25 * len(cases))
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert props["ci.job"] == "42" and props["broker.product"] == "RabbitMQ"
    # totals (non-strict: warning passes, deviation is skipped)
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "9", "1", "1", "2")

    s = suites_by_name(root)
    bad = s["amqp091 4.2.3 Section 4.2.3"].find("testcase[@name='frame.bad-end: title of frame.bad-end']")
    assert bad.get("classname") == "amqpspec.amqp091.4.2.3"
    assert bad.get("time") == "0.250"
    failure = bad.find("failure")
    assert failure.get("type") == "failed"
    assert failure.get("message") == "broker accepted a frame-end of 0x00"
    for text in ("clauses: amqp091-4.2.3-1", "expected: connection.close 501 FRAME_ERROR",
                 "observed: connection.tune", "close: still open (expected 501): NOT matched",
                 "replay: amqpspec run amqp://localhost:5672/ --case frame.bad-end --seed 1234"):
        assert text in failure.text
    assert "0.003 -> protocol-header AMQP 0-9-1" in bad.find("system-out").text

    dev = s["amqp091 4.2.10 Section 4.2.10"].find("testcase[@name='frame.size: title of frame.size']")
    assert dev.find("skipped").get("message") == (
        "documented deviation: RabbitMQ accepts frames up to frame-max + 8")
    assert dev.find("failure") is None

    warn = s["amqp091 4.2.10 Section 4.2.10"].find("testcase[@name='frame.hostile: title of frame.hostile']")
    assert warn.find("failure") is None
    assert warn.find("system-out").text.startswith("warning")

    info = s["amqp091 connection.start Section connection.start"]
    info_case = info.find("testcase[@name='start.mechanisms: title of start.mechanisms']")
    assert list(c.tag for c in info_case) == ["system-out"]
    err = info.find("testcase[@name='tune.timeout: title of tune.timeout']")
    assert err.find("error").get("message") == "timeout after 5s"
    assert "transcript: /tmp/run/transcripts/tune.timeout.json" in err.find("system-out").text

    skipped = s["amqp091 channel.open Section channel.open"].find("testcase/skipped")
    assert skipped.get("message") == "broker has no vhosts"


def test_junit_strict(tmp_path, results):
    path = tmp_path / "junit.xml"
    write_junit(results, path, strict=True)
    root = parse(path)
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "9", "3", "1", "1")
    s = suites_by_name(root)["amqp091 4.2.10 Section 4.2.10"]
    assert s.get("failures") == "2"
    warn = s.find("testcase[@name='frame.hostile: title of frame.hostile']/failure")
    assert warn.get("type") == "warning"
    dev = s.find("testcase[@name='frame.size: title of frame.size']/failure")
    assert dev.get("type") == "failed"
    assert "documented deviation: RabbitMQ accepts" in dev.text


def test_junit_control_characters_and_markup_survive(tmp_path):
    nasty = "\x00\x01\x08\x0b\x0c\x1b[31m\x7f\x85\ud800\ufffe end"
    r = make("nasty", Verdict.FAILED, title=f"title {nasty}", reason=f"reason {nasty}",
             evidence={"expected": "x", "observed": nasty},
             close=CloseInfo(who="broker", how="connection.close", code=501, text=nasty),
             transcript=[{"t": 0.1, "dir": "recv", "summary": nasty}],
             deviation=None)
    path = tmp_path / "junit.xml"
    write_junit([r, make("m", Verdict.ERROR, reason=HOSTILE, section=f"5\x00{nasty}")], path,
                suite_name=f"suite {nasty}", properties={f"k{nasty}": nasty})
    root = parse(path)  # would raise on any illegal character
    failure = root.find(".//failure")
    assert "\\x00" in failure.get("message") and "\\x1b" in failure.get("message")
    assert failure.get("message").endswith(" end")
    assert root.find(".//error").get("message") == HOSTILE
    assert xml_safe("a\x00b\ufffec") == "a\\x00b\\ufffec"


def test_junit_atomic_write_leaves_no_temp_files(tmp_path, results):
    path = tmp_path / "junit.xml"
    path.write_text("old")
    write_junit(results, path)
    write_junit(results[:1], path)
    assert [p.name for p in tmp_path.iterdir()] == ["junit.xml"]
    assert parse(path).get("tests") == "1"


def test_junit_tree_empty():
    root = junit_tree([]).getroot()
    assert root.get("tests") == "0" and root.findall("testsuite") == []


def test_junit_roundtrip_through_result_file(tmp_path, results):
    """Records read back from the JSON-lines file report the same as in-memory ones."""
    from amqpspec.result import ResultWriter, read_results

    file = tmp_path / "results.jsonl"
    with ResultWriter(file) as writer:
        for r in results:
            r.evidence.pop("extra", None)  # object() is not JSON
            writer.write(r)
    loaded = list(read_results(file))
    a, b = tmp_path / "a.xml", tmp_path / "b.xml"
    write_junit(results, a)
    write_junit(loaded, b)
    assert a.read_bytes() == b.read_bytes()


def test_extensions_sorted_last_and_counted_apart():
    from amqpspec.reports.console import section_sort_key

    order = sorted(["rabbitmq.confirm.select", "queue.declare", "scenario.shared-queue", "4.2.3"], key=section_sort_key)
    assert order == ["4.2.3", "queue.declare", "scenario.shared-queue", "rabbitmq.confirm.select"]
    ext = make("amqp091/rabbitmq.confirm.select/x", Verdict.PASSED)
    ext.section = "rabbitmq.confirm.select"
    out = render([make("a", Verdict.PASSED), ext])
    assert "of which vendor extensions (not the specification): 1 case" in out
