#!/usr/bin/env bash
# Builds the CNCF distribution registry pinned in scripts/registry/go.mod into a cache outside the tree, once:
#   scripts/registry/build.sh [OUT_DIR]   (default ~/.cache/paas-studio/registry/<pinned version>, or
#                                          $PAAS_REGISTRY_CACHE)
# and prints the binary's path. A cold build takes a few minutes on 2 cores (niced, Go's own caches at their
# defaults); later runs find the binary and return at once. Used by tests/assets' registry fixtures and CI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="$(awk '$1 == "github.com/distribution/distribution/v3" { print $2 }' "$here/go.mod")"
out="${1:-${PAAS_REGISTRY_CACHE:-$HOME/.cache/paas-studio/registry/$version}}"
if [ -x "$out/registry" ]; then
  echo "$out/registry"
  exit 0
fi
mkdir -p "$out"
exec 9>"$out.lock"
flock 9  # a second build waits for the first one
if [ ! -x "$out/registry" ]; then
  echo "Building the distribution registry $version into $out (a few minutes, once)..." >&2
  (cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=readonly nice -n 15 \
     go build -trimpath -o "$out/registry.partial" github.com/distribution/distribution/v3/cmd/registry)
  mv "$out/registry.partial" "$out/registry"
fi
echo "$out/registry"
