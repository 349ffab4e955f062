#!/usr/bin/env bash
# System programs the test suite drives: Debian's Chromium as its headless shell (Playwright uses it; it cannot
# download its own browser here) and a kubectl (any conformant one on PATH: the kubectl tests check that a standard
# client reads what the product wrote). Debian's kubernetes-client is installed only when there is no kubectl at all, so a
# machine's own kubectl (Google Cloud SDK's, a distribution's) is used as it is and never overwritten.
# `system_deps.sh e2e-real`: what `make e2e-real` needs instead — a kubectl, and Go (1.24 or newer, with the Go
# module proxy) to build the real cluster (scripts/kube/build_stack.sh); Go is not installed here: Debian's is too old.
# `system_deps.sh packages NAME...`: those Debian packages (scripts/ci_services.sh installs PostgreSQL and Redis so).
set -euo pipefail
need=()
mode=${1:-test}
if [ "$mode" = packages ]; then
  shift
  need=("$@")
elif [ "$mode" = e2e-real ]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "system_deps: make e2e-real builds its cluster with Go 1.24 or newer, and there is no 'go' on PATH." \
         "Install it from https://go.dev/dl/ (a Go toolchain is a download of its own, not a Debian package)." >&2
    exit 1
  fi
else
  [ -x /usr/bin/chromium-headless-shell ] || need+=(chromium-headless-shell)
fi
[ "$mode" = packages ] || command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)
[ ${#need[@]} -eq 0 ] && exit 0

hint="apt-get update && apt-get install -y --no-install-recommends ${need[*]}"
if [ "$(id -u)" != 0 ]; then
  echo "system_deps: missing ${need[*]}. Install them as root with:  sudo sh -c '$hint'" >&2
  exit 1
fi
echo "system_deps: installing ${need[*]} from Debian's packages" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Quiet on success; on failure, apt's own output (the real reason) and the command to run by hand.
if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "${need[@]}"; } \
     >"$log" 2>&1; then
  cat "$log" >&2
  echo "system_deps: installing ${need[*]} failed (apt's output above). Fix the cause, then run:  $hint" >&2
  exit 1
fi
