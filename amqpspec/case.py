"""Cases: one check each, registered by decorator with the clause ids it verifies.

A case module (in ``conformance/``) defines functions decorated with :func:`case`.
Importing the module registers them; the runner discovers modules by walking the
package, so there is no list of cases to maintain by hand. A case function receives a
:class:`Context`, drives the broker through peers, and records checks; the verdict is
derived from the checks and the levels of the clauses they cite.
"""
from __future__ import annotations

import fnmatch
import functools
import hashlib
import importlib
import pkgutil
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from amqpspec import brokerops
from amqpspec import clauses as clause_catalog
from amqpspec.clauses import Level
from amqpspec.errors import AmqpspecError
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.result import Check, CloseInfo, Verdict
from amqpspec.target import Target
from amqpspec.transcript import Transcript
from amqpspec.verify import Verifier
from amqpspec.wire.amqp091 import SPEC, Dialect

PROTOCOL_PREFIXES = {"amqp091": "0-9-1", "amqp10": "1.0"}
# where the cases of each protocol live: the conformance catalog, then the real-client scenarios
CASE_PACKAGES = {
    "0-9-1": ("amqpspec.conformance.amqp091", "amqpspec.scenarios.amqp091"),
    "1.0": ("amqpspec.conformance.amqp10", "amqpspec.scenarios.amqp10"),
}
#: where the client-role cases live (amqpspec plays the broker and judges a client library)
CLIENT_CASE_PACKAGES = {"0-9-1": ("amqpspec.conformance.client091",), "1.0": ("amqpspec.conformance.client10",)}
ROLES = ("broker", "client")  # whose conduct a case judges
EXTENSION_PREFIX = "rabbitmq."  # sections of cases that test vendor extensions, reported apart
_ID_RE = re.compile(r"^(amqp091|amqp10)/([A-Za-z0-9.\-]+)/([a-z0-9][a-z0-9.\-]*)$")


class Skip(Exception):
    """Raised by a case when the feature is not offered or the case does not apply."""


NO_RESTART_COMMAND = "needs --restart-command (the clause is about what survives a broker restart)"


class RestartFailed(AmqpspecError):
    """The broker did not serve again after the run's restart command: a case that restarts it
    cannot decide anything about the broker."""


class CaseDefinitionError(AmqpspecError):
    """A case is declared wrongly (bad id, unknown clause, a module that does not import): a
    bug in the catalog, reported as one line like any other error of the suite."""


@dataclass(frozen=True)
class CaseSpec:
    id: str
    title: str
    protocol: str
    section: str
    clauses: tuple[str, ...]
    requires: tuple[str, ...]
    timeout: float
    func: Callable[["Context"], None]
    description: str = ""
    module: str = ""
    # A case that names the text it checks instead of clause ids (``guideline=``, verbatim spec
    # text, see amqpspec.clauses.quote): ``clauses`` then holds the ids the text resolves to, and
    # ``level`` the weight of its checks -- the strongest level of those sentences, or a weaker
    # one the case declares (a failure of a definition-level text is only informational).
    level: Level | None = None
    guideline: str = ""
    #: the case changes the broker for everyone (it restarts it), or measures timings that cases
    #: beside it would blur: run alone, after the others
    exclusive: bool = False
    #: whose conduct the case judges: "broker" (``amqpspec run``) or "client" (``amqpspec client``)
    role: str = "broker"
    quoted: tuple[str, ...] = ()  # the ids ``guideline`` resolves to (the clauses when none is cited)

    @property
    def section_title(self) -> str:
        return section_title(self.protocol, self.section)

    @property
    def cited(self) -> tuple[str, ...]:
        """The clause ids the case cites itself (``clauses=``), not those its guideline resolves to:
        coverage counts these, so quoting a clause's sentence in a guideline does not cover it."""
        return () if self.quoted and self.clauses == self.quoted else self.clauses

    @property
    def extension(self) -> bool:
        """A vendor extension (e.g. RabbitMQ's publisher confirms), not the specification."""
        return self.section.startswith(EXTENSION_PREFIX)


REGISTRY: dict[str, CaseSpec] = {}


