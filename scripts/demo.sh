#!/usr/bin/env bash
# `make demo`: starts a throwaway sqld on a free 127.0.0.1 port with a
# temporary data directory, runs examples/quickstart against it with each
# codec, then stops the server and removes the directory, whatever happens.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

die() { echo "demo.sh: $*" >&2; exit 1; }

sqld=$(scripts/sqld.sh)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libsql-demo.XXXXXX")
pid='' qs=''
cleanup() {
  [ -z "$qs" ] || kill "$qs" 2>/dev/null || true
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# healthy PORT: GET /health answers 200 (plain bash, no curl needed).
# shellcheck disable=SC2016 # $1 expands in the inner bash
healthy() {
  timeout 2 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3
    read -r _ code _ <&3
    [ "$code" = 200 ]' _ "$1" 2>/dev/null
}

# in_use PORT: something accepts connections there.
# shellcheck disable=SC2016
in_use() { timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null; }

go build -o "$tmp/quickstart" ./examples/quickstart

port=
for _ in 1 2 3 4 5; do
  p=$((20000 + RANDOM % 20000))
  in_use "$p" && continue
  "$sqld" -d "$tmp/data.sqld" --http-listen-addr "127.0.0.1:$p" --no-welcome >"$tmp/sqld.log" 2>&1 &
  pid=$!
  for _ in $(seq 150); do # 15 s
    if healthy "$p"; then port=$p; break 2; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=
  grep -qi "in use" "$tmp/sqld.log" || { cat "$tmp/sqld.log" >&2; die "sqld did not become healthy on 127.0.0.1:$p"; }
done
[ -n "$port" ] || die "could not start sqld on a free port"

for codec in direct gojson; do
  dsn="http://127.0.0.1:$port?codec=$codec"
  echo "== quickstart -dsn $dsn"
  # In the background, so that a signal to this script runs cleanup at once.
  "$tmp/quickstart" -dsn "$dsn" &
  qs=$!
  wait "$qs"
  qs=
done
