"""RFC 2119 keywords and sentence splitting, shared by the 0-9-1 and 1.0 catalogs.

The rules here are the ones used to count the clauses in ``specs/README.md``; a catalog
built with them reproduces those counts, so a change here is a change to every catalog.

* Keywords match case-sensitively, as whole upper-case words. Lower-case "must" is prose,
  not a requirement, and is never counted.
* Two-word forms (``MUST NOT`` ...) are matched before their one-word prefixes.
* A unit of text (a rule, a sentence) takes its *strongest* level.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from .model import Level

__all__ = [
    "KEYWORDS",
    "KEYWORD_LEVEL",
    "collapse_whitespace",
    "find_keywords",
    "keyword_counts",
    "keyword_levels",
    "strongest_level",
    "split_sentences",
    "is_keyword_definition",
]

# Order matters: the regex alternation tries the two-word forms first.
KEYWORDS: tuple[str, ...] = (
    "MUST NOT",
    "SHALL NOT",
    "SHOULD NOT",
    "NOT RECOMMENDED",
    "MUST",
    "REQUIRED",
    "SHALL",
    "SHOULD",
    "RECOMMENDED",
    "MAY",
    "OPTIONAL",
)

KEYWORD_LEVEL: dict[str, Level] = {
    "MUST NOT": Level.MUST_NOT,
    "SHALL NOT": Level.MUST_NOT,
    "SHOULD NOT": Level.SHOULD_NOT,
    "NOT RECOMMENDED": Level.SHOULD_NOT,
    "MUST": Level.MUST,
    "REQUIRED": Level.MUST,
    "SHALL": Level.MUST,
    "SHOULD": Level.SHOULD,
    "RECOMMENDED": Level.SHOULD,
    "MAY": Level.MAY,
    "OPTIONAL": Level.MAY,
}

# "MUST  NOT" across a line break is still MUST NOT, hence \s+ inside two-word forms.
# No re.IGNORECASE: only upper-case keywords are normative.
_KEYWORD_RE = re.compile(
    r"\b(" + "|".join(k.replace(" ", r"\s+") for k in KEYWORDS) + r")\b"
)
_WS_RE = re.compile(r"\s+")

# Sentence break: after . ! or ? plus an optional closing quote or parenthesis, when
# whitespace and then a capital letter, a digit, an opening quote or parenthesis follows.
_CLOSERS = "\"'\u201d\u2019)"
_OPENERS = "\"'\u201c\u2018("
_BREAK_RE = re.compile(
    r"[.!?][" + re.escape(_CLOSERS) + r"]?(?=\s+[A-Z0-9" + re.escape(_OPENERS) + r"])"
)

# The sentence that defines the keywords themselves uses all of them and requires nothing.
_DEFINITION_START_RE = re.compile(r"^\s*(?:We use the terms|The key words)\b")
_RFC2119_RE = re.compile(r"RFC\s*2119")


def collapse_whitespace(text: str) -> str:
    """Replace every run of whitespace with one space and strip the ends."""
    return _WS_RE.sub(" ", text).strip()


def find_keywords(text: str) -> list[str]:
    """Canonical keyword forms in order of occurrence, e.g. ``["MUST", "MUST NOT"]``."""
    return [collapse_whitespace(m.group(1)) for m in _KEYWORD_RE.finditer(text)]


def keyword_counts(texts: str | Iterable[str]) -> Counter[str]:
    """Occurrences of each keyword form (not mapped to levels) in one or more texts."""
    if isinstance(texts, str):
        texts = [texts]
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(find_keywords(text))
    return counts


def keyword_levels(text: str) -> list[Level]:
    """The level of each keyword occurrence, in order of occurrence."""
    return [KEYWORD_LEVEL[k] for k in find_keywords(text)]


def strongest_level(text: str) -> Level | None:
    """The strongest level in ``text`` (MUST NOT > MUST > SHOULD NOT > SHOULD > MAY).

    ``None`` when the text has no upper-case keyword at all.
    """
    levels = keyword_levels(text)
    if not levels:
        return None
    return min(levels, key=lambda lvl: lvl.rank)


def split_sentences(text: str) -> list[str]:
    """Split one block of prose into sentences; whitespace is collapsed first.

    Deliberately simple (no abbreviation list): "e.g. the" stays whole because a
    lower-case letter follows, and "section 1.4.2." ends a sentence only when a capital,
    digit, quote or parenthesis comes next. The counts in specs/README.md depend on
    exactly this rule.
    """
    text = collapse_whitespace(text)
    if not text:
        return []
    sentences: list[str] = []
    start = 0
    for match in _BREAK_RE.finditer(text):
        sentences.append(text[start : match.end()].strip())
        start = match.end()
    sentences.append(text[start:].strip())
    return [s for s in sentences if s]


def is_keyword_definition(sentence: str) -> bool:
    """True for the sentence that defines the RFC 2119 keywords, which is not a clause.

    0-9-1: "We use the terms MUST, MUST NOT, SHOULD, SHOULD NOT, and MAY as defined by
    IETF RFC 2119." 1.0: "The key words "MUST", "MUST NOT", ... are to be interpreted as
    described in IETF RFC 2119 [RFC2119]."
    """
    return bool(_DEFINITION_START_RE.match(sentence) and _RFC2119_RE.search(sentence))
