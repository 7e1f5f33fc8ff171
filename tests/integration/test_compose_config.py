"""docker-compose.yml as Docker Compose itself reads it, checked without a Docker engine.

``docker-compose config`` (Debian's docker-compose 1.29) validates the file against the
Compose schema and prints it normalised, with no engine needed. The checks of pinned tags,
health checks and loopback ports below read that normalised output, not amqpspec's own
parser, so they hold for what Compose will really run; the last test compares the two readings.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from amqpspec.brokers import apt
from amqpspec.brokers import docker as dk

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
PACKAGE = "docker-compose"


@pytest.fixture(scope="module")
def docker_compose() -> str:
    """The docker-compose binary; installed from Debian here if missing (skip only if that fails)."""
    found = shutil.which(PACKAGE)
    if found:
        return found
    try:
        apt.install([PACKAGE])
    except apt.AptError as exc:
        pytest.skip(f"Debian package {PACKAGE} not installed and cannot be installed ({exc}); "
                    "add it to scripts/setup.sh")
    found = shutil.which(PACKAGE)
    if not found:
        pytest.skip(f"{PACKAGE} installed but not on PATH; add the Debian package to scripts/setup.sh")
    return found


def _compose(binary: str, *args: str, path: Path = COMPOSE) -> subprocess.CompletedProcess[str]:
    # no engine is contacted by `config`; a closed DOCKER_HOST makes sure of it
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "DOCKER_HOST": "tcp://127.0.0.1:9"}
    return subprocess.run(
        [binary, "-f", str(path), *args],
        check=False,
        cwd=path.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def normalised(docker_compose: str) -> dict[str, Any]:
    proc = _compose(docker_compose, "config")
    assert proc.returncode == 0, proc.stderr
    document = yaml.safe_load(proc.stdout)
    assert isinstance(document, dict)
    services = document["services"]
    assert isinstance(services, dict)
    return services


def _ports(spec: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(host_ip, published, target) from Compose 1.x short strings or Compose 2.x long syntax."""
    out = []
    for port in spec.get("ports", []):
        if isinstance(port, dict):
            out.append((str(port.get("host_ip", "")), int(port["published"]), int(port["target"])))
        else:
            ip, host, container = str(port).split("/")[0].rsplit(":", 2)
            out.append((ip, int(host), int(container)))
    return out


def _volume_sources(spec: dict[str, Any]) -> list[tuple[str, str, bool]]:
    out = []
    for volume in spec.get("volumes", []):
        if isinstance(volume, dict):
            out.append((volume["source"], volume["target"], bool(volume.get("read_only"))))
        else:
            source, target, *mode = str(volume).split(":")
            out.append((source, target, mode == ["ro"]))
    return out


def test_docker_compose_config_is_quiet(docker_compose: str) -> None:
    proc = _compose(docker_compose, "config", "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


def test_docker_compose_config_rejects_a_broken_file(docker_compose: str, tmp_path: Path) -> None:
    """The check has teeth: a misspelt key fails it."""
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(COMPOSE.read_text().replace("healthcheck:", "healthchek:", 1))
    proc = _compose(docker_compose, "config", "-q", path=broken)
    assert proc.returncode != 0
    assert "healthchek" in proc.stderr


def test_every_service_is_pinned_healthchecked_and_loopback_only(normalised: dict[str, Any]) -> None:
    assert normalised
    for name, spec in normalised.items():
        image = spec["image"]
        assert dk.image_is_pinned(image), f"{name}: image {image} is not pinned to a version (no :latest)"
        health = spec.get("healthcheck")
        assert health and health.get("test") and not health.get("disable"), f"{name}: no healthcheck"
        ports = _ports(spec)
        assert ports, f"{name}: publishes no port"
        for host_ip, published, _ in ports:
            assert host_ip == "127.0.0.1", f"{name}: port {published} is not bound to 127.0.0.1"
        for source, _, read_only in _volume_sources(spec):
            assert Path(source).is_file() and Path(source).is_relative_to(REPO / "docker"), source
            assert read_only, f"{name}: {source} is mounted writable"
        assert "amqpspec.protocols" in spec.get("labels", {}), f"{name}: no amqpspec.protocols label"


def test_amqpspec_reads_the_file_as_compose_does(normalised: dict[str, Any]) -> None:
    ours = dk.load_compose(COMPOSE).services
    assert list(ours) == list(dk.load_compose(COMPOSE).services)
    assert set(ours) == set(normalised)
    for name, service in ours.items():
        spec = normalised[name]
        assert service.image == spec["image"]
        assert sorted((b.host_ip, b.host_port, b.container_port) for b in service.ports) == sorted(_ports(spec))
        assert dict(service.environment) == {k: str(v) for k, v in (spec.get("environment") or {}).items()}
        assert sorted((str(m.source), m.target, m.read_only) for m in service.volumes) == sorted(_volume_sources(spec))
        assert list(service.healthcheck.test) == list(spec["healthcheck"]["test"])
        assert service.healthcheck.retries == spec["healthcheck"].get("retries")
        assert dict(service.labels) == {k: str(v) for k, v in spec["labels"].items()}
        assert sorted(service.profiles) == sorted(spec.get("profiles", []))
        assert service.hostname == spec.get("hostname")
