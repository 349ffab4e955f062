#!/usr/bin/env bash
# System packages the test suite drives: Debian's Chromium (Playwright uses it; it cannot download its own
# browser here) and Debian's kubectl (package kubernetes-client), which lists objects from the simulated cluster.
set -euo pipefail
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
dpkg -s kubernetes-client >/dev/null 2>&1 || need+=(kubernetes-client)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "Missing system packages: ${need[*]} — install them with: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
# Some images ship another kubectl (e.g. Google Cloud SDK's) at /usr/bin/kubectl; divert that path so Debian's
# package installs beside it, at /usr/bin/kubectl.debian, which the kubectl test finds through dpkg.
if [[ " ${need[*]} " == *" kubernetes-client "* ]] && [ -e /usr/bin/kubectl ] && ! dpkg -S /usr/bin/kubectl >/dev/null 2>&1; then
  dpkg-divert --no-rename --package kubectl --divert /usr/bin/kubectl.debian --add /usr/bin/kubectl >/dev/null
fi
apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