def case(
    id: str,
    *,
    title: str,
    clauses: tuple[str, ...] | list[str] = (),
    requires: tuple[str, ...] | list[str] = (),
    timeout: float = 10.0,
    level: Level | None = None,
    guideline: str = "",
    exclusive: bool = False,
    role: str = "broker",
) -> Callable[[Callable[["Context"], None]], Callable[["Context"], None]]:
    """Registers a case. ``id`` is ``<protocol>/<section>/<name>``, e.g. ``amqp091/4.2.3/frame-end-zero``.

    ``exclusive`` cases change the broker for every connection (a restart), or judge timings finer
    than the delays other cases running beside them cause: the runner runs them one at a time,
    after the cases that may run side by side."""

    def register(func: Callable[["Context"], None]) -> Callable[["Context"], None]:
        m = _ID_RE.match(id)
        if not m:
            raise CaseDefinitionError(f"case id {id!r} is not <amqp091|amqp10>/<section>/<name>")
        protocol = PROTOCOL_PREFIXES[m.group(1)]
        known = clause_catalog.by_id(protocol, documentation=True)
        for cid in clauses:
            if cid not in known:
                raise CaseDefinitionError(f"case {id} cites unknown clause {cid!r}")
        if not clauses and not guideline:
            raise CaseDefinitionError(f"case {id} cites no clause: give clauses= or the guideline= text it checks")
        quoted: tuple[str, ...] = ()
        weight = level
        if guideline:
            quoted, weight = guideline_weight(protocol, guideline, m.group(2), level, f"case {id}", clauses)
            weight = weight if not clauses else level  # cited clauses weigh a case's checks themselves
        if role not in ROLES:
            raise CaseDefinitionError(f"case {id}: role {role!r} is not one of {', '.join(ROLES)}")
        if id in REGISTRY and inspect_unwrap(REGISTRY[id].func) is not func:
            raise CaseDefinitionError(f"case id {id} is registered twice ({REGISTRY[id].module} and {func.__module__})")
        doc = (func.__doc__ or "").strip()
        runs = _version_guarded(func) if any(known[cid].versions for cid in tuple(clauses) or quoted) else func
        REGISTRY[id] = CaseSpec(id, title, protocol, m.group(2), tuple(clauses) or quoted, tuple(requires), timeout,
                                runs, doc, func.__module__, weight, guideline, exclusive, role, quoted)
        return func

    return register


def guideline_weight(protocol: str, guideline: str, section: str, level: Level | None,
                     who: str, clauses: tuple[str, ...] | list[str] = (), *,
                     cap: bool = False) -> tuple[tuple[str, ...], Level]:
    """The ids of the sentences ``guideline`` quotes and the weight of a check of it.

    The weight is ``level`` when given, the strongest level of the quoted sentences (and of the
    ``clauses`` the check cites beside them) otherwise. A declared level stronger than all of
    that text (SHOULD on a sentence without a SHOULD: a reply code's description, a "can", a
    label) is a catalog bug, raised as CaseDefinitionError, as is a guideline that is not
    verbatim text of the specification. With ``cap`` (a check recorded while a case runs, whose
    text a shared helper may choose) such a level is lowered to the text's instead: a running
    case never dies of it, and tests/unit/test_case_clauses.py finds the written ones.
    """
    try:
        ids = clause_catalog.quote.resolve(protocol, guideline, section)
    except clause_catalog.quote.UnquotedTextError as exc:
        raise CaseDefinitionError(f"{who}: guideline is not verbatim spec text: {exc}") from None
    known = clause_catalog.by_id(protocol, documentation=True)
    text_level = clause_catalog.quote.strongest([known[i] for i in (*ids, *clauses) if i in known])
    if text_level is Level.NONE:
        # an XML rule without a keyword (the "syntax" rules): normative, weighed by the case
        if level is None:
            raise CaseDefinitionError(f"{who}: the text it checks ({', '.join(ids)}) is a rule without an RFC 2119 "
                                      "keyword: give the level= the case weighs it with")
        return ids, level
    if level is None:
        return ids, text_level
    if level.rank < text_level.rank:
        if cap:
            return ids, text_level
        raise CaseDefinitionError(f"{who}: level {level.value} is stronger than the text it checks "
                                  f"({text_level.value}: {', '.join((*ids, *clauses))}); leave level= out to take the text's")
    return ids, level


def _version_guarded(func: Callable[["Context"], None]) -> Callable[["Context"], None]:
    """The case, skipped on a product release that none of the vendor clauses it cites describes."""

    @functools.wraps(func)
    def runs(ctx: "Context") -> None:
        ctx.applicable(*ctx.spec.clauses)
        func(ctx)

    return runs


