"""The broker password given apart from the URL, and URLs whose user information would leak."""
from __future__ import annotations

from pathlib import Path

import pytest

from amqpspec.cliutil import PASSWORD_ENV, broker_password
from amqpspec.errors import UsageError
from amqpspec.secrets import SCRUBBER
from amqpspec.target import Target


def test_password_given_apart_is_used_and_scrubbed() -> None:
    t = Target.parse("amqp://alice@127.0.0.1:5672/", password="apart-secret-1")
    assert t.password.reveal() == "apart-secret-1" and t.username == "alice"
    assert "apart-secret-1" not in t.url()
    assert SCRUBBER.scrub("said apart-secret-1") == "said ***"


def test_password_apart_means_credentials_even_without_a_user() -> None:
    t = Target.parse("amqp://127.0.0.1/", password="apart-secret-2")
    assert t.credentials_given and t.username == "guest"


def test_password_in_the_url_and_apart_is_refused() -> None:
    with pytest.raises(UsageError, match="given twice"):
        Target.parse("amqp://u:inurl@127.0.0.1/", password="apart")


def test_percent_encoded_password_is_decoded() -> None:
    assert Target.parse("amqp://u:p%2Fs%40s%3F@h/").password.reveal() == "p/s@s?"


@pytest.mark.parametrize("url", ["amqp://u:Xq7/zz9@h/", "amqp://u:Xq7?zz9@h/", "amqp://u:Xq7#zz9@h/",
                                 "amqp://u:12/Xq7zz9@h/", "amqp://Xq7/zz9:pw@h/"])
def test_unencoded_delimiter_in_userinfo_is_refused_without_echo(url: str) -> None:
    with pytest.raises(UsageError) as info:
        Target.parse(url)
    text = str(info.value)
    assert "Xq7" not in text and "zz9" not in text and "12" not in text
    assert "percent-encode" in text and "--password-file" in text and "\n" not in text


def test_port_errors_do_not_quote_the_url() -> None:
    with pytest.raises(UsageError) as info:
        Target.parse("amqp://u:pw@h:Xq7zz9/")
    assert "Xq7" not in str(info.value)


def test_vhost_over_255_octets_is_a_usage_error() -> None:
    Target.parse("amqp://h/" + "v" * 255)
    with pytest.raises(UsageError, match="256 octets"):
        Target.parse("amqp://h/" + "v" * 256)
    with pytest.raises(UsageError, match="virtual host"):
        Target.parse("amqp://h/" + "\u00e9" * 128)  # 256 octets in UTF-8


def test_huge_password_is_a_usage_error_without_echo() -> None:
    with pytest.raises(UsageError) as info:
        Target.parse("amqp://h/", password="Z" * 70_000)
    assert "ZZZ" not in str(info.value)


def test_url_with_password_round_trips_for_workers() -> None:
    t = Target.parse("amqp://al%2Fice@h:5999/v%2Fh", password="p/@:?#%")
    again = Target.parse(t.url_with_password())
    assert (again.username, again.password.reveal(), again.host, again.port, again.vhost) == \
        ("al/ice", "p/@:?#%", "h", 5999, "v/h")


def test_password_file_first_line_beats_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "pw"
    f.write_text("from-file\nsecond line\n")
    monkeypatch.setenv(PASSWORD_ENV, "from-env")
    assert broker_password(str(f)) == "from-file"
    assert broker_password(None) == "from-env"
    monkeypatch.setenv(PASSWORD_ENV, "")
    assert broker_password(None) is None


def test_password_file_problems_are_usage_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("\n")
    with pytest.raises(UsageError, match="empty"):
        broker_password(str(empty))
    with pytest.raises(UsageError, match="missing"):
        broker_password(str(tmp_path / "missing"))
    crlf = tmp_path / "crlf"
    crlf.write_bytes(b"pw with spaces \r\n")
    assert broker_password(str(crlf)) == "pw with spaces "
