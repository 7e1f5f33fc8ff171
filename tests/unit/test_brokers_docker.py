"""The Docker brokers without a Docker engine: compose parsing, backend choice, the CLI, the CI example.

There is no engine on the machines these tests run on, so what runs containers is checked
only up to the Docker API call (``run_kwargs``) and on container ``State`` documents as the
Docker API returns them (``health_verdict``); everything else here is pure logic or the CLI
with an engine that does not answer, which is exactly what users without Docker see.
"""

from __future__ import annotations

import re
import shlex
import socket
import textwrap
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from amqpspec.brokers import (
    BrokerError,
    ComposeError,
    DockerBroker,
    broker_names,
    choose_backend,
    docker_broker,
    docker_brokers,
    get_broker,
    probe_engine,
    redact_url,
)
from amqpspec.brokers import docker as dk
from amqpspec.brokers.cli import brokers as brokers_cli

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
WORKFLOW = REPO / ".github" / "workflows" / "conformance.yml"

EXPECTED = {
    # service: (protocols, AMQP host port, URL)
    "rabbitmq4": (("0-9-1", "1.0"), 5681, "amqp://guest:guest@127.0.0.1:5681/"),
    "rabbitmq313": (("0-9-1", "1.0"), 5682, "amqp://guest:guest@127.0.0.1:5682/"),
    "lavinmq": (("0-9-1",), 5683, "amqp://guest:guest@127.0.0.1:5683/"),
    "artemis": (("1.0",), 5684, "amqp://guest:guest@127.0.0.1:5684/"),
    "qpid-broker-j": (("0-9-1", "1.0"), 5685, "amqp://guest:guest@127.0.0.1:5685/"),
    "skupper-router": (("1.0",), 5686, "amqp://127.0.0.1:5686/"),
}


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """DOCKER_HOST pointing at a closed loopback port: an engine that does not answer."""
    host = f"tcp://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("DOCKER_HOST", host)
    monkeypatch.delenv(dk.COMPOSE_FILE_ENV, raising=False)
    monkeypatch.delenv("AMQPSPEC_BROKERS_BACKEND", raising=False)
    yield host


def _compose(tmp_path: Path, services: str, name: str = "docker-compose.yml") -> Path:
    path = tmp_path / name
    path.write_text("services:\n" + textwrap.indent(textwrap.dedent(services), "  "))
    return path


GOOD_SERVICE = """\
broker:
  image: example/broker:1.2.3
  ports: ["127.0.0.1:5699:5672", "127.0.0.1:15699:8080"]
  healthcheck:
    test: ["CMD", "true"]
    interval: 1m30s
    timeout: 500ms
    retries: 3
    start_period: 2s
  labels:
    amqpspec.protocols: "0-9-1, 1.0"
    amqpspec.amqp-port: "5672"
    amqpspec.user: alice
    amqpspec.password: wonderland
"""


# --- the real compose file -------------------------------------------------------------------


def test_compose_file_defines_the_six_brokers_with_ports_protocols_and_urls() -> None:
    compose = dk.load_compose(COMPOSE)
    assert list(compose.services) == list(EXPECTED)
    for name, (protocols, port, url) in EXPECTED.items():
        broker = DockerBroker(compose.services[name])
        assert broker.name == name
        assert broker.protocols == protocols
        assert broker.port == port
        assert broker.host == "127.0.0.1"
        assert broker.url == url
        assert ":guest@" not in redact_url(broker.url)
        assert broker.tls_url is None and broker.cafile is None


def test_compose_brokers_do_not_collide_with_local_brokers() -> None:
    compose = dk.load_compose(COMPOSE)
    assert not set(compose.services) & set(broker_names())
    local_ports: set[int] = set()
    for name in broker_names():
        local = get_broker(name)
        local_ports.update(local.ports.values())
        local_ports.add(local.port + 20000)  # RabbitMQ's Erlang distribution port
    host_ports = [b.host_port for s in compose.services.values() for b in s.ports]
    assert len(host_ports) == len(set(host_ports))
    assert not set(host_ports) & local_ports


