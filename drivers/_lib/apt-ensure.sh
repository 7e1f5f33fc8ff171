#!/usr/bin/env bash
# Install the named Debian packages that are missing (a driver.toml `setup` helper).
# Idempotent: costs one dpkg-query when all are there. Refreshes the package lists only when a
# first install attempt fails (a new machine has none yet). Needs root for the install.
set -euo pipefail
missing=()
for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
(( ${#missing[@]} )) || exit 0
export DEBIAN_FRONTEND=noninteractive
echo "apt-get install ${missing[*]}" >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
