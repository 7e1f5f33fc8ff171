"""Console reporter: a live progress display, then a tree of results by spec section.

The tree reads like h2spec's: one group per spec section in spec order, one line per case,
and under every case that needs attention the evidence a broker developer acts on
(clauses, expected vs observed, how the connection ended, the replay command).

Everything a broker sent us (reply texts, product names, decoded frames) is hostile input:
it is never interpreted as rich markup and its control characters are shown escaped, so a
reply text like ``"[bold]x[/]\\x1b[2J"`` cannot restyle or wipe the terminal.

The helpers at module level (``format_close``, ``case_details``, ``transcript_lines``,
``group_by_section``, ``fails_run``...) return plain strings and are shared with the other
reporters, so that every report words the same facts the same way.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import urlsplit, urlunsplit

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from amqpspec.result import CloseInfo, Result, Verdict
from amqpspec.sanitize import printable
from amqpspec.reports.counts import is_documented_deviation

__all__ = [
    "ConsoleReporter",
    "Group",
    "case_details",
    "case_sort_key",
    "count_verdicts",
    "fails_run",
    "format_close",
    "format_summary",
    "group_by_section",
    "printable",
    "redact_url",
    "run_failed",
    "section_sort_key",
    "transcript_lines",
    "verdict_of",
]

# --------------------------------------------------------------------------------------
# plain-text helpers shared by all reporters
# --------------------------------------------------------------------------------------

# printable() lives in amqpspec.sanitize (one sanitiser for every output); re-exported here
# because the reporters and their users have always imported it from this module.


def redact_url(url: Any) -> str:
    """The URL with any password replaced: results should never carry one, but a report
    is the last place to make sure it does not leak."""
    text = printable(url)
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    if parts.password is None:
        return text
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"{parts.username or ''}:***@{host}" + (f":{port}" if port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def verdict_of(result: Any) -> Verdict:
    """The verdict of a record, tolerating plain strings; anything unknown is an error,
    because the suite could not decide it."""
    value = getattr(result, "verdict", None)
    if isinstance(value, Verdict):
        return value
    try:
        return Verdict(str(getattr(value, "value", value)).strip().lower())
    except ValueError:
        return Verdict.ERROR


def _deviation(result: Any) -> str | None:
    value = getattr(result, "deviation", None)
    if value is None or value == "":
        return None
    return printable(value)


def fails_run(result: Any, strict: bool = False) -> bool:
    """Whether this case makes the run fail.

    A failed case does, unless a broker profile documents it as a known deviation; with
    ``strict`` deviations and warnings (unmet SHOULDs) fail the run too. An error is never
    counted against the broker's compliance, but it still fails the *run*: a run that
    could not decide some cases has not shown that nothing failed, and CI must notice a
    broker that died half-way instead of reading silence as success.
    """
    verdict = verdict_of(result)
    if verdict is Verdict.FAILED:
        return strict or _deviation(result) is None
    if verdict is Verdict.WARNING:
        return strict
    return verdict is Verdict.ERROR


def run_failed(results: Iterable[Any], strict: bool = False) -> bool:
    return any(fails_run(r, strict) for r in results)


_NUMERIC_SECTION = re.compile(r"[0-9]+(?:\.[0-9]+)*\.?")
_DIGITS = re.compile(r"([0-9]+)")


def _natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    parts = []
    for part in _DIGITS.split(text):
        if not part:
            continue
        if part.isascii() and part.isdigit():
            parts.append((0, int(part), part))
        else:
            parts.append((1, 0, part.lower()))
    return tuple(parts)


def section_sort_key(section: Any) -> tuple[Any, ...]:
    """Spec order: numeric sections numerically ("4.2.3" < "4.2.10"), then named sections
    ("channel.open", "connection.start") by name, then results without a section."""
    text = printable(section).strip()
    if not text:
        return (4,)
    if _NUMERIC_SECTION.fullmatch(text):
        return (0, tuple(int(n) for n in text.rstrip(".").split(".")))
    if text.startswith(SCENARIO_PREFIX):  # real-client scenarios after the catalog ...
        return (2, _natural_key(text), text)
    if text.startswith(EXTENSION_PREFIX):  # ... and vendor extensions last, apart from the spec
        return (3, _natural_key(text), text)
    return (1, _natural_key(text), text)


EXTENSION_PREFIX = "rabbitmq."
SCENARIO_PREFIX = "scenario."


def is_extension(result: Any) -> bool:
    """A case about a vendor extension, reported apart from the specification's cases."""
    return printable(getattr(result, "section", "")).startswith(EXTENSION_PREFIX)


