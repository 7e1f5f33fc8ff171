#!/usr/bin/env bash
# Install amqpspec (editable) and the Debian packages of the local brokers.
#
# Idempotent and non-interactive: run it before every test run; when everything is present
# it costs a pip no-op and one dpkg-query. Needs root only when Debian packages are missing.
#
#   scripts/setup.sh                 # for the tests: the test extra, all brokers, the test tools
#   scripts/setup.sh rabbitmq        # only the named brokers
#   scripts/setup.sh --no-brokers    # only amqpspec (e.g. to test a remote broker)
#   scripts/setup.sh --run rabbitmq  # for a run (scripts/run-local.sh): plain amqpspec, no test
#                                    # extra, no test tools (browser, tshark, docker-compose, Java)
#
# For the tests it also writes the report JVM's class archive (`amqpspec spark prepare`).
#
# PYTHON selects the interpreter (default: python3 on PATH). The broker package names are
# not repeated here: `python3 -m amqpspec.brokers install` reads them from the definitions.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"

say() { printf 'setup: %s\n' "$*"; }

mode=test   # test: what the tests need; run: what `amqpspec run` needs
with_brokers=1
names=()
for arg in "$@"; do
    case "$arg" in
        --run) mode=run ;;
        --no-brokers) with_brokers=0 ;;
        -*) say "error: unknown option $arg (options: --run, --no-brokers; then broker names)" >&2; exit 2 ;;
        *) names+=("$arg") ;;
    esac
done

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    say "error: $PYTHON not found on PATH (amqpspec needs Python >= 3.11)" >&2
    exit 2
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    say "error: $("$PYTHON" -V 2>&1) is too old; amqpspec needs Python >= 3.11 (set PYTHON=...)" >&2
    exit 2
fi
if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
    say "error: pip is missing for $PYTHON; on Debian: apt-get install -y python3-pip python3-venv" >&2
    exit 2
fi
stdlib="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')"
in_venv="$("$PYTHON" -c 'import sys; print(int(sys.prefix != sys.base_prefix))')"
if [[ -f "$stdlib/EXTERNALLY-MANAGED" && "$in_venv" == 0 ]]; then
    say "error: $PYTHON is the system's externally managed Python (PEP 668); create and activate" >&2
    say "       a virtualenv first: python3 -m venv .venv && . .venv/bin/activate && $0" >&2
    exit 2
fi

target=".[test]"
[[ "$mode" == run ]] && target="."
say "pip install -e $target with $("$PYTHON" -V 2>&1)"
PIP_ROOT_USER_ACTION=ignore "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-input -e "$target"

if (( ! with_brokers )); then
    say "skipping broker packages (--no-brokers)"
else
    say "Debian packages for brokers: ${names[*]:-all}"
    "$PYTHON" -m amqpspec.brokers install "${names[@]}"
fi
if [[ "$mode" == test ]] && (( with_brokers )); then
    # tools the tests drive for real: compose-file validation, pcap decoding, the HTML report's
    # browser, and the Java runtime the Spark pipeline (pyspark) runs on
    tools=(docker-compose tshark chromium openjdk-17-jre-headless)
    missing=()
    for pkg in "${tools[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    if (( ${#missing[@]} )); then
        say "Debian packages for test tools: ${missing[*]}"
        echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
            || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
    fi
fi
if [[ "$mode" == test ]]; then bash scripts/setup-drivers.sh; fi  # client libraries of drivers/ (docs/drivers.md)
if [[ "$mode" == test ]] && command -v java >/dev/null 2>&1; then
    # the report JVM's class archive, written once here rather than by the first report
    # (tens of seconds); a no-op when it is there
    prepared="$("$PYTHON" -m amqpspec.cli spark prepare)" || { say "error: amqpspec spark prepare failed" >&2; exit 1; }
    say "$prepared"
fi
say "done"