def inspect_unwrap(func: Callable[..., Any]) -> Callable[..., Any]:
    """The case function under the version guard ``case`` may put around it."""
    return getattr(func, "__wrapped__", func)


def discover(protocol: str, role: str = "broker") -> list[CaseSpec]:
    """Imports every module of the protocol's case packages of ``role``; returns those cases in id order."""
    for package_name in (CLIENT_CASE_PACKAGES if role == "client" else CASE_PACKAGES)[protocol]:
        try:
            package = importlib.import_module(package_name)
        except ModuleNotFoundError:
            continue
        for info in pkgutil.walk_packages(package.__path__, package_name + "."):
            try:
                importlib.import_module(info.name)
            except CaseDefinitionError:
                raise
            except Exception as exc:  # a broken case module is a catalog bug: say which, do not crash
                raise CaseDefinitionError(f"case module {info.name} does not load: {type(exc).__name__}: {exc}") from exc
    return sorted((c for c in REGISTRY.values() if c.protocol == protocol and c.role == role),
                  key=lambda c: _sort_key(c.id))


def _sort_key(case_id: str) -> tuple[Any, ...]:
    _, section, name = case_id.split("/", 2)
    nums = section.split(".")
    if all(n.isdigit() for n in nums):
        return (0, tuple(int(n) for n in nums), name)
    return (1, section, name)


def select(cases: list[CaseSpec], include: list[str], exclude: list[str]) -> list[CaseSpec]:
    """Glob selection on case ids (``--case`` / ``--exclude``)."""
    chosen = [c for c in cases if not include or any(fnmatch.fnmatchcase(c.id, g) for g in include)]
    return [c for c in chosen if not any(fnmatch.fnmatchcase(c.id, g) for g in exclude)]


def section_title(protocol: str, section: str) -> str:
    if section.startswith(EXTENSION_PREFIX):
        name = section[len(EXTENSION_PREFIX):]
        return f"{section_title(protocol, name) or name} (RabbitMQ extension)"
    if section.startswith("scenario."):
        return "real-client scenario"
    if section[:1].isdigit():
        return clause_catalog.section_titles(protocol).get(section, "")
    if protocol == "0-9-1":
        from amqpspec.wire.amqp091 import spec

        method = spec.METHODS_BY_NAME.get(section)
        if method is not None:
            return method.LABEL
    return ""