def case_sort_key(case_id: Any) -> tuple[Any, ...]:
    """Case-id order, with embedded numbers compared as numbers ("case-2" < "case-10")."""
    text = printable(case_id)
    return (_natural_key(text), text)


@dataclass
class Group:
    """The results of one spec section of one protocol, in case-id order."""

    protocol: str
    section: str
    section_title: str
    results: list[Any]

    @property
    def heading(self) -> str:
        section = self.section or "(no section)"
        return f"{section} {self.section_title}".strip()


def group_by_section(results: Iterable[Any]) -> list[Group]:
    """Results grouped by (protocol, section), groups and cases in spec order."""
    groups: dict[tuple[str, str], Group] = {}
    for result in results:
        protocol = printable(getattr(result, "protocol", "")).strip()
        section = printable(getattr(result, "section", "")).strip()
        key = (protocol, section)
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(protocol, section, "", [])
        if not group.section_title:
            group.section_title = printable(getattr(result, "section_title", "")).strip()
        group.results.append(result)
    ordered = sorted(
        groups.values(),
        key=lambda g: (g.protocol.lower(), g.protocol, section_sort_key(g.section), g.section),
    )
    for group in ordered:
        group.results.sort(key=lambda r: case_sort_key(getattr(r, "case", "")))
    return ordered


def _join_codes(codes: Sequence[Any]) -> str:
    items = [printable(c) for c in codes]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def _as_close(close: Any) -> CloseInfo | None:
    if isinstance(close, CloseInfo):
        return close
    if isinstance(close, Mapping):
        known = set(CloseInfo.__dataclass_fields__)
        try:
            return CloseInfo(**{k: v for k, v in close.items() if k in known})
        except TypeError:
            return None
    return None


def format_close(close: CloseInfo | Mapping[str, Any] | None) -> str:
    """The close verdict in one line, e.g.
    ``closed by broker with connection.close 501 "FRAME_ERROR" (expected 501): matched``,
    ``closed by broker: fin``, ``still open``.
    """
    info = _as_close(close)
    if info is None:
        return "unknown"
    who = printable(info.who).strip() or "none"
    how = printable(info.how).strip() or "none"
    if who == "none" and how == "none":
        text = "still open"
    else:
        by = "" if who == "none" else f" by {who}"
        if how.endswith(".close") or info.code is not None:
            text = f"closed{by} with {how}"
            if info.code is not None:
                text += f" {printable(info.code)}"
            if info.text:
                text += f' "{printable(info.text)}"'
        else:
            text = f"closed{by}: {how}"
    expected = info.expected_codes
    if isinstance(expected, (list, tuple)):
        text += f" (expected {_join_codes(expected)})" if expected else " (expected no close)"
    elif expected is not None:
        text += f" (expected {printable(expected)})"
    if info.matched is True:
        text += ": matched"
    elif info.matched is False:
        text += ": NOT matched"
    return text


_ARROWS = {"send": "->", "recv": "<-", "event": "**"}