def test_compose_services_carry_pinned_images_healthchecks_and_profiles() -> None:
    for service in dk.load_compose(COMPOSE).services.values():
        assert dk.image_is_pinned(service.image), service.image
        assert service.healthcheck.test[0] in ("CMD", "CMD-SHELL")
        assert "all" in service.profiles
        for protocol, profile in (("0-9-1", "amqp091"), ("1.0", "amqp10")):
            assert (protocol in service.protocols) == (profile in service.profiles), service.name
        for mount in service.volumes:
            assert mount.source.is_file() and mount.source.is_relative_to(REPO / "docker"), mount


def test_get_broker_finds_compose_brokers_and_lists_them_when_unknown() -> None:
    broker = get_broker("artemis")
    assert isinstance(broker, DockerBroker)
    known = r"^unknown broker 'nope' \(known: rabbitmq, garagemq, proton; Docker: rabbitmq4, "
    with pytest.raises(BrokerError, match=known):
        get_broker("nope")
    with pytest.raises(BrokerError, match="no broker 'nope' in"):
        docker_broker("nope")


def test_docker_broker_is_not_in_the_local_registry() -> None:
    assert "DockerBroker" not in {type(get_broker(n)).__name__ for n in broker_names()}
    assert set(broker_names()) == {"rabbitmq", "garagemq", "proton"}


# --- parsing rules -----------------------------------------------------------------------------


def test_parse_reads_ports_credentials_and_durations(tmp_path: Path) -> None:
    service = dk.load_compose(_compose(tmp_path, GOOD_SERVICE)).services["broker"]
    assert service.protocols == ("0-9-1", "1.0")
    assert service.amqp_host_port == 5699
    assert service.host_ports() == {"port": 5699, "tcp_8080": 15699}
    assert service.credentials == ("alice", "wonderland")
    assert service.healthcheck.interval == 90.0
    assert service.healthcheck.timeout == 0.5
    assert DockerBroker(service).url == "amqp://alice:wonderland@127.0.0.1:5699/"
    assert repr(DockerBroker(service)) == "<DockerBroker broker amqp://alice@127.0.0.1:5699/>"


