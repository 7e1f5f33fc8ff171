"""Files the suite reads may be crafted: too deep, too large or not JSON is one line and exit 2.

Python's JSON and TOML parsers recurse once per nesting level, so 100000 ``[`` used to end
``replay``, ``capture show``, ``html``, ``run --baseline``/``--profile`` and ``fuzz --seeds``
in a RecursionError traceback. Each command is run here on such a file.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from amqpspec import datafile
from amqpspec.errors import UsageError
from tests.support.hostile import HostileServer
from tests.support.hostile_strings import hostile_text_broker

DEEP_JSON = "[" * 100000
DEEP_OBJECT = '{"a":' * 100000
DEEP_TOML = {
    "inline arrays": 'product = "x"\nx = ' + "[" * 100000,
    "inline tables": 'product = "x"\nx = ' + "{a = " * 5000,
    "dotted keys": 'product = "x"\n' + ".".join(["a"] * 5000) + " = 1\n",
    "table headers": 'product = "x"\n[' + ".".join(["t"] * 5000) + "]\nx = 1\n",
}
UNREACHABLE = "amqp://guest:guest@127.0.0.1:9/"  # discard port: nothing listens


# ------------------------------------------------------------------ the module

@pytest.mark.parametrize("text", [DEEP_JSON, DEEP_OBJECT, '[1, {"a": ' * 60 + "0" + "}]" * 60],
                         ids=["arrays", "objects", "mixed"])
def test_deep_json_is_refused_before_parsing(text: str) -> None:
    with pytest.raises(datafile.DataFileError, match=r"^f\.json: line 1: nested deeper than 100 levels$"):
        datafile.parse_json(text, "f.json")


def test_brackets_inside_strings_do_not_count_and_depth_at_the_limit_passes() -> None:
    assert datafile.parse_json(json.dumps(["[" * 500, "{" * 500])) == ["[" * 500, "{" * 500]
    at_limit = "[" * datafile.MAX_DEPTH + "]" * datafile.MAX_DEPTH
    assert datafile.parse_json(at_limit) is not None
    escaped = json.dumps('\\"[[[' * 200)  # escaped quotes inside the string, then brackets
    assert datafile.parse_json(escaped) == '\\"[[[' * 200


def test_the_line_of_the_problem_is_named(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n' + DEEP_JSON + "\n" + '{"b": 2}\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"r\.jsonl: line 3: nested deeper"):
        list(datafile.iter_json_lines(path))
    path.write_text('{"a": 1}\nnot json\n{"b": 2}\n', encoding="utf-8")
    with pytest.raises(datafile.NotJSONError, match=r"r\.jsonl: line 2: not JSON"):
        list(datafile.iter_json_lines(path))
    doc = tmp_path / "d.json"
    doc.write_text('{\n "a": [1,\n 2,,]\n}', encoding="utf-8")
    with pytest.raises(UsageError, match=r"d\.json: line 3: not JSON"):
        datafile.load_json(doc)


def test_json_lines_split_on_newline_only_and_a_cut_last_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    odd = "a\u2028b\u2029c\x85d"
    # written as an older amqpspec did: the separators unescaped inside a string
    path.write_text(json.dumps({"t": odd}, ensure_ascii=False) + "\n" + '{"cut": "hal', encoding="utf-8")
    assert list(datafile.iter_json_lines(path)) == [(1, {"t": odd})]
    assert list(datafile.iter_json_lines("name", text=path.read_text(encoding="utf-8"))) == [(1, {"t": odd})]


def test_size_caps_are_errors_not_reads(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text(json.dumps(["x" * 2000]), encoding="utf-8")
    with pytest.raises(UsageError, match=r"big\.json: .*more than a JSON file may hold \(1000\)"):
        datafile.load_json(big, max_bytes=1000)
    lines = tmp_path / "long.jsonl"
    lines.write_text('{"a": 1}\n' + json.dumps(["x" * 2000]) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"long\.jsonl: line 2: a line longer than 1000 octets"):
        list(datafile.iter_json_lines(lines, max_line_bytes=1000))


def test_raw_lines_keep_counting_past_an_overlong_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"a\n" + b"x" * 5000 + b"\nb\r\nc")
    with open(path, "rb") as fh:
        assert list(datafile.raw_lines(fh, 100)) == [(1, b"a\n"), (2, None), (3, b"b\r\n"), (4, b"c")]


@pytest.mark.parametrize("kind", list(DEEP_TOML))
def test_deep_toml_is_an_error(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(DEEP_TOML[kind], encoding="utf-8")
    with pytest.raises(UsageError, match=r"p\.toml: (line \d+: )?(nested deeper than 100 levels|not TOML)"):
        datafile.load_toml(path)


def test_toml_syntax_error_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('a = 1\nb = "x\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"^.*p\.toml: line 2: not TOML \("):
        datafile.load_toml(path)


# ------------------------------------------------------------------ each command that reads such a file

def _amqpspec(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "amqpspec.cli", *args], capture_output=True, text=True,
                          timeout=timeout, errors="replace")


def _one_line_usage_error(proc: subprocess.CompletedProcess[str], path: Path) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert path.name in lines[0] and ("nested deeper" in lines[0] or "not TOML" in lines[0]), lines[0]


@pytest.fixture(scope="module")
def fake_broker():
    """Commands that read their file only after connecting need something to connect to."""
    with HostileServer(hostile_text_broker) as server:
        yield server


@pytest.mark.parametrize("text", [DEEP_JSON, DEEP_OBJECT], ids=["arrays", "objects"])
def test_replay_and_capture_commands(text: str, tmp_path: Path) -> None:
    path = tmp_path / "finding.json"
    path.write_text(text, encoding="utf-8")
    _one_line_usage_error(_amqpspec("replay", str(path), UNREACHABLE), path)
    _one_line_usage_error(_amqpspec("capture", "show", str(path)), path)
    _one_line_usage_error(_amqpspec("capture", "export", str(path), "--out", str(tmp_path / "x.pcap")), path)
    lines = tmp_path / "results.jsonl"
    lines.write_text('{"case": "a", "transcript": []}\n' + text + "\n", encoding="utf-8")
    _one_line_usage_error(_amqpspec("capture", "show", str(lines)), lines)


def test_html_reads_a_deep_bundle(tmp_path: Path) -> None:
    path = tmp_path / "bundle.json"
    path.write_text('{"kind": "amqpspec-report-bundle", "schema": 1, "x": ' + DEEP_JSON, encoding="utf-8")
    _one_line_usage_error(_amqpspec("html", str(path), "--out", str(tmp_path / "site")), path)


def test_run_baseline(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text('{"schema": 1, "verdicts": ' + DEEP_OBJECT, encoding="utf-8")
    _one_line_usage_error(_amqpspec("run", UNREACHABLE, "--protocol", "0-9-1", "--baseline", str(path)), path)


@pytest.mark.parametrize("kind", ["inline arrays", "dotted keys"])
def test_run_profile(kind: str, tmp_path: Path, fake_broker: HostileServer) -> None:
    path = tmp_path / "profile.toml"
    path.write_text(DEEP_TOML[kind], encoding="utf-8")
    # the profile is read after the broker is probed (its product picks the shipped one)
    proc = _amqpspec("run", fake_broker.url, "--protocol", "0-9-1", "--profile", str(path), "--case", "amqp091/4.2.2/*")
    _one_line_usage_error(proc, path)


def test_fuzz_seeds(tmp_path: Path) -> None:
    path = tmp_path / "seed.json"
    path.write_text(DEEP_JSON, encoding="utf-8")
    proc = _amqpspec("fuzz", UNREACHABLE, "--protocol", "0-9-1", "--seeds", str(path),
                     "--findings", str(tmp_path / "findings"))
    assert proc.returncode == 2, (proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "seed.json" in lines[0] and "nested deeper" in lines[0], proc.stderr


def test_findings_directory_passes_over_a_deep_file(tmp_path: Path) -> None:
    from amqpspec.fuzz.findings import FindingStore

    (tmp_path / "0123456789abcdef.json").write_text(DEEP_JSON, encoding="utf-8")
    store = FindingStore(tmp_path)
    assert store.known() == {} and store.load("0123456789abcdef") is None
