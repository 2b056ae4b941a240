#!/usr/bin/env bash
# apt-install.sh PKG...: installs Debian packages quietly (apt-get update
# first); prints apt's output only if it fails. Needs root.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "apt-install.sh: root is needed to install $*" >&2; exit 1; }
command -v apt-get >/dev/null || { echo "apt-install.sh: no apt-get to install $*" >&2; exit 1; }
# One install at a time: make test's early Docker start may install while
# another script does. apt-get and what dpkg starts get the lock's
# descriptor closed (8>&-), so a daemon a postinstall starts does not keep it.
exec 8>/var/lock/gohrana-apt-install.lock
flock -w 600 8 || { echo "apt-install.sh: another apt-install.sh held /var/lock/gohrana-apt-install.lock for 600 s" >&2; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { apt-get update -qq 8>&- && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" 8>&-; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "apt-install.sh: apt-get install $* failed" >&2
  exit 1
fi