def test_services_without_the_protocols_label_are_not_brokers(tmp_path: Path) -> None:
    path = _compose(tmp_path, GOOD_SERVICE + "helper:\n  image: busybox\n  build: .\n")
    assert list(dk.load_compose(path).services) == ["broker"]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("example/broker:1.2.3", "example/broker:latest", "must be pinned"),
        ("example/broker:1.2.3", "example/broker", "must be pinned"),
        ('"127.0.0.1:5699:5672"', '"5699:5672"', "must be written"),
        ('"127.0.0.1:5699:5672"', '"0.0.0.0:5699:5672"', "on 127.0.0.1 only"),
        ('"0-9-1, 1.0"', '"0-10"', "amqpspec.protocols must list"),
        ('amqpspec.amqp-port: "5672"', 'amqpspec.amqp-port: "5671"', "is not in `ports`"),
        ("    amqpspec.password: wonderland\n", "", "give both amqpspec.user and amqpspec.password"),
        ("example/broker:1.2.3", "example/broker:${TAG}", "variable substitution"),
        ("interval: 1m30s", "interval: soon", "not a duration"),
        ("    amqpspec.user: alice", "    amqpspec.service: x\n    amqpspec.user: alice", "is reserved"),
        ("  labels:", "  restart: always\n  labels:", "restart not supported"),
        ("    test: [", "    disable: true\n    test: [", "disable not supported"),
    ],
)
def test_parse_refuses_what_the_backend_cannot_honour(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in GOOD_SERVICE
    path = _compose(tmp_path, GOOD_SERVICE.replace(old, new, 1))
    with pytest.raises(ComposeError, match=re.escape(message)):
        dk.load_compose(path)


def test_parse_requires_a_healthcheck(tmp_path: Path) -> None:
    text = re.sub(r"  healthcheck:\n(    .*\n)+", "", GOOD_SERVICE)
    with pytest.raises(ComposeError, match="needs a `healthcheck`"):
        dk.load_compose(_compose(tmp_path, text))


def test_parse_refuses_a_host_port_published_twice(tmp_path: Path) -> None:
    second = GOOD_SERVICE.replace("broker:", "other:", 1).replace("15699:8080", "15698:8080")
    with pytest.raises(ComposeError, match="host port 5699 is published by both broker and other"):
        dk.load_compose(_compose(tmp_path, GOOD_SERVICE + second))


def test_bad_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "docker-compose.yml"
    path.write_text("services:\n  a: [\n")
    with pytest.raises(ComposeError, match=r"not valid YAML at line \d+, column \d+"):
        dk.load_compose(path)


@pytest.mark.parametrize(
    ("image", "pinned"),
    [
        ("rabbitmq:4.2.7-management", True),
        ("quay.io/skupper/skupper-router:3.5.0", True),
        ("localhost:5000/broker:1.0", True),
        ("broker@sha256:" + "0" * 64, True),
        ("rabbitmq", False),
        ("rabbitmq:latest", False),
        ("localhost:5000/broker", False),
    ],
)
def test_image_is_pinned(image: str, pinned: bool) -> None:
    assert dk.image_is_pinned(image) is pinned


def test_compose_file_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(dk.COMPOSE_FILE_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert dk.find_compose_file() == COMPOSE  # the checkout's, when the cwd has none
    (tmp_path / "docker-compose.yml").write_text("services:\n  web:\n    image: nginx:1\n")
    assert dk.find_compose_file() == COMPOSE  # an unrelated compose file is not taken
    own = _compose(tmp_path, GOOD_SERVICE)
    assert dk.find_compose_file() == own
    monkeypatch.setenv(dk.COMPOSE_FILE_ENV, str(tmp_path / "missing.yml"))
    with pytest.raises(ComposeError, match=r"AMQPSPEC_COMPOSE_FILE=.*missing\.yml: no such file"):
        dk.find_compose_file()


# --- what the Docker API is asked for ----------------------------------------------------------


def test_run_kwargs_is_what_compose_would_create() -> None:
    service = dk.load_compose(COMPOSE).services["rabbitmq313"]
    kwargs = dk.run_kwargs(service)
    assert kwargs["image"] == "rabbitmq:3.13.7-management"
    assert kwargs["name"] == "amqpspec-rabbitmq313"
    assert kwargs["hostname"] == "rabbitmq313"
    assert kwargs["detach"] is True
    assert kwargs["ports"] == {"5672/tcp": [("127.0.0.1", 5682)], "15672/tcp": [("127.0.0.1", 15682)]}
    assert kwargs["volumes"] == {
        str(REPO / "docker/rabbitmq313/enabled_plugins"): {"bind": "/etc/rabbitmq/enabled_plugins", "mode": "ro"}
    }
    assert kwargs["healthcheck"] == {
        "test": ["CMD", "rabbitmq-diagnostics", "-q", "check_port_connectivity"],
        "interval": 5_000_000_000,
        "timeout": 15_000_000_000,
        "start_period": 20_000_000_000,
        "retries": 30,
    }
    assert kwargs["labels"]["amqpspec.service"] == "rabbitmq313"
    assert kwargs["labels"]["amqpspec.protocols"] == "0-9-1 1.0"


def test_the_sdk_turns_run_kwargs_into_the_expected_create_request() -> None:
    """The Docker SDK's own translation (no engine involved): ports, binds, healthcheck, labels."""
    sdk = pytest.importorskip("docker")
    containers = pytest.importorskip("docker.models.containers")
    translate = getattr(containers, "_create_container_args", None)
    if translate is None:
        pytest.skip(f"docker SDK {sdk.__version__} has no _create_container_args")
    kwargs = dk.run_kwargs(dk.load_compose(COMPOSE).services["artemis"])
    create = translate({**kwargs, "version": "1.45", "command": None})
    assert create.pop("name") == "amqpspec-artemis"
    api = sdk.APIClient(base_url="tcp://127.0.0.1:9", version="1.45")  # never contacted
    request = api.create_container_config(**create)
    assert request["Image"] == "apache/activemq-artemis:2.44.0"
    assert sorted(request["Env"]) == ["ANONYMOUS_LOGIN=false", "ARTEMIS_PASSWORD=guest", "ARTEMIS_USER=guest"]
    assert request["HostConfig"]["PortBindings"] == {
        "5672/tcp": [{"HostIp": "127.0.0.1", "HostPort": "5684"}],
        "8161/tcp": [{"HostIp": "127.0.0.1", "HostPort": "15684"}],
    }
    assert request["Healthcheck"] == {
        "Test": ["CMD", "/var/lib/artemis-instance/bin/artemis", "check", "node", "--up",
                 "--user", "guest", "--password", "guest"],
        "Interval": 10_000_000_000,
        "Timeout": 30_000_000_000,
        "Retries": 18,
        "StartPeriod": 20_000_000_000,
    }
    assert request["Labels"]["amqpspec.service"] == "artemis"


@pytest.mark.parametrize(
    ("state", "verdict", "detail"),
    [
        ({"Status": "created"}, "waiting", "container created"),
        ({"Status": "running", "Health": {"Status": "starting", "FailingStreak": 2}}, "waiting", "2 failed check"),
        ({"Status": "running", "Health": {"Status": "healthy"}}, "ready", "healthy"),
        ({"Status": "running"}, "ready", "no healthcheck"),
        (
            {"Status": "running", "Health": {"Status": "unhealthy", "Log": [{"Output": "Error:\nnode down\n"}]}},
            "failed",
            "last check said 'Error: node down'",
        ),
        ({"Status": "exited", "ExitCode": 137, "Error": ""}, "failed", "exit code 137"),
        ({"Status": "paused"}, "failed", "paused"),
    ],
)
def test_health_verdict(state: dict[str, object], verdict: str, detail: str) -> None:
    got, text = dk.health_verdict(state)
    assert got == verdict
    assert detail in text


# --- backend selection -------------------------------------------------------------------------


def test_unreachable_engine_is_reported_not_raised(no_engine: str) -> None:
    probe = probe_engine(timeout=1.0)
    assert not probe.reachable
    assert probe.where == no_engine
    assert probe.detail == "connection refused"


def test_auto_falls_back_to_local_with_a_clear_message(no_engine: str) -> None:
    choice = choose_backend("auto")
    assert choice.kind == "local"
    assert choice.message == (
        f"no Docker engine reachable at {no_engine} (connection refused): using local OS-package brokers"
    )


def test_backend_docker_without_engine_is_an_error(no_engine: str) -> None:
    expected = (
        r"^--backend docker: no Docker engine reachable at tcp://127\.0\.0\.1:\d+ \(connection refused\); "
        "start Docker"
    )
    with pytest.raises(BrokerError, match=expected):
        choose_backend("docker")


def test_backend_local_does_not_probe() -> None:
    def probe() -> dk.EngineProbe:
        raise AssertionError("--backend local must not touch Docker")

    choice = choose_backend("local", probe=probe)
    assert (choice.kind, choice.message) == ("local", "local OS-package brokers (--backend local)")


def test_reachable_engine_selects_docker() -> None:
    engine = dk.EngineProbe(True, "unix:///var/run/docker.sock", "Docker 27.0.3", client=object())
    choice = choose_backend("auto", probe=lambda: engine)
    assert choice.kind == "docker"
    assert choice.message == "docker engine at unix:///var/run/docker.sock (Docker 27.0.3)"


def test_docker_host_password_is_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"tcp://user:s3cret-pw@127.0.0.1:{_closed_port()}")
    choice = choose_backend("auto")
    assert "s3cret-pw" not in choice.message
    assert "tcp://user@127.0.0.1:" in choice.message


def test_docker_broker_without_engine(no_engine: str) -> None:
    broker = docker_brokers()[3]
    assert broker.name == "artemis"
    assert not broker.is_running()
    expected = r"^artemis: no Docker engine reachable at tcp://127\.0\.0\.1:\d+ \(connection refused\)"
    with pytest.raises(BrokerError, match=expected):
        broker.start()
    assert broker.stop() is False
    status = broker.status()
    assert not status.running
    assert status.url == "amqp://guest@127.0.0.1:5684/"
    assert status.detail == f"unavailable: no Docker engine reachable at {no_engine}"
    assert broker.install() == []


# --- the CLI without an engine -----------------------------------------------------------------


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(brokers_cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_cli_list_marks_docker_brokers_unavailable(no_engine: str) -> None:
    code, out, err = _cli("list")
    assert code == 0, err
    assert err.splitlines()[0] == (
        f"backend: no Docker engine reachable at {no_engine} (connection refused): using local OS-package brokers"
    )
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == [*broker_names(), *EXPECTED]
    for line in lines[len(broker_names()):]:
        assert line.split()[3] == "unavailable"
        assert line.endswith(f"no Docker engine reachable at {no_engine}")
    assert "guest:guest" not in out + err


def test_cli_list_backend_local_is_the_old_listing(no_engine: str) -> None:
    code, out, err = _cli("list", "--backend", "local")
    assert code == 0
    assert err == "backend: local OS-package brokers (--backend local)\n"
    assert [line.split()[0] for line in out.splitlines()] == broker_names()


def test_cli_backend_from_environment(no_engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMQPSPEC_BROKERS_BACKEND", "docker")
    code, out, err = _cli("list")
    assert code == 2 and out == ""
    assert err.startswith("error: --backend docker: no Docker engine reachable at ")


def test_cli_up_docker_broker_without_engine_is_a_clear_error(no_engine: str) -> None:
    code, out, err = _cli("up", "lavinmq")
    assert code == 2 and out == ""
    first, second = err.splitlines()[:2]
    assert first.startswith("backend: no Docker engine reachable")
    assert second.startswith("error: lavinmq is a Docker broker from ")
    assert "start Docker or set DOCKER_HOST, or use a local broker (rabbitmq, garagemq, proton)" in second


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("up", "--backend", "local", "artemis"),
            "error: artemis is a Docker broker (docker-compose.yml); use --backend docker",
        ),
        (("down", "--backend", "local", "skupper-router"), "error: skupper-router is a Docker broker"),
        (("install", "artemis"), "error: artemis: Docker broker(s), no Debian packages to install"),
        (("up", "nope"), "error: unknown broker 'nope' (known: rabbitmq, garagemq, proton; Docker: rabbitmq4,"),
    ],
)
def test_cli_refuses_wrong_backend_names(no_engine: str, args: tuple[str, ...], message: str) -> None:
    code, out, err = _cli(*args)
    assert code == 2 and out == ""
    assert message in err


