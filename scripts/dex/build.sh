#!/usr/bin/env bash
# Builds the Dex OpenID Connect provider pinned in scripts/dex/go.mod into a cache outside the tree, once:
#   scripts/dex/build.sh [OUT_DIR]     (default ~/.cache/paas-studio/dex/<pinned version>, or $PAAS_DEX_CACHE)
# and prints the binary's path. A cold build takes a few minutes on 2 cores (niced, Go's own caches at their
# defaults); later runs find the binary and return at once. Used by tests/sso's fixtures and CI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="$(awk '$1 == "github.com/dexidp/dex" { print $2 }' "$here/go.mod")"
out="${1:-${PAAS_DEX_CACHE:-$HOME/.cache/paas-studio/dex/$version}}"
if [ -x "$out/dex" ]; then
  echo "$out/dex"
  exit 0
fi
mkdir -p "$out"
exec 9>"$out.lock"
flock 9  # a second build waits for the first one
if [ ! -x "$out/dex" ]; then
  echo "Building Dex $version into $out (a few minutes, once)..." >&2
  # CGO off: the tests use Dex's in-memory storage, so the SQLite driver (the only cgo part) is not needed.
  (cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=readonly nice -n 15 \
     go build -trimpath -o "$out/dex.partial" github.com/dexidp/dex/cmd/dex)
  mv "$out/dex.partial" "$out/dex"
fi
echo "$out/dex"
