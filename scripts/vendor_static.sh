#!/bin/sh
# Re-fetch the vendored front-end files under static/vendor from the npm registry (`make vendor`).
# Only the files the pages use are kept: Tabler's CSS and JS, an SVG sprite of the Tabler icons named below,
# Chart.js with its date adapter, xterm.js with its fit addon (the workload page's terminal), and axe-core (a test
# asset: the browser tests inject it, pages never load it).
# Versions are pinned here; docs/vendor.md lists them with their licences.
set -eu

TABLER_CORE=1.6.1
TABLER_ICONS=3.35.0
CHARTJS=4.6.1
CHARTJS_ADAPTER=3.0.0
AXE_CORE=4.11.0
XTERM=6.0.0
XTERM_FIT=0.11.0

# The icons the templates use (templates refer to them as `#ti-<name>` in the sprite).
ICONS="home layout-grid stack-2 template box player-play device-desktop apps adjustments server building folders
users key history shield logout moon sun menu-2 dots-vertical plus trash pencil copy share refresh player-pause
player-stop check alert-triangle x info-circle search chevron-right external-link plug-connected file-text
chart-line list-details rocket lock lock-open eye user-plus settings arrow-left filter bell chart-bar"

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT="$ROOT/static/vendor"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

cd "$WORK"
for pkg in "@tabler/core@$TABLER_CORE" "@tabler/icons@$TABLER_ICONS" "chart.js@$CHARTJS" \
           "chartjs-adapter-date-fns@$CHARTJS_ADAPTER" "axe-core@$AXE_CORE" "@xterm/xterm@$XTERM" \
           "@xterm/addon-fit@$XTERM_FIT"; do
  tarball=$(npm pack --silent "$pkg" 2>/dev/null | tail -1)
  dir=$(echo "$pkg" | sed 's/^@//; s/[@/]/-/g')
  mkdir -p "$dir" && tar xzf "$tarball" -C "$dir"
done

rm -rf "$OUT/tabler" "$OUT/tabler-icons" "$OUT/chartjs" "$OUT/axe-core" "$OUT/xterm"
mkdir -p "$OUT/tabler" "$OUT/tabler-icons" "$OUT/chartjs" "$OUT/axe-core" "$OUT/xterm"

core="tabler-core-$TABLER_CORE/package"
cp "$core/dist/css/tabler.min.css" "$core/dist/js/tabler.min.js" "$core/dist/js/tabler-theme.min.js" "$OUT/tabler/"
# The npm package carries no LICENSE file; its header names the licence (MIT), kept here beside the files.
head -c 400 "$core/dist/css/tabler.min.css" | sed -n '1,/\*\//p' > "$OUT/tabler/LICENSE"

icons="tabler-icons-$TABLER_ICONS/package"
cp "$icons/LICENSE" "$OUT/tabler-icons/LICENSE"
{
  printf '<svg xmlns="http://www.w3.org/2000/svg">\n'
  for name in $ICONS; do
    # Keep the inner paths of each outline icon; the <symbol> carries the stroke attributes.
    inner=$(tr '\n' ' ' < "$icons/icons/outline/$name.svg" | sed 's/^.*<svg[^>]*>//; s/<\/svg>.*$//')
    printf '<symbol id="ti-%s" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" ' "$name"
    printf 'stroke-linecap="round" stroke-linejoin="round">%s</symbol>\n' "$inner"
  done
  printf '</svg>\n'
} > "$OUT/tabler-icons/sprite.svg"

cp "chart.js-$CHARTJS/package/dist/chart.umd.min.js" "chart.js-$CHARTJS/package/LICENSE.md" "$OUT/chartjs/"
cp "chartjs-adapter-date-fns-$CHARTJS_ADAPTER/package/dist/chartjs-adapter-date-fns.bundle.min.js" "$OUT/chartjs/"
cp "chartjs-adapter-date-fns-$CHARTJS_ADAPTER/package/LICENSE.md" "$OUT/chartjs/LICENSE-adapter-date-fns.md"
cp "axe-core-$AXE_CORE/package/axe.min.js" "axe-core-$AXE_CORE/package/LICENSE" "$OUT/axe-core/"
cp "xterm-xterm-$XTERM/package/lib/xterm.js" "xterm-xterm-$XTERM/package/css/xterm.css" \
   "xterm-xterm-$XTERM/package/LICENSE" "$OUT/xterm/"
cp "xterm-addon-fit-$XTERM_FIT/package/lib/addon-fit.js" "$OUT/xterm/"
cp "xterm-addon-fit-$XTERM_FIT/package/LICENSE" "$OUT/xterm/LICENSE-addon-fit"
# No source maps are shipped: drop the comments that point at them (collectstatic's manifest would chase them).
for f in "$OUT"/tabler/*.js "$OUT"/tabler/*.css "$OUT"/chartjs/*.js "$OUT"/axe-core/*.js "$OUT"/xterm/*.js; do
  sed -i '/sourceMappingURL=/d' "$f"
done
echo "static/vendor refreshed"