def test_cli_status_of_docker_broker_without_engine(no_engine: str) -> None:
    code, out, _ = _cli("status", "rabbitmq4")
    assert code == 3
    assert out == f"rabbitmq4: unavailable: no Docker engine reachable at {no_engine}\n"


def test_cli_env_of_docker_broker_needs_no_engine(no_engine: str) -> None:
    code, out, err = _cli("env", "skupper-router")
    assert code == 0 and err == ""
    exports = dict(shlex.split(line.removeprefix("export "))[0].split("=", 1) for line in out.splitlines())
    assert exports["AMQPSPEC_URL"] == "amqp://127.0.0.1:5686/"
    assert exports["AMQPSPEC_PROTOCOLS"] == "1.0"
    assert "AMQPSPEC_TLS_URL" not in exports


# --- the example CI workflow -------------------------------------------------------------------

KNOWN_ACTIONS = {
    "actions/checkout@v4",
    "actions/setup-python@v5",
    "actions/upload-artifact@v4",
    "actions/download-artifact@v4",
    "actions/setup-java@v4",
}


def _workflow() -> dict[str, object]:
    document = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(document, dict)
    return document


def _steps() -> Iterator[dict[str, object]]:
    jobs = _workflow()["jobs"]
    assert isinstance(jobs, dict)
    for job in jobs.values():
        yield from job["steps"]