def transcript_lines(transcript: Any) -> list[str]:
    """The decoded transcript as aligned lines, ``  0.003 -> connection.start-ok(...)``.

    A transcript stored beside the result file (a path) is named, not loaded: a report
    must not depend on that file still being there.
    """
    if transcript is None or transcript == [] or transcript == "":
        return []
    if isinstance(transcript, (str, bytes)) or not isinstance(transcript, Iterable):
        return [f"transcript: {printable(transcript)}"]
    lines = []
    for entry in transcript:
        if not isinstance(entry, Mapping):
            lines.append(f"{'':7} ?? {printable(entry)}")
            continue
        try:
            stamp = f"{float(entry.get('t')):7.3f}"
        except (TypeError, ValueError, OverflowError):
            stamp = f"{'':7}"
        direction = printable(entry.get("dir", "")).strip()
        arrow = _ARROWS.get(direction, "??")
        summary = entry.get("summary")
        if summary is None or summary == "":
            raw = printable(entry.get("hex", ""))
            summary = (raw[:96] + "...") if len(raw) > 96 else raw
            if raw:
                summary = f"hex {summary}"
        lines.append(f"{stamp} {arrow} {printable(summary)}")
    return lines


def _checks(evidence: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    raw = evidence.get("checks")
    if not isinstance(raw, (list, tuple)):
        return []
    checks = []
    for check in raw:
        if isinstance(check, Mapping):
            checks.append(check)
        elif hasattr(check, "__dataclass_fields__"):
            checks.append({k: getattr(check, k, None) for k in check.__dataclass_fields__})
    return checks


def case_details(result: Any) -> list[tuple[str, str]]:
    """The evidence of one case as (label, text) pairs, in reading order.

    Labels: ``deviation``, ``clauses``, ``expected``, ``observed``, ``check``, ``close``,
    ``replay``. Texts are display-safe; ``expected``/``observed`` may span lines.
    """
    details: list[tuple[str, str]] = []
    deviation = _deviation(result)
    if deviation is not None:
        details.append(("deviation", f"documented deviation: {deviation}"))
    clauses = getattr(result, "clauses", None)
    if isinstance(clauses, (list, tuple)):
        clause_text = ", ".join(printable(c) for c in clauses)
    else:
        clause_text = printable(clauses)
    if clause_text:
        details.append(("clauses", clause_text))
    evidence = getattr(result, "evidence", None)
    if not isinstance(evidence, Mapping):
        evidence = {"observed": evidence} if evidence not in (None, "", {}) else {}
    shown = False
    for key in ("expected", "observed"):
        if key in evidence and evidence[key] not in (None, ""):
            details.append((key, printable(evidence[key], multiline=True)))
            shown = True
    if not shown:
        # no summary from the case: fall back to the checks that did not pass
        for check in _checks(evidence):
            try:
                check_verdict = Verdict(getattr(check.get("verdict"), "value", check.get("verdict")))
            except ValueError:
                check_verdict = Verdict.ERROR
            if check_verdict is Verdict.PASSED:
                continue
            desc = printable(check.get("description", "")) or "check"
            check_clauses = check.get("clauses")
            if isinstance(check_clauses, (list, tuple)) and check_clauses:
                desc += f" [{', '.join(printable(c) for c in check_clauses)}]"
            details.append(("check", f"{check_verdict.value}: {desc}"))
            for key in ("expected", "observed"):
                if check.get(key) not in (None, ""):
                    details.append((key, printable(check[key], multiline=True)))
    close = getattr(result, "close", None)
    if close is not None:
        details.append(("close", format_close(close)))
    replay = getattr(result, "replay", "")
    if replay:
        details.append(("replay", printable(replay)))
    return details


_ORDER = [
    Verdict.PASSED,
    Verdict.FAILED,
    Verdict.WARNING,
    Verdict.INFORMATIONAL,
    Verdict.SKIPPED,
    Verdict.ERROR,
]


def count_verdicts(results: Iterable[Any]) -> dict[str, int]:
    """Counts per verdict value, plus ``total`` and ``deviations`` (failed cases with a
    documented deviation, included in ``failed``)."""
    counts = {v.value: 0 for v in _ORDER}
    counts["total"] = 0
    counts["deviations"] = 0
    for result in results:
        verdict = verdict_of(result)
        counts[verdict.value] += 1
        counts["total"] += 1
        if is_documented_deviation(verdict, getattr(result, "deviation", None)):
            counts["deviations"] += 1
    return counts


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _summary_parts(counts: Mapping[str, int]) -> list[tuple[str, Verdict | None]]:
    failed = f"{counts['failed']} failed"
    if counts["deviations"]:
        failed += f" ({_plural(counts['deviations'], 'documented deviation')})"
    return [
        (f"{counts['passed']} passed", Verdict.PASSED),
        (failed, Verdict.FAILED),
        (_plural(counts["warning"], "warning"), Verdict.WARNING),
        (f"{counts['informational']} informational", Verdict.INFORMATIONAL),
        (f"{counts['skipped']} skipped", Verdict.SKIPPED),
        (_plural(counts["error"], "error"), Verdict.ERROR),
    ]


def format_summary(results: Iterable[Any], elapsed_s: float | None = None) -> str:
    """``74 cases: 60 passed, 6 failed (2 documented deviations), 3 warnings, ...  in 12.3s``"""
    counts = count_verdicts(results)
    text = f"{_plural(counts['total'], 'case')}: " + ", ".join(p for p, _ in _summary_parts(counts))
    if elapsed_s is not None:
        text += f"  in {_seconds(elapsed_s)}"
    return text


def _seconds(value: Any) -> str:
    try:
        return f"{float(value):.1f}s"
    except (TypeError, ValueError, OverflowError):
        return "?s"


# --------------------------------------------------------------------------------------
# the console reporter
# --------------------------------------------------------------------------------------

_STYLE = {
    Verdict.PASSED: "green",
    Verdict.FAILED: "red",
    Verdict.WARNING: "yellow",
    Verdict.INFORMATIONAL: "blue",
    Verdict.SKIPPED: "dim",
    Verdict.ERROR: "magenta",
}
_MARK_UTF8 = {
    Verdict.PASSED: "✔",
    Verdict.FAILED: "✘",
    Verdict.WARNING: "!",
    Verdict.INFORMATIONAL: "i",
    Verdict.SKIPPED: "-",
    Verdict.ERROR: "?",
}
_MARK_ASCII = {
    Verdict.PASSED: "+",
    Verdict.FAILED: "x",
    Verdict.WARNING: "!",
    Verdict.INFORMATIONAL: "i",
    Verdict.SKIPPED: "-",
    Verdict.ERROR: "?",
}
_DETAIL_STYLE = {
    "deviation": "yellow",
    "clauses": "cyan",
    "check": "",
    "expected": "green",
    "observed": "red",
    "close": "",
    "replay": "dim",
}
# cases whose evidence is printed even without --verbose
_NEEDS_DETAILS = {Verdict.FAILED, Verdict.WARNING, Verdict.ERROR}


class ConsoleReporter:
    """Live progress while cases run, then the result tree and the summary.

    ``case_started`` / ``case_finished`` may be called from worker threads, in any order.
    When the console is not a terminal (CI logs, pipes) nothing is printed until
    ``finish``, so logs hold only the final tree.
    """

    def __init__(
        self,
        console: Console | None = None,
        *,
        verbose: bool = False,
        strict: bool = False,
        ascii_only: bool | None = None,
    ) -> None:
        self.console = console if console is not None else Console()
        self.verbose = verbose
        self.strict = strict
        if ascii_only is None:
            ascii_only = not self.console.encoding.replace("_", "-").startswith("utf")
        self.ascii_only = ascii_only
        self._marks = _MARK_ASCII if ascii_only else _MARK_UTF8
        self._dash = " -- " if ascii_only else " — "
        self._lock = threading.Lock()
        self._run_info: dict[str, Any] = {}
        self._results: list[Any] = []
        self._failing = 0
        self._progress: Progress | None = None
        self._task: Any = None

    # -- live part -------------------------------------------------------------------

    def start(self, run_info: Mapping[str, Any] | None = None) -> None:
        with self._lock:
            self._run_info = dict(run_info or {})
            self._results = []
            self._failing = 0
            if not self.console.is_terminal or self._progress is not None:
                return
            total = self._run_info.get("cases")
            try:
                total = int(total) if total is not None else None
            except (TypeError, ValueError):
                total = None
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[failing]} failing", style="red", markup=False),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._task = self._progress.add_task("running", total=total, failing=0)
            self._progress.start()

    def case_started(self, case_id: str) -> None:
        with self._lock:
            if self._progress is not None:
                self._progress.update(self._task, description=printable(case_id)[:40])

    def case_finished(self, result: Result) -> None:
        with self._lock:
            self._results.append(result)
            try:
                if fails_run(result, self.strict):
                    self._failing += 1
            except Exception:  # odd record: still count it as done
                pass
            if self._progress is not None:
                self._progress.update(self._task, advance=1, failing=self._failing)

    def close(self) -> None:
        """Stops the live display (idempotent); ``finish`` calls it, an interrupted run
        should too, so the terminal is left clean."""
        with self._lock:
            progress, self._progress = self._progress, None
        if progress is not None:
            progress.stop()

    # -- final report ----------------------------------------------------------------

    def finish(self, results: Sequence[Result] | None = None, elapsed_s: float | None = None) -> None:
        self.close()
        if results is None:
            with self._lock:
                results = list(self._results)
        results = list(results)
        self._print(self._header(results))
        self._print(Text(""))
        groups = group_by_section(results)
        show_protocol = len({g.protocol for g in groups}) > 1
        current_protocol: str | None = None
        indent = "  " if show_protocol else ""
        for group in groups:
            if show_protocol and group.protocol != current_protocol:
                current_protocol = group.protocol
                self._print(Text(group.protocol or "(no protocol)", style="bold underline"))
            self._print(Text(indent + group.heading, style="bold"))
            for result in group.results:
                self._print_case(result, indent + "  ")
            self._print(Text(""))
        self._print_summary(results, elapsed_s)

    def _print(self, text: Text) -> None:
        # soft_wrap: long lines (replay commands) stay whole for copy and paste
        self.console.print(text, soft_wrap=True, highlight=False)

    def _header(self, results: Sequence[Any]) -> Text:
        info = self._run_info
        first = results[0] if results else None
        target = info.get("target") or getattr(first, "target", "")
        broker = info.get("broker") or getattr(first, "broker", {}) or {}
        protocol = info.get("protocol") or getattr(first, "protocol", "")
        seed = info.get("seed", getattr(first, "seed", None))
        text = Text("amqpspec", style="bold")
        text.append(f"  target {redact_url(target) or '?'}")
        if isinstance(broker, Mapping):
            name = " ".join(
                printable(broker.get(k)) for k in ("product", "version") if broker.get(k)
            )
            platform = printable(broker.get("platform", "")) if broker.get("platform") else ""
        else:
            name, platform = printable(broker), ""
        text.append(f"  broker {name or 'unknown'}")
        if platform:
            text.append(f" ({platform})")
        if protocol:
            text.append(f"  protocol {printable(protocol)}")
        if seed is not None and seed != "":
            text.append(f"  seed {printable(seed)}")
        if info.get("jobs") not in (None, ""):
            text.append(f"  jobs {printable(info['jobs'])}", style="dim")
        return text

    def _print_case(self, result: Any, indent: str) -> None:
        verdict = verdict_of(result)
        deviation = _deviation(result)
        style = "yellow" if (deviation is not None and verdict is Verdict.FAILED) else _STYLE[verdict]
        line = Text(indent)
        line.append(self._marks[verdict], style=style)
        line.append(" ")
        case_id = printable(getattr(result, "case", ""))
        title = printable(getattr(result, "title", "")) or case_id
        if case_id and case_id != title:
            line.append(f"{case_id}: ", style="dim")
        line.append(title)
        reason = printable(getattr(result, "reason", ""))
        evidence = getattr(result, "evidence", None)
        expected = printable(evidence.get("expected", "")) if isinstance(evidence, Mapping) else ""
        # the details below already show expected/observed: repeat the reason only when it says more
        repeats = verdict in _NEEDS_DETAILS and bool(expected) and expected in reason
        if verdict is not Verdict.PASSED and reason and not repeats:
            line.append(self._dash + reason, style=style)
        self._print(line)

        sub = indent + "    "
        if verdict in _NEEDS_DETAILS or self.verbose:
            for label, value in case_details(result):
                if label == "deviation":
                    self._print(Text(sub + value, style="yellow"))
                    continue
                head = f"{label}: "
                lines = value.split("\n")
                out = Text(sub)
                out.append(head, style=_DETAIL_STYLE.get(label, ""))
                out.append(lines[0])
                for more in lines[1:]:
                    out.append("\n" + sub + " " * len(head) + more)
                self._print(out)
        elif deviation is not None:
            self._print(Text(sub + f"documented deviation: {deviation}", style="yellow"))
        if self.verbose:
            frames = transcript_lines(getattr(result, "transcript", None))
            if frames and not frames[0].startswith("transcript: "):
                self._print(Text(sub + "transcript:", style="cyan"))
            for frame in frames:
                self._print(Text(sub + frame, style="dim" if "**" in frame[:11] else ""))

    def _print_summary(self, results: Sequence[Any], elapsed_s: float | None) -> None:
        counts = count_verdicts(results)
        summary = Text(f"{_plural(counts['total'], 'case')}: ", style="bold")
        for i, (part, verdict) in enumerate(_summary_parts(counts)):
            if i:
                summary.append(", ")
            n = counts[verdict.value] if verdict else 0
            summary.append(part, style=_STYLE[verdict] if (verdict and n) else "")
        if elapsed_s is not None:
            summary.append(f"  in {_seconds(elapsed_s)}")
        self._print(summary)
        extensions = [r for r in results if is_extension(r)]
        if extensions:
            ext = count_verdicts(extensions)
            line = Text(f"of which vendor extensions (not the specification): {_plural(ext['total'], 'case')}: ",
                        style="dim")
            line.append(", ".join(part for part, _ in _summary_parts(ext)), style="dim")
            self._print(line)

        failing = [r for r in results if fails_run(r, self.strict)]
        if failing:
            n_failed = sum(1 for r in failing if verdict_of(r) is Verdict.FAILED)
            n_warn = sum(1 for r in failing if verdict_of(r) is Verdict.WARNING)
            parts = []
            if n_failed:
                n_dev = sum(
                    1 for r in failing
                    if is_documented_deviation(verdict_of(r), getattr(r, "deviation", None))
                )
                part = _plural(n_failed, "failed case")
                if n_dev:
                    part += f" (including {_plural(n_dev, 'documented deviation')}, --strict)"
                parts.append(part)
            if n_warn:
                parts.append(_plural(n_warn, "warning") + " (--strict)")
            final = Text("RUN FAILED: " + (", ".join(parts) or "undecided cases"), style="bold red")
        elif not results:
            final = Text("NO CASES RAN: check the case selection", style="bold yellow")
        else:
            notes = []
            if counts["deviations"]:
                notes.append(_plural(counts["deviations"], "documented deviation") + " accepted")
            if counts["warning"]:
                notes.append(_plural(counts["warning"], "warning") + " not counted without --strict")
            final = Text("RUN PASSED", style="bold green")
            if notes:
                final.append(" (" + "; ".join(notes) + ")", style="green")
        if counts["error"]:
            final.append(
                f"; {_plural(counts['error'], 'case')} could not be decided (error):"
                " not a broker failure, check reachability and timeouts, then re-run",
                style="magenta",
            )
        self._print(final)
