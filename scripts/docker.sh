#!/usr/bin/env bash
# Makes sure a Docker engine answers `docker info`: installs docker.io with
# apt-get if dockerd is missing, starts dockerd in the background (log in
# .cache/dockerd.log) and waits for it. Idempotent; quiet on success.
# Needs root on a fresh machine.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
timeout_s=${DOCKER_START_TIMEOUT:-60}

# One start at a time: make test starts the engine early in the background,
# and make itest's own call then waits for that one instead of racing it.
mkdir -p "$root/.cache"
# Children get the lock's descriptor closed (9>&-): a daemon started under it
# (dockerd, or one the package's postinstall starts) must not hold it.
exec 9>"$root/.cache/docker.lock"
flock -w 300 9 || die "another scripts/docker.sh held $root/.cache/docker.lock for 300 s"

die() { echo "docker.sh: $*" >&2; exit 1; }
engine_up() { command -v docker >/dev/null && timeout 10 docker info >/dev/null 2>&1; }

engine_up && exit 0

# A docker client may exist (e.g. /usr/local/bin/docker) without an engine,
# so look for dockerd itself.
if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
  echo "docker.sh: installing docker.io with apt-get" >&2
  "$root/scripts/apt-install.sh" docker.io 9>&- || die "cannot install docker.io"
  command -v dockerd >/dev/null || die "docker.io installed but dockerd is not on PATH"
fi

# The package's postinstall may already have started the engine.
engine_up && exit 0

pidfile=/var/run/docker.pid
if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "docker.sh: dockerd is running but not answering yet; waiting" >&2
else
  [ "$(id -u)" = 0 ] || die "no Docker engine running and not root: cannot start dockerd"
  log=$root/.cache/dockerd.log
  echo "docker.sh: starting dockerd (log: $log)" >&2
  # setsid + nohup: dockerd outlives this script and the make that ran it.
  setsid nohup dockerd >>"$log" 2>&1 </dev/null 9>&- &
fi

deadline=$((SECONDS + timeout_s))
until engine_up; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "docker.sh: no Docker engine after ${timeout_s}s; last lines of ${log:-the dockerd log}:" >&2
    [ -n "${log:-}" ] && tail -n 20 "$log" >&2
    exit 1
  fi
  sleep 0.5
done
