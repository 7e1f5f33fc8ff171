"""The broker password given apart from the URL (issue 11 item 10), against the real RabbitMQ:
$AMQPSPEC_PASSWORD and --password-file log in, with a URL that carries no password."""
from __future__ import annotations

import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

CASE = "amqp091/4.2.2/valid-header"


def _without_password(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    netloc = f"{parts.username}@{parts.hostname}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _run(url: str, *extra: str, password_env: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AMQPSPEC_PASSWORD"}
    if password_env is not None:
        env["AMQPSPEC_PASSWORD"] = password_env
    return subprocess.run([sys.executable, "-m", "amqpspec.cli", "run", url, "--protocol", "0-9-1", "--case", CASE,
                           *extra], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, env=env)


def test_password_from_the_environment_logs_in(rabbitmq) -> None:
    password = urllib.parse.unquote(urllib.parse.urlsplit(rabbitmq.url).password or "")
    url = _without_password(rabbitmq.url)
    proc = _run(url, password_env=password)
    assert proc.returncode == 0, proc.stderr
    wrong = _run(url, password_env="not-" + password)
    assert wrong.returncode == 2 and "login refused" in wrong.stderr  # the variable is what was used
    assert "not-" + password not in wrong.stderr


def test_password_from_a_file_logs_in(rabbitmq, tmp_path: Path) -> None:
    password = urllib.parse.unquote(urllib.parse.urlsplit(rabbitmq.url).password or "")
    pw = tmp_path / "pw"
    pw.write_text(password + "\n")
    proc = _run(_without_password(rabbitmq.url), "--password-file", str(pw), password_env="not-it")
    assert proc.returncode == 0, proc.stderr  # the file beats the environment
