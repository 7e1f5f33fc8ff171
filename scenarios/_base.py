"""What the real-client scenario helpers of both protocols share (``amqp091/_pika.py``,
``amqp10/_proton.py``): the exceptions a step ends with, the checks that record a step as
passed or failed against the case's clauses, and running a scenario body to its end.

The clients, and how a broker's refusal looks in each protocol, stay in the helpers.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

from amqpspec.clauses import Level

if TYPE_CHECKING:
    from amqpspec.case import Context

T = TypeVar("T")


class ScenarioError(Exception):
    """A step could not be completed for a reason the spec does not decide: reported as error."""


class Refusal(ScenarioError):
    """The broker refused a step (closed or detached what it went to); ``observed`` says how."""

    @property
    def observed(self) -> str:
        raise NotImplementedError


class StepTimeout(ScenarioError):
    """No answer to a step within its time."""


class StopScenario(Exception):
    """A failed check made the rest of the scenario pointless (the check is already recorded)."""


class Checks:
    """``require`` and ``check`` for a scenario holding the case context as ``ctx``."""

    ctx: Context

    def require(self, what: str, fn: Callable[[], T], *, expected: str, clauses: tuple[str, ...] | None = None,
                level: Level | None = None, guideline: str = "") -> T:
        """A step the cited text says must work: a broker refusal is a failed check, and the end
        of the scenario. Success is recorded too, so the report shows the step."""
        try:
            value = fn()
        except Refusal as exc:
            self._record(False, what, expected, exc.observed, clauses, level, guideline)
            raise StopScenario(what) from None
        self._record(True, what, expected, "done", clauses, level, guideline)
        return value

    def check(self, ok: bool, what: str, *, expected: str, observed: str, clauses: tuple[str, ...] | None = None,
              level: Level | None = None, guideline: str = "") -> bool:
        self.ctx.transcript.event(f"check {'passed' if ok else 'FAILED'}: {what}")
        return self._record(ok, what, expected, observed, clauses, level, guideline)

    def _record(self, ok: bool, what: str, expected: str, observed: str, clauses: tuple[str, ...] | None,
                level: Level | None, guideline: str) -> bool:
        """``clauses`` None: the case's own clauses (or its guideline); a check of another text gives
        its clauses, or ``level`` and ``guideline``."""
        spec = self.ctx.spec
        if guideline and guideline == spec.guideline and level in (None, spec.level) and not clauses:
            level, guideline = None, ""  # the case's own guideline: already stated once for the case
        return self.ctx.record(ok, expected=expected, observed=observed, what=what, clauses=clauses, level=level,
                               guideline=guideline)


def refused(fn: Callable[[], Any]) -> Refusal | None:
    """Runs a step that may be refused: the refusal, or None when the broker accepted it."""
    try:
        fn()
    except Refusal as exc:
        return exc
    return None


def run_body(ctx: Context, scenario: Any, body: Callable[[Any], None]) -> None:
    """Runs a scenario body with its clients closed at the end (``scenario`` is a context
    manager); a failed check that stops the scenario ends it quietly (the runner reports the
    failed check)."""
    with scenario as sc:
        try:
            body(sc)
        except StopScenario as stop:
            ctx.note(f"the scenario stopped after the failed step: {stop}")


def describe_exception(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text
