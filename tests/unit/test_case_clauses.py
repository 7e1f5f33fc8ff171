"""Every case and every check names clause ids (issue 14).

A case or check that checks text without an RFC 2119 keyword quotes it (``guideline=``); the
quotation resolves to generated ids of the documentation catalog, at definition level. These
tests hold the catalog to that: every registered case cites ids, every guideline written in the
catalog resolves (checked statically, so a check that only runs against some broker cannot
hide a stale quotation), and no declared level is stronger than the text it checks.
"""
from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

from amqpspec import clauses
from amqpspec.case import CaseDefinitionError, CaseSpec, Context, case, discover, guideline_weight, \
    verdict_for_failure
from amqpspec.clauses import Level, amqp091, amqp10, quote
from amqpspec.result import Verdict

ROOT = pathlib.Path(__file__).resolve().parents[2]
CATALOG_DIRS = ("conformance/amqp091", "conformance/amqp10", "conformance/client091", "conformance/client10",
                "scenarios")


# ----------------------------------------------------------------------------- every case

@pytest.mark.parametrize("protocol", clauses.PROTOCOLS)
def test_every_case_cites_clause_ids(protocol):
    cases = discover(protocol)
    assert cases
    known = clauses.by_id(protocol, documentation=True)
    bare = [c.id for c in cases if not c.clauses]
    assert not bare, f"cases citing no clause id: {bare}"
    for c in cases:
        assert all(cid in known for cid in c.clauses), c.id
        if c.guideline:
            assert c.quoted, c.id
            assert c.cited or c.level is not None, c.id  # a quoting case weighs what its text says


@pytest.mark.parametrize("protocol", clauses.PROTOCOLS)
def test_client_role_cases_cite_clause_ids_too(protocol):
    cases = discover(protocol, role="client")
    assert not [c.id for c in cases if not c.clauses]


def _guideline_calls():
    """Every call in the catalog that passes ``guideline=`` (cases, checks and helpers), with the
    module it is in; the helpers' own ``guideline=guideline`` forwarding is skipped."""
    for folder in CATALOG_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            module = importlib.import_module("amqpspec." + ".".join(rel.parts))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Call):
                    continue
                kws = {k.arg: k.value for k in node.keywords}
                if "guideline" in kws:
                    yield path.relative_to(ROOT), node, kws, module


def _value(expr, module):
    try:
        return eval(compile(ast.Expression(expr), "<catalog>", "eval"), vars(module))  # noqa: S307 -- our own source
    except Exception:
        return None  # depends on the helper's arguments: checked where the helper is called


def test_every_written_guideline_resolves_and_weighs_no_more_than_its_text():
    seen = problems = 0
    problem_lines = []
    for path, node, kws, module in _guideline_calls():
        text = _value(kws["guideline"], module)
        if not isinstance(text, str):
            continue
        protocol = "1.0" if "10" in path.parts[1] or "amqp10" in str(path) else "0-9-1"
        level = _value(kws["level"], module) if "level" in kws else None
        cited = _value(kws["clauses"], module) if "clauses" in kws else ()
        seen += 1
        try:
            guideline_weight(protocol, text, "", level if isinstance(level, Level) else None,
                             f"{path}:{node.lineno}", tuple(cited or ()))
        except CaseDefinitionError as exc:
            problems += 1
            problem_lines.append(str(exc))
    assert seen > 250  # the catalog's quotations (about 320 when written)
    assert not problems, "\n".join(problem_lines)


def _catalog_trees():
    for folder in CATALOG_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            yield rel, ast.parse(path.read_text(encoding="utf-8")), importlib.import_module("amqpspec." + ".".join(rel.parts))


def _forwarding_helpers(trees):
    """Functions that pass one of their parameters on as ``guideline=``: name -> (position, name)."""
    helpers = {}
    for _, tree, _ in trees:
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            params = [a.arg for a in fn.args.args]
            for call in ast.walk(fn):
                for kw in getattr(call, "keywords", []) if isinstance(call, ast.Call) else []:
                    if kw.arg == "guideline" and isinstance(kw.value, ast.Name) and kw.value.id in params:
                        helpers[fn.name] = (params.index(kw.value.id), kw.value.id)
    return helpers


