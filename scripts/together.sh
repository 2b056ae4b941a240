#!/usr/bin/env bash
# Runs groups of make targets at the same time, each group's targets one
# after another, every output line prefixed with its group's name; exits
# non-zero if any group failed, after all have ended, naming them.
#
#   scripts/together.sh "unit examples embedded otel fetch-check" "itest"
#
# make test uses it to run the suites that wait on servers (the integration
# tests mostly wait: on containers, on sqld's timers, on faults) beside the
# ones that mostly compute, so that the two cores stay busy.
#
# A failed group's output ends with pages of server logs, and a CI report
# keeps only the tail; so after all groups have ended, the lines that say
# what failed (go test's FAIL lines, testify's Error blocks, panics) are
# printed once more, last.
set -uo pipefail

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

pids=()
names=()
for i in $(seq 1 $#); do
  group=${!i}
  name=${group%% *}
  (
    set -o pipefail
    for target in $group; do
      make --no-print-directory "$target" 2>&1 | sed -u "s/^/[$name] /" | tee -a "$logs/$i" || exit 1
    done
  ) &
  pids+=($!)
  names+=("$group")
done

failed=()
for j in "${!pids[@]}"; do
  if ! wait "${pids[$j]}"; then
    failed+=("${names[$j]}")
    echo "together.sh: what failed in ${names[$j]}:" >&2
    grep -E -A12 -- '--- FAIL|^\[[^]]*\] (FAIL|panic:)|Error Trace:|[a-z_]+_test\.go:[0-9]+: ' "$logs/$((j + 1))" |
      grep -v -E 'libsql_server|INFO|WARN|DEBUG' | tail -n 120 >&2
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  printf 'together.sh: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
