"""Installing brokers from Debian packages, quickly when there is nothing to do.

Why this care: ``scripts/setup.sh`` runs before every test run, so the common case (all
packages present) must cost one ``dpkg-query`` call, and ``apt-get update`` (slow, needs the
network) runs only when apt does not know a package yet or a download fails on stale lists.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from amqpspec.brokers.errors import BrokerError

POLICY_RC_D = Path("/usr/sbin/policy-rc.d")


class AptError(BrokerError):
    """apt or dpkg failed; the message carries their output."""


def missing(packages: Iterable[str]) -> list[str]:
    """The packages that dpkg does not report as fully installed, in the given order."""
    wanted = list(dict.fromkeys(packages))
    if not wanted:
        return []
    try:
        proc = subprocess.run(
            ["dpkg-query", "-W", "-f=${Package}\t${db:Status-Abbrev}\n", *wanted],
            capture_output=True,
            text=True,
        )
    except FileNotFoundError as exc:
        raise AptError("dpkg-query not found: the brokers are installed from Debian packages") from exc
    installed = set()
    for line in proc.stdout.splitlines():
        name, _, abbrev = line.partition("\t")
        if abbrev.startswith("ii"):
            installed.add(name.split(":", 1)[0])
    return [p for p in wanted if p not in installed]


def _has_candidate(package: str) -> bool:
    proc = subprocess.run(["apt-cache", "policy", package], capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith("Candidate:"):
            return line.split(":", 1)[1].strip() != "(none)"
    return False


@contextmanager
def _no_service_start() -> Iterator[None]:
    """Keep maintainer scripts from starting daemons while we install.

    Why: without systemd, rabbitmq-server's postinst would otherwise start a system-wide
    node (default node name, all interfaces) that later collides with ours. policy-rc.d
    exiting 101 is Debian's documented way to say "do not start services". An existing
    policy file (as in container images) is left as it is.
    """
    if POLICY_RC_D.exists():
        yield
        return
    POLICY_RC_D.write_text("#!/bin/sh\n# temporary, written by amqpspec while installing brokers\nexit 101\n")
    POLICY_RC_D.chmod(0o755)
    try:
        yield
    finally:
        POLICY_RC_D.unlink(missing_ok=True)


def _run(argv: list[str]) -> None:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip().splitlines()[-20:]
        raise AptError(f"`{' '.join(argv)}` failed with exit code {proc.returncode}:\n" + "\n".join(output))


def install(packages: Iterable[str]) -> list[str]:
    """Install what is missing; returns the packages that were installed ([] = no-op)."""
    todo = missing(packages)
    if not todo:
        return []
    if os.geteuid() != 0:
        raise AptError(
            f"Debian package(s) not installed: {' '.join(todo)}; installing them needs root "
            f"(sudo python3 -m amqpspec.brokers install)"
        )
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", *todo]
    updated = False
    if not all(_has_candidate(p) for p in todo):
        _run(["apt-get", "update"])
        updated = True
    with _no_service_start():
        try:
            _run(cmd)
        except AptError:
            if updated:
                raise
            # stale package lists point at files the mirror no longer has
            _run(["apt-get", "update"])
            _run(cmd)
    still = missing(todo)
    if still:
        raise AptError(f"apt-get reported success but these are not installed: {' '.join(still)}")
    return todo