def test_guidelines_given_to_helpers_resolve_too():
    trees = list(_catalog_trees())
    helpers = _forwarding_helpers(trees)
    assert {"record_error_condition", "check_malformed", "_refusal_checks"} <= set(helpers)
    seen, problems = 0, []
    for rel, tree, module in trees:
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
            if name not in helpers:
                continue
            pos, param = helpers[name]
            if name in ("record", "check", "_record", "require"):
                continue  # the framework's own, checked through their callers' guideline= above
            expr = call.args[pos] if len(call.args) > pos else {k.arg: k.value for k in call.keywords}.get(param)
            text = _value(expr, module) if expr is not None else None
            if not isinstance(text, str):
                continue
            seen += 1
            try:
                guideline_weight("1.0" if "10" in rel.parts[1] or "amqp10" in str(rel) else "0-9-1", text, "", None,
                                 f"{rel}:{call.lineno}")
            except CaseDefinitionError as exc:
                problems.append(str(exc))
    assert seen >= 15  # 18 calls when written
    assert not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- generated ids

@pytest.mark.parametrize("protocol", clauses.PROTOCOLS)
def test_documentation_ids_are_unique_stable_and_apart_from_the_clauses(protocol):
    docs = clauses.catalog(protocol, extensions=True, documentation=True)
    again = clauses.catalog(protocol, extensions=True, documentation=True)
    assert [c.id for c in docs] == [c.id for c in again]
    assert len({c.id for c in docs}) == len(docs)
    normative = clauses.catalog(protocol, extensions=True)
    assert docs[: len(normative)] == normative  # the clauses first, unchanged
    assert {c.level for c in normative}.isdisjoint({Level.DEFINITION})
    extra = docs[len(normative):]
    assert extra and all(clauses.is_documentation(c) for c in extra)
    assert not any(clauses.is_documentation(c) for c in normative)


def test_normative_counts_do_not_change():
    assert len(clauses.catalog("0-9-1")) == 175
    assert len(clauses.catalog("1.0")) == 371
    assert len(clauses.by_id("0-9-1", extensions=False)) == 175
    assert sum(1 for c in clauses.catalog("1.0") if c.level.family == "MUST") == 219


def test_documentation_counts():
    # prose sentences without a clause, the XML's docs, labels, asserts and chassis (0-9-1);
    # prose sentences, labels and figures (1.0). A change here is a change of the spec files
    # or of the extraction: look at the diff of the ids before updating the numbers.
    assert len(amqp091.documentation()) == 1453
    assert len(amqp10.documentation()) == 1752


@pytest.mark.parametrize("cid, level, text", [
    ("amqp091:constant.not-allowed/d1", Level.DEFINITION,
     "The client tried to work with some entity in a manner that is prohibited by the server, due to security "
     "settings or by some other criteria."),
    ("amqp091:tx/d3", Level.SHOULD,
     "Servers SHOULD implement atomic transactions at least where all publish or ack requests affect a single queue."),
    ("amqp091:tx/chassis-server", Level.SHOULD, '<chassis name="server" implement="SHOULD"/>'),
    ("amqp091:domain.exchange-name/assert-length", Level.DEFINITION, '<assert check="length" value="127"/>'),
    ("amqp091:basic.get/label", Level.DEFINITION, "direct access to a queue"),
    ("amqp091:4.2.4/d4", Level.DEFINITION,
     "The class-id and method-id are constants that are defined in the AMQP class and method specifications."),
    ("rabbitmq091:errata.21/d1", Level.DEFINITION,
     "The spec doesn't say what should happen when a client sends a basic.reject with an unknown delivery tag."),
    ("amqp10:5.3.3.6/d2", Level.DEFINITION,
     "Connection authentication failed due to an unspecified problem with the supplied credentials."),
    ("amqp10:1.6.20/str8-utf8/label", Level.DEFINITION,
     "up to 2^8 - 1 octets worth of UTF-8 Unicode (with no byte order mark)"),
    ("amqp10:3.2/d17", Level.DEFINITION, "Zero or one properties sections."),
])
def test_generated_ids_name_their_sentence(cid, level, text):
    c = clauses.get(cid)
    assert (c.level, c.text) == (level, text)


