#!/usr/bin/env bash
# Run the AMQP 0-9-1 conformance suite against a broker, by default a local RabbitMQ.
#
#   scripts/run-local.sh                          # starts the local RabbitMQ if needed
#   scripts/run-local.sh amqp://u:p@host:5672/    # any broker; further args go to amqpspec
#   AMQPSPEC_URL=amqps://... scripts/run-local.sh --strict
#
# Results land in results/amqp091.jsonl and results/amqp091.junit.xml. A RabbitMQ this
# script started is stopped on exit; one that was already running is left alone.
# Exits with amqpspec's exit code (0 ok, 1 failures, 2 usage errors).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"

url="${AMQPSPEC_URL:-}"
if [[ $# -gt 0 && "$1" =~ ^amqps?:// ]]; then
    url="$1"
    shift
fi

# --run: amqpspec itself (no test extra) and nothing the tests alone need
if [[ -n "$url" ]]; then
    bash scripts/setup.sh --run --no-brokers  # a given broker needs no local packages
else
    bash scripts/setup.sh --run rabbitmq
fi

brokers() { "$PYTHON" -m amqpspec.brokers "$@"; }

if [[ -z "$url" ]]; then
    if brokers status rabbitmq >/dev/null; then
        echo "run-local: using the RabbitMQ that is already running (it stays running)"
    else
        # the trap is set before starting, so a half-started broker is cleaned up too
        trap 'echo "run-local: stopping the RabbitMQ started by this script"; brokers down rabbitmq || true' EXIT
        brokers up rabbitmq
    fi
    eval "$(brokers env rabbitmq)"
    url="$AMQPSPEC_URL"
fi

if command -v amqpspec >/dev/null 2>&1; then
    amqpspec=(amqpspec)
else  # console script not on PATH yet (e.g. pyenv shims not rehashed)
    amqpspec=("$PYTHON" -c 'import sys; from amqpspec.cli import main; sys.argv[0] = "amqpspec"; sys.exit(main())')
fi

mkdir -p results
rc=0
# the default --jobs runs cases side by side (brokers pause seconds before some closes, spec
# 4.10.2, and parallel cases overlap those pauses); a --jobs in "$@" wins
"${amqpspec[@]}" run "$url" --protocol 0-9-1 \
    --json results/amqp091.jsonl --junit results/amqp091.junit.xml "$@" || rc=$?
exit "$rc"
