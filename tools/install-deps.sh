#!/usr/bin/env bash
# tools/install-deps.sh: makes sure the Debian packages of tools/debian-packages.txt are
# installed. The Makefile runs it before the first build (so `make demo` and `make test` are
# the whole setup on a fresh Debian machine) and .ci/run runs it before building.
#   as root:      installs what is missing with apt-get (nothing else is downloaded)
#   as a user:    prints the one `sudo apt-get install ...` line and exits 1
#   --check:      only says what is missing (exit 1 when something is)
# On a system without dpkg it names the packages and leaves the rest to the compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
LIST=${XSA_DEPS_LIST:-tools/debian-packages.txt}  # tests point it at their own list
[ -r "$LIST" ] || { echo "install-deps: cannot read $LIST" >&2; exit 2; }
mapfile -t pkgs < <(sed -e "s/#.*//" -e "s/[[:space:]]//g" -e "/^$/d" "$LIST")

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: no dpkg here; xsa-eval needs the equivalents of these Debian packages: ${pkgs[*]}" >&2
    exit 0
fi
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

line="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "${1:-}" = --check ]; then
    echo "install-deps: missing Debian packages: ${missing[*]}" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    {
        echo "install-deps: xsa-eval needs Debian packages that are not installed: ${missing[*]}"
        echo "install them with this one line, then run make again:"
        echo "  sudo apt-get update && sudo $line"
    } >&2
    exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
