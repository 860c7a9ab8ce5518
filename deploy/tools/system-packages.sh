#!/usr/bin/env bash
# The Debian packages that pip cannot install: deploy/apt-packages.txt (the service: fonts and Pango for the report
# PDFs) and, with --test, deploy/apt-packages-test.txt (Chromium and poppler-utils for the test suite).
#
#   deploy/tools/system-packages.sh [--test]
#
# Installed with apt-get when they are missing and this runs as root; otherwise it stops at once with one line that
# names the exact command to run. `make run`, `make test` and .ci/run call it; it does nothing when all are present.
set -euo pipefail
cd "$(dirname "$0")/../.."

lists=(deploy/apt-packages.txt)
if [[ "${1:-}" == "--test" ]]; then
    lists+=(deploy/apt-packages-test.txt)
fi
mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "${lists[@]}" | grep -v '^$')

missing=()
for package in "${wanted[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
    [[ "$status" == "installed" ]] || missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi

command="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [[ "$(id -u)" -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "missing Debian packages: ${missing[*]}; run as root: $command" >&2
    exit 1
fi
echo "== Debian packages: installing ${missing[*]} (apt-get; a minute or two)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fc-cache -f >/dev/null 2>&1 || true