def _amqpspec_commands() -> list[list[str]]:
    """Every ``amqpspec …`` invocation in the run scripts, as argv (line continuations joined)."""
    commands = []
    for step in _steps():
        script = str(step.get("run", "")).replace("\\\n", " ")
        for line in script.splitlines():
            for match in re.finditer(r"(?:^|[;&|(]\s*|\$\(\s*)(amqpspec\s[^;&|)]*)", line.strip()):
                commands.append(shlex.split(match.group(1), comments=True))
    return commands


def test_workflow_is_valid_yaml_with_jobs_and_a_trigger() -> None:
    document = _workflow()
    assert "on" in document or True in document  # YAML 1.1 reads a bare `on` as true
    assert set(document["jobs"]) == {"conformance", "report"}  # type: ignore[call-overload]


def test_workflow_uses_only_well_known_actions() -> None:
    used = {str(step["uses"]) for step in _steps() if "uses" in step}
    assert used <= KNOWN_ACTIONS, used - KNOWN_ACTIONS
    assert {"actions/checkout@v4", "actions/setup-python@v5", "actions/upload-artifact@v4"} <= used


def test_workflow_matrix_matches_the_compose_labels() -> None:
    matrix = _workflow()["jobs"]["conformance"]["strategy"]["matrix"]["include"]  # type: ignore[index]
    pairs = {(m["broker"], m["protocol"]) for m in matrix}
    expected = {(s.name, p) for s in dk.load_compose(COMPOSE).services.values() for p in s.protocols}
    assert pairs == expected


