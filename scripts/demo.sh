#!/usr/bin/env bash
# `make demo`: starts a throwaway sqld on a free 127.0.0.1 port with a
# temporary data directory, runs examples/quickstart against it with each
# codec (direct, protobuf, gojson) over each transport (an http:// and a
# ws:// DSN: six runs), then stops the server and removes the directory,
# whatever happens.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

die() { echo "demo.sh: $*" >&2; exit 1; }

sqld=$(scripts/sqld.sh)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libsql-demo.XXXXXX")
pid='' qs=''
# shellcheck source=lib/sqld-throwaway.sh
. scripts/lib/sqld-throwaway.sh
cleanup() {
  [ -z "$qs" ] || kill "$qs" 2>/dev/null || true
  stop_sqld
}
trap cleanup EXIT
trap 'exit 130' INT TERM

go build -o "$tmp/quickstart" ./examples/quickstart

start_sqld

# sqld serves Hrana over WebSocket on its HTTP port (it upgrades GET /), so
# the ws:// DSNs name the same address.
for scheme in http ws; do
  for codec in direct protobuf gojson; do
    dsn="$scheme://127.0.0.1:$port?codec=$codec"
    echo "== quickstart -dsn $dsn"
    # In the background, so that a signal to this script runs cleanup at once.
    "$tmp/quickstart" -dsn "$dsn" &
    qs=$!
    wait "$qs"
    qs=
  done
done
echo "== quickstart ran with 3 codecs on 2 transports"
