#!/usr/bin/env bash
# apt-install.sh PKG...: installs Debian packages quietly (apt-get update
# first); prints apt's output only if it fails. Needs root.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "apt-install.sh: root is needed to install $*" >&2; exit 1; }
command -v apt-get >/dev/null || { echo "apt-install.sh: no apt-get to install $*" >&2; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "apt-install.sh: apt-get install $* failed" >&2
  exit 1
fi
