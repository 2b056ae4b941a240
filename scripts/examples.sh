#!/usr/bin/env bash
# `make examples`: starts one throwaway sqld on a free 127.0.0.1 port with a
# temporary data directory, then runs `go vet ./... && go test ./...` in
# every example module (examples/*/go.mod) against it, EXAMPLES_JOBS modules
# at a time (default 2), with LIBSQL_EXAMPLE_URL set to the server. Prints
# each module's output when it fails, stops the server and removes the
# directory whatever happens, and fails if any module failed.
#
#   scripts/examples.sh                  every example module
#   scripts/examples.sh examples/gorm    only those named
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

die() { echo "examples.sh: $*" >&2; exit 1; }

jobs_max=${EXAMPLES_JOBS:-2}
if [ $# -gt 0 ]; then
  modules=("$@")
else
  modules=()
  for m in examples/*/go.mod; do modules+=("$(dirname "$m")"); done
fi
[ ${#modules[@]} -gt 0 ] || die "no example modules (examples/*/go.mod)"
for m in "${modules[@]}"; do [ -f "$m/go.mod" ] || die "$m has no go.mod"; done

sqld=$(scripts/sqld.sh)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libsql-examples.XXXXXX")

# Job control: every background job gets its own process group, so that
# cleanup can stop a module's go test together with its test binary.
set -m
pid='' running=()
# shellcheck source=lib/sqld-throwaway.sh
. scripts/lib/sqld-throwaway.sh
cleanup() {
  local p
  for p in "${running[@]}"; do kill -- "-$p" 2>/dev/null || true; done
  stop_sqld
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_sqld
export LIBSQL_EXAMPLE_URL="http://127.0.0.1:$port"
echo "== examples against sqld at $LIBSQL_EXAMPLE_URL, $jobs_max at a time"

# check MODULE: vets and tests one module; its output goes to a log, which
# is printed if it fails; its exit status to MODULE's .rc file.
check() {
  local m=$1 name=${1//\//_} start=$SECONDS rc=0
  (cd "$m" && go vet ./... && go test -count=1 -timeout 5m ./...) >"$tmp/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$tmp/$name.rc"
  if [ "$rc" = 0 ]; then
    echo "ok   $m ($((SECONDS - start))s)"
  else
    echo "FAIL $m ($((SECONDS - start))s):"; sed 's/^/    /' "$tmp/$name.log"
  fi
}

# active: how many module checks are still running.
active() {
  local p n=0
  for p in "${running[@]}"; do ! kill -0 "$p" 2>/dev/null || n=$((n + 1)); done
  echo "$n"
}

for m in "${modules[@]}"; do
  while [ "$(active)" -ge "$jobs_max" ]; do wait -n || true; done
  check "$m" &
  running+=("$!")
done
wait "${running[@]}" || true
running=()

failed=()
for m in "${modules[@]}"; do
  [ "$(cat "$tmp/${m//\//_}.rc" 2>/dev/null)" = 0 ] || failed+=("$m")
done
if [ ${#failed[@]} -gt 0 ]; then
  grep -i "error\|panic" "$tmp/sqld.log" >&2 || true
  die "failed: ${failed[*]}"
fi
echo "== all ${#modules[@]} example modules passed"
