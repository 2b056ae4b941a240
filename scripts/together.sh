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
set -uo pipefail

pids=()
names=()
for group in "$@"; do
  name=${group%% *}
  (
    set -o pipefail
    for target in $group; do
      make --no-print-directory "$target" 2>&1 | sed -u "s/^/[$name] /" || exit 1
    done
  ) &
  pids+=($!)
  names+=("$group")
done

failed=()
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed+=("${names[$i]}")
done
if [ ${#failed[@]} -gt 0 ]; then
  printf 'together.sh: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