def case_seed(run_seed: int, case_id: str) -> int:
    digest = hashlib.sha256(f"{run_seed}:{case_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def verdict_for_failure(levels: list[Level]) -> Verdict:
    """A failed check weighs as much as the strongest clause it cites."""
    if not levels:
        return Verdict.FAILED
    family = min(levels, key=lambda lv: lv.rank).family
    return {"MUST": Verdict.FAILED, "SHOULD": Verdict.WARNING, "MAY": Verdict.INFORMATIONAL,
            "DEFINITION": Verdict.INFORMATIONAL}.get(family, Verdict.FAILED)


def close_info(obs: Any, verifier: Verifier | None, passed: bool) -> CloseInfo:
    info = CloseInfo()
    if not isinstance(obs, Observation):
        return _close_info_10(obs, verifier, passed)
    cc = obs.connection_close
    chc = obs.channel_close()
    if cc is not None:
        info.who, info.how, info.code, info.text = "broker", "connection.close", cc.reply_code, str(cc.reply_text)
    elif chc is not None:
        info.who, info.how, info.code, info.text = "broker", "channel.close", chc.reply_code, str(chc.reply_text)
    elif obs.closed:
        info.who, info.how = "broker", obs.end
    if verifier is not None:
        info.expected_codes = list(verifier.codes) or None
        if verifier.expects_close:
            info.matched = passed
        else:
            info.matched = None if info.who == "none" else False
    return info


def _close_info_10(obs: Any, verifier: Verifier | None, passed: bool) -> CloseInfo:
    """The close verdict of an AMQP 1.0 observation: close, end or detach, and its error condition."""
    from amqpspec.peer.amqp10 import error_condition
    from amqpspec.sanitize import cap

    info = CloseInfo()
    for name in ("close", "end", "detach"):
        found = obs.performatives(name)
        if found:
            perf = found[0].performative
            info.who, info.how, info.condition = "broker", name, error_condition(perf)
            err = getattr(perf, "error", None)
            desc = getattr(err, "description", None) if err is not None else None
            info.text = None if desc is None else cap(str(desc))  # stored in the result: a bounded cost
            break
    else:
        if obs.closed:
            info.who, info.how = "broker", obs.end
    if verifier is not None:
        conditions = getattr(verifier, "conditions", None)
        if conditions:
            info.expected_codes = None
        if verifier.expects_close:
            info.matched = passed
        else:
            info.matched = None if info.who == "none" else False
    return info


@dataclass
class Context:
    """What a running case works with: the target, its deadline, peers, checks."""

    spec: CaseSpec
    target: Target
    deadline: float
    seed: int
    run_id: str = ""
    transcript: Transcript = field(default_factory=Transcript)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    close: CloseInfo = field(default_factory=CloseInfo)
    peers: list[Peer] = field(default_factory=list)
    cleanup: list[tuple[str, str]] = field(default_factory=list)
    aborted: bool = False
    restart_command: str | None = None  # the run's --restart-command, for :meth:`restart_broker`
    restart_wait: float = 60.0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    # -- time ------------------------------------------------------------------------
    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    # -- connections ------------------------------------------------------------------
    def connect(self, *, handshake: bool = True, open_channel: bool = False, dialect: Dialect | None = None,
                **handshake_args: Any) -> Any:
        """A new raw connection for this case, of the case's protocol (closed by the runner at the end).

        AMQP 0-9-1: a :class:`amqpspec.peer.amqp091.Peer`, negotiated up to open-ok unless told
        otherwise. AMQP 1.0: a :class:`amqpspec.peer.amqp10.Peer`, through SASL (when the URL names
        credentials) and open; ``open_channel`` then also begins a session.
        """
        if self.aborted:
            raise Skip("case aborted")
        if self.spec.protocol == "1.0":
            from amqpspec.peer import amqp10

            peer10 = amqp10.Peer.connect(self.target, self.transcript, self.deadline)
            self.peers.append(peer10)
            if handshake:
                peer10.handshake(**handshake_args)
                if open_channel:
                    peer10.begin()
            return peer10
        peer = Peer.connect(self.target, self.transcript, self.deadline, dialect or SPEC)
        self.peers.append(peer)
        if handshake:
            peer.handshake(**handshake_args)
            if open_channel:
                peer.open_channel()
        return peer

    def adopt(self, connection: Any) -> Any:
        """Puts a connection the case made itself (e.g. a real client's) under the runner's care:
        it needs ``close(timeout)`` and ``abort()``; the runner closes it after the case and
        aborts it at the hard deadline."""
        self.peers.append(connection)
        return connection

    def name(self, suffix: str = "") -> str:
        """An entity name unique to this case and run: nothing collides with other cases."""
        base = f"amqpspec-{self.run_id[:8]}-{self.spec.id.split('/')[-1]}"
        return f"{base}-{suffix}" if suffix else base

    def will_delete(self, kind: str, name: str) -> None:
        """Registers a queue or exchange for deletion after the case, even if it fails."""
        if kind not in ("queue", "exchange"):
            raise ValueError(f"cannot clean up a {kind}")
        self.cleanup.append((kind, name))

    # -- checks -----------------------------------------------------------------------
    def _levels(self, clauses: tuple[str, ...]) -> list[Level]:
        known = clause_catalog.by_id(self.spec.protocol, documentation=True)
        levels = [known[c].level for c in clauses if c in known]
        if self.spec.quoted and self.spec.level is not None and clauses == self.spec.quoted:
            # the case's guideline, at the case's level -- never above the text itself
            return [max(self.spec.level, min(levels, key=lambda lv: lv.rank), key=lambda lv: lv.rank)]
        return levels

    def record(self, ok: bool, *, expected: str, observed: str, what: str = "",
               clauses: tuple[str, ...] | list[str] | None = None,
               level: Level | None = None, guideline: str = "") -> bool:
        """Records one check with its own evidence; returns whether it passed.

        A check weighs as much as the strongest clause it cites. A check of other text (a
        reply code's meaning, a field's doc, a lower-case "should") gives the ``guideline``
        text it checks, verbatim from the specification: it cites the sentences that text
        resolves to and weighs as much as they do, or as ``level`` when that is weaker.
        """
        if guideline:
            quoted, weight = guideline_weight(self.spec.protocol, guideline, self.spec.section, level,
                                              f"a check of {self.spec.id}", clauses or (), cap=True)
            cited: tuple[str, ...] = tuple(clauses) if clauses else quoted
            levels = [weight] if level is not None or not clauses else self._levels(cited)
        elif level is not None:
            raise CaseDefinitionError(f"{self.spec.id}: a check with its own level needs the guideline text it checks")
        else:
            cited = tuple(clauses) if clauses is not None else self.spec.clauses
            if not cited:
                cited = self.spec.quoted  # ``clauses=()``: a check of the case's guideline text
            levels = self._levels(cited)
        self._refuse_other_releases(cited)
        verdict = Verdict.PASSED if ok else verdict_for_failure(levels)
        description = what or self.spec.title
        if guideline and not any(f'"{guideline}"' in n for n in self.notes):  # state each text once
            self.notes.append(f"{description}: checks the spec text \"{guideline}\" ({levels[0].value})")
        self.checks.append(Check(description, list(cited), verdict, expected, observed))
        return ok

    def _refuse_other_releases(self, cited: tuple[str, ...]) -> None:
        """A check citing a vendor clause that does not describe this broker's release is a bug of
        the case (it should have chosen with :meth:`applicable`), not a verdict on the broker."""
        known = clause_catalog.by_id(self.spec.protocol, documentation=True)
        broker = self.target.broker
        for cid in cited:
            c = known.get(cid)
            if c is not None and c.versions and not c.applies_to(broker.product, broker.version):
                raise CaseDefinitionError(f"{self.spec.id}: a check cites {cid}, which describes "
                                          f"{c.applicability()}, not {broker.product} {broker.version}")

    def check(self, obs: Observation, verifier: Verifier, *, what: str = "",
              clauses: tuple[str, ...] | list[str] | None = None, sets_close: bool = True,
              level: Level | None = None, guideline: str = "") -> bool:
        """Checks an observation against a verifier; also sets the case's close verdict."""
        ok = verifier.accepts(obs)
        if sets_close:
            self.close = close_info(obs, verifier, ok)
        return self.record(ok, expected=verifier.describe(), observed=obs.describe(), what=what, clauses=clauses,
                           level=level, guideline=guideline)

    def skip(self, reason: str) -> None:
        raise Skip(reason)

    def applicable(self, *clause_ids: str) -> str:
        """The first of ``clause_ids`` whose text describes the broker under test; skips the case
        when none does.

        A vendor clause (``Clause.versions``) describes only the product releases in its range,
        so where the vendor's text changed a case cites one clause per range and judges the
        broker by the one of its own release; specification clauses describe every broker.
        """
        known = clause_catalog.by_id(self.spec.protocol, documentation=True)
        broker = self.target.broker
        for cid in clause_ids:
            if known[cid].applies_to(broker.product, broker.version):
                return cid
        ranges = "; ".join(f"{cid} describes {known[cid].applicability()} ({known[cid].versions_source})"
                           for cid in clause_ids)
        raise Skip(f"not applicable to {broker.product or 'an unnamed product'} {broker.version or '(no version)'}: "
                   f"{ranges}")

    def note(self, text: str) -> None:
        self.notes.append(text)

    # -- the broker itself ----------------------------------------------------------------
    def restart_broker(self) -> str:
        """Restarts the broker with the run's ``--restart-command`` and waits until it serves
        again; returns what was done (also kept as a note). For the durability clauses, whose
        subject is what survives a restart: such a case is declared ``exclusive`` so that no
        other case runs while the broker is down.

        The case's own connections are closed first (a restart is not a crash with clients
        attached). Skips the case when the run has no restart command; raises
        :class:`RestartFailed` (the case then cannot decide: ``error``) when the broker does not
        serve again.
        """
        if not self.restart_command:
            raise Skip(NO_RESTART_COMMAND)
        for peer in list(self.peers):
            peer.close(timeout=0.5)
        note = brokerops.restart(self.restart_command, self.target, self.spec.protocol,
                                 max(1.0, min(self.restart_wait, self.remaining() - 5.0)))
        self.notes.append(str(note))
        if not note.ok:
            raise RestartFailed(str(note))
        return str(note)

    def abort(self) -> None:
        """Ends every connection of the case now (the runner's hard deadline)."""
        self.aborted = True
        for peer in list(self.peers):
            peer.abort()