def test_prose_ordinals_count_only_the_non_clauses():
    # 4.2.3's clauses are /1 ... ; its other sentences /d1 ... in document order
    sec = [c for c in clauses.catalog("0-9-1", documentation=True) if c.section == "4.2.3"]
    assert [c.id for c in sec if "/d" not in c.id] == [c.id for c in clauses.catalog("0-9-1")
                                                         if c.section == "4.2.3"]
    ds = [c.id for c in sec if "/d" in c.id]
    assert ds == [f"amqp091:4.2.3/d{k}" for k in range(1, len(ds) + 1)]


def test_the_keyword_definition_sentence_is_a_definition():
    defs = [c for c in clauses.catalog("0-9-1", documentation=True) if c.text.startswith("We use the terms")]
    assert len(defs) == 1 and defs[0].level is Level.DEFINITION


def test_definition_level_family_and_weight():
    assert Level.DEFINITION.family == "DEFINITION"
    assert Level.DEFINITION.rank > Level.MAY.rank
    assert verdict_for_failure([Level.DEFINITION]) is Verdict.INFORMATIONAL
    assert verdict_for_failure([Level.DEFINITION, Level.SHOULD]) is Verdict.WARNING


# ----------------------------------------------------------------------------- quotations

def test_a_quotation_resolves_to_the_sentences_it_quotes():
    ids = quote.resolve("0-9-1", "Exclusive queues may only be accessed by the current connection, and are deleted "
                                 "when that connection closes. Passive declaration of an exclusive queue by other "
                                 "connections are not allowed. [queue.declare exclusive]", "queue.declare")
    assert ids == ("amqp091:queue.declare.exclusive/d1", "amqp091:queue.declare.exclusive/d2")


def test_markup_labels_and_separators():
    ids = quote.resolve("0-9-1", 'frame-error (501): "The sender sent a malformed frame that the recipient could not '
                                 'decode. This strongly implies a programming error in the sending peer." '
                                 'not-implemented (540): "The client tried to use functionality that is not '
                                 'implemented in the server."')
    # the label picks frame-error's sentence where syntax-error has the same one
    assert ids == ("amqp091:constant.frame-error/d1", "amqp091:constant.frame-error/d2",
                   "amqp091:constant.not-implemented/d1")
    assert quote.resolve("1.0", "amqp:decode-error: Data could not be decoded.") == ("amqp10:2.8.15/d5",)
    with pytest.raises(quote.UnquotedTextError):  # the label must name the element the text is in
        quote.resolve("1.0", "amqp:invalid-field: Data could not be decoded.")


def test_a_fragment_of_a_sentence_cites_it():
    # a row of the connection state table (a figure), and part of a sentence
    assert quote.resolve("1.0", "HDR_EXCH OPEN OPEN [Connection State Table]") == ("amqp10:2.4.7/figure-2",)
    assert quote.resolve("0-9-1", "the server will not send any more messages for that consumer",
                         "basic.cancel") == ("amqp091:basic.cancel/d2",)


@pytest.mark.parametrize("text", [
    "The server MUST do what the spec never said.",
    "not-allowed (530): The client tried to use functionality that is not implemented in the server.",  # wrong label
    "[only a citation]",
    "",
])
def test_what_the_spec_does_not_say_does_not_resolve(text):
    with pytest.raises(quote.UnquotedTextError):
        quote.resolve("0-9-1", text)


# ----------------------------------------------------------------------------- registration

def _noop(ctx):
    pass


def test_a_paraphrase_is_a_case_definition_error_naming_the_case():
    with pytest.raises(CaseDefinitionError, match="amqp091/4.2.3/paraphrase"):
        case("amqp091/4.2.3/paraphrase", title="t", guideline="Frames end with 0xCE, more or less.")(_noop)


def test_a_level_stronger_than_the_text_is_refused():
    with pytest.raises(CaseDefinitionError, match="stronger than the text"):
        case("amqp091/constant/should-on-a-glossary", title="t", level=Level.SHOULD,
             guideline="not-allowed (530): The client tried to work with some entity in a manner that is prohibited "
                       "by the server, due to security settings or by some other criteria.")(_noop)


