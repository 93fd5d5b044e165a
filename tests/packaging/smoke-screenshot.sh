#!/usr/bin/env bash
# Runs the real binary on a trace folder under Xvfb (the xcb platform, as a user's desktop would),
# waits until its window shows the loaded folder in its title, grabs the screen and the window,
# and checks that something was drawn. The PNGs stay in OUTPUT_DIR for a human to look at.
#   smoke-screenshot.sh BINARY FOLDER OUTPUT_DIR
set -euo pipefail
if [ "${1:-}" != --under-xvfb ]; then
  for tool in xvfb-run xdotool xwininfo import identify; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool missing (scripts/bootstrap installs it)" >&2; exit 1; }
  done
  exec xvfb-run -a -s '-screen 0 1600x1000x24' "$0" --under-xvfb "$@"
fi
shift
binary="$1" folder="$2" out="$3"
name="$(basename "$folder")"
mkdir -p "$out"
screen_png="$out/smoke-$name-screen.png" window_png="$out/smoke-$name-window.png"
rm -f "$screen_png" "$window_png"

QT_QPA_PLATFORM=xcb "$binary" "$folder" >"$out/smoke-$name.log" 2>&1 &
app=$!
trap 'kill "$app" 2>/dev/null || true' EXIT

# The title becomes "<folder> — RankScope" only once the folder has loaded.
wid=""
for _ in $(seq 1 300); do
  kill -0 "$app" 2>/dev/null || { echo "FAIL: rankscope exited early:" >&2; cat "$out/smoke-$name.log" >&2; exit 1; }
  wid="$(xdotool search --onlyvisible --name "^$name .*RankScope\$" 2>/dev/null | head -1 || true)"
  [ -n "$wid" ] && break
  sleep 0.1
done
[ -n "$wid" ] || { echo "FAIL: no visible window titled '$name — RankScope' within 30 s" >&2; xwininfo -root -tree >&2; exit 1; }
# Let the first frames after the load reach the X server before grabbing.
sleep 1

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
xwininfo -root -tree >"$out/smoke-$name-windows.txt"
grep -q "\"$name .*RankScope\"" "$out/smoke-$name-windows.txt" || fail "the window title is not in 'xwininfo -root -tree'"
info="$(xwininfo -id "$wid")"
grep -q 'Map State: IsViewable' <<<"$info" || fail "the window is not viewable"
width="$(sed -n 's/^ *Width: //p' <<<"$info")" height="$(sed -n 's/^ *Height: //p' <<<"$info")"
((width >= 640 && height >= 400)) || fail "the window is only ${width}x${height}"

import -window root "$screen_png"
import -window "$wid" "$window_png"
[ "$(identify -format '%wx%h' "$screen_png")" = 1600x1000 ] || fail "the screenshot is not 1600x1000"
screen_colours="$(identify -format '%k' "$screen_png")"
window_colours="$(identify -format '%k' "$window_png")"
# A blank screen or an unpainted window has a handful of colours; text, the file tree and the
# overview table give hundreds.
((screen_colours >= 64)) || fail "the screenshot has only $screen_colours colours"
((window_colours >= 64)) || fail "the window grab has only $window_colours colours"
kill -0 "$app" 2>/dev/null || fail "rankscope died while being grabbed"

echo "window ${width}x${height}; colours: screen $screen_colours, window $window_colours"
echo "screenshots: $screen_png $window_png"
((failures == 0))
