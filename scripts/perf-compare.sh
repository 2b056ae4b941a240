#!/usr/bin/env bash
# perf-compare.sh BASE [HEAD]: compares the performance of two revisions with
# bench/cmd/libsql-perf and prints a Markdown table of the deltas.
#
# BASE and HEAD are git revisions (or directories holding a checkout of the
# module); HEAD defaults to the working tree. Revisions are checked out in
# temporary git worktrees, removed on exit. The harness is built twice from
# the CURRENT bench/ sources, once against each tree (go build -modfile with
# a temporary copy of bench/go.mod whose replace points at that tree), so
# that both sides run the same workloads. Then ROUNDS (3) interleaved rounds
# run (base, head, base, head, ...), each writing JSON; the rounds of each
# side are merged by median and compared.
#
# Environment: PERF_ARGS extra libsql-perf flags for every round (e.g.
# "-run decode -benchtime 500ms", or "-dsn http://127.0.0.1:8080");
# ROUNDS (default 3); PERF_OUT a directory to keep base.json, head.json and
# the per-round files in.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

die() { echo "perf-compare.sh: $*" >&2; exit 1; }

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ -z "$1" ]; then
  die "usage: scripts/perf-compare.sh BASE [HEAD]   (git revisions or checkouts; HEAD defaults to the working tree)"
fi
rounds=${ROUNDS:-3}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive number, not '$rounds'"
read -r -a perf_args <<<"${PERF_ARGS:-}"

if [ ! -f bench/go.mod ] || [ ! -d bench/cmd/libsql-perf ]; then
  die "no bench/cmd/libsql-perf in $root"
fi
grep -q '^replace github.com/gohrana/libsql => ' bench/go.mod ||
  die "bench/go.mod has no 'replace github.com/gohrana/libsql => ...' line to redirect"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/libsql-perf-compare.XXXXXX")
worktrees=()
cleanup() {
  local wt
  for wt in "${worktrees[@]}"; do
    git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || true
  done
  rm -rf "$tmp"
  git -C "$root" worktree prune >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# tree NAME REV: sets tree_dir to the source tree for REV (a directory is
# taken as it is; a revision gets a temporary worktree).
tree() {
  local name=$1 rev=$2 sha
  if [ -d "$rev" ]; then
    tree_dir=$(cd "$rev" && pwd)
    return
  fi
  sha=$(git rev-parse --verify --quiet "$rev^{commit}") || die "$name '$rev' is not a git revision or a directory"
  tree_dir=$tmp/$name-tree
  worktrees+=("$tree_dir")
  git worktree add --quiet --detach "$tree_dir" "$sha" >&2 || die "cannot create a worktree of $name ($rev)"
}

# label REV: a readable name for a side.
label() {
  if [ -z "$1" ]; then
    echo "working tree ($(git rev-parse --short HEAD)+changes)"
  elif [ -d "$1" ]; then
    echo "$1"
  else
    echo "$1 ($(git rev-parse --short "$1^{commit}"))"
  fi
}

# check NAME REV DIR: the tree must have what the harness imports.
check() {
  local name=$1 rev=$2 dir=$3 p
  grep -q '^module github.com/gohrana/libsql$' "$dir/go.mod" 2>/dev/null ||
    die "$name $rev is not the github.com/gohrana/libsql module (no such go.mod in $dir)"
  for p in codec internal/fixture codec/direct codec/gojson codec/protobuf; do
    compgen -G "$dir/$p/*.go" >/dev/null ||
      die "$name $rev has no package $p, which the harness needs (bench/cmd/libsql-perf imports it, directly or through the driver); pick a later revision (or commit it: untracked files are not in a revision)"
  done
}

# build NAME DIR: builds the current harness against DIR into $tmp/perf-NAME.
build() {
  local name=$1 dir=$2 mod=$tmp/$1.mod
  sed "s#^replace github.com/gohrana/libsql => .*#replace github.com/gohrana/libsql => $dir#" bench/go.mod >"$mod"
  cp bench/go.sum "${mod%.mod}.sum"
  echo "building libsql-perf against $name ($dir)" >&2
  if ! (cd bench && GOWORK=off GOFLAGS="${GOFLAGS:-} -mod=mod" go build -modfile "$mod" -o "$tmp/perf-$name" ./cmd/libsql-perf); then
    die "cannot build the current bench/cmd/libsql-perf against $name: that revision lacks (or changed) something the harness uses; see the errors above"
  fi
}

base_rev=$1 head_rev=${2:-}
tree base "$base_rev"
base_dir=$tree_dir
head_dir=$root
if [ -n "$head_rev" ]; then
  tree head "$head_rev"
  head_dir=$tree_dir
fi
base_label=$(label "$base_rev") head_label=$(label "$head_rev")
check BASE "$base_label" "$base_dir"
check HEAD "$head_label" "$head_dir"
build base "$base_dir"
build head "$head_dir"

for i in $(seq "$rounds"); do
  for side in base head; do
    lbl=$base_label
    [ "$side" = head ] && lbl=$head_label
    echo "round $i/$rounds: $side" >&2
    "$tmp/perf-$side" -label "$lbl" -json "$tmp/$side-$i.json" "${perf_args[@]}" >"$tmp/$side-$i.txt" 2>&1 ||
      { cat "$tmp/$side-$i.txt" >&2; die "libsql-perf failed for $side in round $i"; }
  done
done

"$tmp/perf-head" -merge "$tmp/base.json" "$tmp"/base-[0-9]*.json
"$tmp/perf-head" -merge "$tmp/head.json" "$tmp"/head-[0-9]*.json
if [ -n "${PERF_OUT:-}" ]; then
  mkdir -p "$PERF_OUT"
  cp "$tmp"/*.json "$tmp"/*.txt "$PERF_OUT"/
  echo "results kept in $PERF_OUT" >&2
fi
echo
"$tmp/perf-head" -compare "$tmp/base.json" "$tmp/head.json"
