#!/usr/bin/env bash
# Builds the local sqld image (FROM scratch: the sqld binary from
# scripts/sqld.sh, the shared libraries it links, the CA bundle, a writable
# /tmp and the data directory /var/lib/sqld, laid out like the public
# ghcr.io/tursodatabase/libsql-server image: /bin/sqld, WORKDIR /var/lib/sqld).
# Skips the build when an image with the same tag and the same inputs exists.
# Prints the tag. Needs a Docker engine (scripts/docker.sh).
#
#   scripts/image.sh [TAG]     (default: $LIBSQL_ITEST_IMAGE or gohrana/sqld:0.24.32)
set -euo pipefail

tag=${1:-${LIBSQL_ITEST_IMAGE:-gohrana/sqld:0.24.32}}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

die() { echo "image.sh: $*" >&2; exit 1; }

command -v docker >/dev/null || die "docker not found (run scripts/docker.sh)"
sqld=$("$here/sqld.sh")
ca=/etc/ssl/certs/ca-certificates.crt
loader=/lib64/ld-linux-x86-64.so.2
[ -e "$loader" ] || die "$loader not found"

# Shared libraries as ldd resolves them on this machine ("name => /path (addr)").
mapfile -t libs < <(ldd "$sqld" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }')
[ "${#libs[@]}" -gt 0 ] || die "ldd found no shared libraries for $sqld: $(ldd "$sqld" 2>&1)"

dockerfile='FROM scratch
COPY rootfs/ /
WORKDIR /var/lib/sqld
EXPOSE 8080
ENTRYPOINT ["/bin/sqld"]
CMD ["--http-listen-addr", "0.0.0.0:8080", "--no-welcome"]
'

# Fingerprint of everything that goes into the image; stored as a label.
inputs=$( { printf '%s' "$dockerfile"; sha256sum "$sqld" "$ca" "$loader" "${libs[@]}" | awk '{print $1}'; } | sha256sum | awk '{print $1}')
have=$(docker image inspect --format '{{ index .Config.Labels "gohrana.inputs" }}' "$tag" 2>/dev/null || true)
if [ "$have" = "$inputs" ]; then
  echo "$tag"
  exit 0
fi
old=$(docker image inspect --format '{{ .Id }}' "$tag" 2>/dev/null || true)

mkdir -p "$root/.cache"
ctx=$(mktemp -d "$root/.cache/image.XXXXXX") # own directory: concurrent runs do not collide
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/rootfs/bin" "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/var/lib/sqld" "$ctx/rootfs/tmp"
chmod 1777 "$ctx/rootfs/tmp"
chmod 0777 "$ctx/rootfs/var/lib/sqld" # any --user can write the data there
cp -L --preserve=mode "$sqld" "$ctx/rootfs/bin/sqld"
cp -L "$ca" "$ctx/rootfs$ca"
for f in "$loader" "${libs[@]}"; do
  mkdir -p "$ctx/rootfs$(dirname "$f")"
  cp -L --preserve=mode "$f" "$ctx/rootfs$f"
done
printf '%s' "$dockerfile" >"$ctx/Dockerfile"

log=$ctx/build.log
# The classic builder is enough for COPY and exists on every engine; it keeps
# the file modes of the context (1777 /tmp).
if ! DOCKER_BUILDKIT=0 docker build --label "gohrana.inputs=$inputs" -t "$tag" "$ctx" >"$log" 2>&1; then
  cat "$log" >&2
  die "docker build of $tag failed"
fi
# Drop the image this one replaces (kept if a container still uses it).
[ -z "$old" ] || docker rmi "$old" >/dev/null 2>&1 || true

# Smoke check: the binary starts inside the image (all libraries present).
if ! out=$(docker run --rm --network none "$tag" --version 2>&1); then
  die "image $tag is broken: /bin/sqld --version failed: $out"
fi
echo "$tag"