def test_the_text_decides_the_weight(monkeypatch):
    from amqpspec import case as case_module

    monkeypatch.setattr(case_module, "REGISTRY", {})
    case("amqp091/tx/atomic-weight", title="t",
         guideline="Servers SHOULD implement atomic transactions at least where all publish or ack requests "
                   "affect a single queue.")(_noop)
    case("amqp091/constant/glossary-weight", title="t",
         guideline="The client tried to use functionality that is not implemented in the server.")(_noop)
    atomic, glossary = case_module.REGISTRY["amqp091/tx/atomic-weight"], case_module.REGISTRY[
        "amqp091/constant/glossary-weight"]
    assert (atomic.clauses, atomic.level) == (("amqp091:tx/d3",), Level.SHOULD)
    assert (glossary.clauses, glossary.level) == (("amqp091:constant.not-implemented/d1",), Level.DEFINITION)
    assert atomic.cited == () and glossary.cited == ()  # quoting is not covering


class _Target:
    class broker:
        product, version = "RabbitMQ", "3.10.0"


def _ctx(spec: CaseSpec) -> Context:
    return Context(spec=spec, target=_Target(), deadline=0.0, seed=1)


def test_checks_cite_the_sentences_they_quote_and_weigh_no_more():
    spec = CaseSpec("amqp091/4.2.3/t", "t", "0-9-1", "4.2.3", ("amqp091:4.2.3/1",), (), 1.0, _noop)
    ctx = _ctx(spec)
    glossary = "The client tried to use functionality that is not implemented in the server."
    ctx.record(False, expected="e", observed="o", guideline=glossary)
    ctx.record(False, expected="e", observed="o", guideline=glossary, level=Level.SHOULD)  # lowered to the text
    ctx.record(False, expected="e", observed="o")
    assert [c.clauses for c in ctx.checks] == [["amqp091:constant.not-implemented/d1"]] * 2 + [["amqp091:4.2.3/1"]]
    assert [c.verdict for c in ctx.checks] == [Verdict.INFORMATIONAL, Verdict.INFORMATIONAL, Verdict.FAILED]


def test_an_empty_citation_in_a_quoting_case_cites_its_guideline():
    from amqpspec import case as case_module

    glossary = "The client tried to use functionality that is not implemented in the server."
    quoted, weight = guideline_weight("0-9-1", glossary, "4.2.3", Level.MAY, "t", ("amqp091:4.2.3/1",))
    spec = CaseSpec("amqp091/4.2.3/t", "t", "0-9-1", "4.2.3", ("amqp091:4.2.3/1",), (), 1.0, _noop,
                    level=Level.MAY, guideline=glossary, quoted=quoted)
    ctx = _ctx(spec)
    ctx.record(False, expected="e", observed="o", clauses=())
    assert ctx.checks[0].clauses == list(quoted)
    assert ctx.checks[0].verdict is Verdict.INFORMATIONAL
    assert case_module.verdict_for_failure([weight]) is Verdict.INFORMATIONAL


# ----------------------------------------------------------------------------- amqpspec clauses

def _cli(*args):
    from click.testing import CliRunner

    from amqpspec.cli import main

    return CliRunner().invoke(main, ["clauses", *args])


def test_cli_lists_definitions_apart_and_keeps_the_coverage_counts():
    normal = _cli("--coverage")
    assert normal.exit_code == 0
    assert normal.output.splitlines()[-1].startswith(
        "175 clauses: 142 covered (MAY 13/24, MUST 110/119, NONE 2/2, SHOULD 17/30)")
    assert "definition" not in normal.output
    docs = _cli("--documentation", "--coverage", "--protocol", "1.0")
    assert docs.exit_code == 0
    last = docs.output.splitlines()[-1]
    assert "documentation sentences quoted by cases (DEFINITION " in last
    assert "amqp10:3.2/d17" in docs.output  # "Zero or one properties sections."
    assert _cli("--level", "DEFINITION").exit_code == 2  # definitions are listed with --documentation only


def test_cli_shows_one_sentence():
    shown = _cli("--id", "amqp091:constant.not-allowed/d1")
    assert shown.exit_code == 0
    assert "documentation sentence" in shown.output and "definition" in shown.output
    assert _cli("--id", "amqp091:4.2.3/1").output.count("kind:           clause") == 1
    assert _cli("--id", "amqp091:no-such/d1").exit_code == 2
