"""amqpspec.sanitize: the one sanitiser and scrubber for every broker string shown or stored."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from amqpspec.reports import console
from amqpspec.sanitize import IDENTITY_LIMIT, cap, printable, safe_line
from amqpspec.secrets import SCRUBBER
from amqpspec.target import BrokerInfo

HOSTILE = "Hostile\x1b]0;pwned\x07 \x00 nul\r\nall cases passed \u202e \x85 \u2028"


def test_console_re_exports_the_one_printable() -> None:
    assert console.printable is printable


def test_safe_line_leaves_no_control_character_and_one_line() -> None:
    line = safe_line(HOSTILE)
    assert "\n" not in line and "\r" not in line
    assert not any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in line)
    assert "\\x1b]0;pwned\\x07" in line and "\\x0d\\x0aall cases passed" in line
    assert "\u202e" not in line and "\u2028" not in line


def test_safe_line_scrubs_a_registered_secret_before_escaping_and_capping() -> None:
    SCRUBBER.register("sanitize-test-secret")
    assert "sanitize-test-secret" not in safe_line("reply: sanitize-test-secret\x1b[2J")
    # a secret straddling the cap is masked whole, not cut into a visible prefix
    text = "x" * 15 + "sanitize-test-secret"
    assert "sanit" not in safe_line(text, limit=20)


def test_cap_marks_what_it_left_out_and_passes_other_types() -> None:
    assert cap("abc", 5) == "abc"
    assert cap("a" * 10, 4) == "aaaa... (6 more characters)"
    assert cap(None) is None and cap(7) == 7


def test_safe_line_bounds_a_huge_string() -> None:
    assert len(safe_line("P" * 900_000)) < 2100


def test_broker_info_caps_identity_and_property_strings() -> None:
    info = BrokerInfo(protocol="0-9-1")
    info.take_properties({"product": "P" * 900_000, "version": "1.0", "platform": None,
                          "cluster_name": "C" * 10_000,
                          "capabilities": {"x": True, "deep": {"a": {"b": {"c": {"d": "too deep"}}}}},
                          "information": b"\x00" * 5000})
    assert len(info.product) < IDENTITY_LIMIT + 40 and info.product.endswith("(899744 more characters)")
    assert info.version == "1.0" and info.platform == ""
    assert len(info.server_properties["cluster_name"]) < IDENTITY_LIMIT + 40
    assert info.server_properties["capabilities"]["x"] is True
    assert len(info.server_properties["information"]) == IDENTITY_LIMIT
    assert all(len(v) < IDENTITY_LIMIT + 40 for v in info.identity().values())


def test_identity_is_capped_even_when_set_directly() -> None:
    info = BrokerInfo(product="Q" * 5000)
    assert len(info.identity()["product"]) < IDENTITY_LIMIT + 40


def _reference_printable(text: str, multiline: bool) -> str:
    """printable() on a string as the specification of its escaping, one character at a time."""
    invisible = {0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
                 0x2066, 0x2067, 0x2068, 0x2069, 0x2028, 0x2029, 0xFEFF}
    if multiline:
        text = text.replace("\r\n", "\n")
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\n" and multiline:
            out.append(ch)
        elif ch == "\t":
            out.append("    " if multiline else " ")
        elif code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF or code in invisible:
            out.append(f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


_CHARS = st.one_of(st.characters(codec=None), st.sampled_from("\t\n\r\x00\x1b\x7f\x85\x9f\u200e\u202e\u2028\ufeff\udc80"),
                   st.characters(min_codepoint=0x10000))


@given(st.text(alphabet=_CHARS, max_size=60), st.booleans())
def test_printable_escapes_exactly_what_the_character_rule_says(text: str, multiline: bool) -> None:
    assert printable(text, multiline=multiline) == _reference_printable(text, multiline)


def test_printable_returns_clean_text_unchanged() -> None:
    text = "open-ok channel-max=2047 \u00e9\u4e2d " * 1000
    assert printable(text) is text
