#!/usr/bin/env bash
# The project's test command (README and .ci/run call exactly this).
#
# Runs scripts/setup.sh, then pytest with any arguments passed through. The pytest session
# starts the local brokers it needs and stops the ones it started (tests/conftest.py), so
# nothing is started here. AMQPSPEC_NO_BROKERS=1 skips the tests that need a broker.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"

bash scripts/setup.sh

echo "test: $PYTHON -m pytest $*"
rc=0
"$PYTHON" -m pytest "$@" || rc=$?
if [[ $rc -eq 5 ]]; then
    # pytest's "no tests collected": a wrong path or -k must not pass as a green run
    echo "test: FAILED: pytest collected no tests (exit code 5); check the paths and -k/-m arguments" >&2
fi
exit "$rc"
