#!/usr/bin/env bash
# Install the client library of every driver (drivers/*/driver.toml, see docs/drivers.md).
#
# Runs each driver's `setup` command from its own folder, one after the other, and prints how
# long each took. A driver whose setup fails is reported and the rest go on: the exit status is
# 0 all the same, because `amqpspec client` and the driver self-test skip a driver whose
# `check` fails, with the reason. Idempotent and non-interactive (npm install with a lock file,
# pip install of a pinned version, apt-get only for Debian packages that are missing).
#
#   scripts/setup-drivers.sh              # every driver
#   scripts/setup-drivers.sh rhea pika    # only the named drivers
#
# PYTHON selects the interpreter the Python drivers' setup uses (default: python3).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHON="${PYTHON:-python3}"
export DEBIAN_FRONTEND=noninteractive
export PIP_ROOT_USER_ACTION=ignore

say() { printf 'setup-drivers: %s\n' "$*"; }

# the `setup` value of one driver.toml (tomllib: Python >= 3.11, which amqpspec needs anyway)
setup_of() {
    "$PYTHON" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb")).get("setup", ""))' "$1"
}

names=("$@")
if (( ${#names[@]} == 0 )); then
    for toml in drivers/*/driver.toml; do
        names+=("$(basename "$(dirname "$toml")")")
    done
fi

failed=()
start_all=$SECONDS
for name in "${names[@]}"; do
    toml="drivers/$name/driver.toml"
    if [[ ! -f "$toml" ]]; then
        say "$name: no $toml (skipped)"
        failed+=("$name")
        continue
    fi
    if ! setup="$(setup_of "$toml" 2>&1)"; then
        say "$name: $toml does not parse: ${setup##*$'\n'}"
        failed+=("$name")
        continue
    fi
    if [[ -z "$setup" ]]; then
        say "$name: nothing to install"
        continue
    fi
    start=$SECONDS
    log="$(mktemp)"
    # </dev/null: nothing may ask a question; the log is shown only when the setup fails
    if (cd "drivers/$name" && bash -c "$setup") </dev/null >"$log" 2>&1; then
        say "$name: ok ($(( SECONDS - start )) s)"
    else
        say "$name: FAILED after $(( SECONDS - start )) s (the driver will be skipped); last lines:"
        tail -n 5 "$log" | sed 's/^/    /'
        failed+=("$name")
    fi
    rm -f "$log"
done
if (( ${#failed[@]} )); then
    say "done in $(( SECONDS - start_all )) s; not installed: ${failed[*]}"
else
    say "done in $(( SECONDS - start_all )) s; all ${#names[@]} drivers installed"
fi
exit 0