def _click_options(command: click.Command) -> set[str]:
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts) if opt.startswith("-")}


def test_workflow_calls_only_existing_commands_and_options() -> None:
    from amqpspec.cli import main

    available: dict[str, click.Command] = dict(main.commands)
    if "report" not in available:  # written, not attached yet: check against the command object
        try:
            from amqpspec.reports.cli import report
        except ImportError:
            pass
        else:
            available["report"] = report
    commands = _amqpspec_commands()
    used = {argv[1] for argv in commands}
    assert {"run", "report", "brokers"} <= used
    missing = sorted(used - set(available))
    assert missing in ([], ["report"]), f"the workflow calls amqpspec {missing}, which do not exist"
    for argv in commands:
        if argv[1] in missing:
            continue
        command: click.Command = available[argv[1]]
        if isinstance(command, click.Group):
            command = command.commands[argv[2]]
        unknown = {a.split("=", 1)[0] for a in argv[2:] if a.startswith("--")} - _click_options(command)
        assert not unknown, f"{' '.join(argv[:3])}: unknown option(s) {unknown}"
    if missing:
        pytest.skip("`amqpspec report` does not exist yet (amqpspec.reports.cli); its options are unchecked")


def test_workflow_run_options_exist_even_in_shell_variables() -> None:
    """``--baseline`` is passed through "$@" (only when the baseline file exists)."""
    from amqpspec.cli import main

    scripts = "\n".join(str(step.get("run", "")) for step in _steps())
    run_options = _click_options(main.commands["run"])
    for option in ("--baseline", "--json", "--junit", "--protocol"):
        assert option in scripts
        assert option in run_options
    assert "baselines/${BROKER}-${PROTOCOL}.json" in scripts


def test_workflow_refers_to_files_that_exist() -> None:
    text = WORKFLOW.read_text()
    for relative in ("docker-compose.yml", "baselines/README.md"):
        assert relative in text
        assert (REPO / relative).is_file()
    assert (REPO / "baselines").is_dir()
