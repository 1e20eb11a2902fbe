#!/usr/bin/env bash
# gui-smoke.sh: start the real desktop app (cgo, OpenGL) under a virtual X
# server, take a screenshot of the screen, and check that a window was drawn.
#
#   scripts/gui-smoke.sh [OUT_DIR]
#
# Needs gcc and the X11/GL headers (libgl1-mesa-dev libx11-dev libxcursor-dev
# libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev), Xvfb and
# ImageMagick (xvfb imagemagick). HEADROOM_BIN skips the build and tests that
# binary instead. The screenshot and logs are left in OUT_DIR (default:
# out/gui-smoke, ignored by git and overwritten by the next run); the binary
# it builds goes to a temporary directory removed on exit, so repeated runs
# leave nothing behind (each used to leave a 46 MB binary in /tmp).
# Exit status: 0 the window was drawn, 1 it was not, 2 a tool is missing.
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-out/gui-smoke}
mkdir -p "$out"
width=1280 height=800
display=${GUI_SMOKE_DISPLAY:-:99}
name=gui-smoke
# shellcheck source=scripts/xvfb-lib.sh
source scripts/xvfb-lib.sh
needs Xvfb import identify convert
build_headroom
start_xvfb

# A fresh config dir: no saved calibration or settings change the window.
# Absolute: with a relative XDG_CONFIG_HOME, Go's os.UserConfigDir fails
# and Fyne kept its preferences in ./fyne of the checkout.
mkdir -p "$out/config"
export XDG_CONFIG_HOME=$(cd "$out/config" && pwd)
DISPLAY=$display LIBGL_ALWAYS_SOFTWARE=1 "$bin" gui >"$out/headroom.log" 2>&1 &
app=$!
pids+=($app)

# Wait until the screen is no longer blank (the window opened and drew),
# then a little longer for the probe to fill in My machine.
shot=$out/gui-smoke.png
drawn=0
for _ in $(seq 60); do
	sleep 0.5
	if ! kill -0 "$app" 2>/dev/null; then
		say "error: headroom gui exited early:"
		cat "$out/headroom.log" >&2
		exit 1
	fi
	DISPLAY=$display import -window root "$shot" 2>/dev/null || continue
	sd=$(identify -format '%[fx:standard_deviation]' "$shot")
	if awk -v sd="$sd" 'BEGIN { exit !(sd > 0.02) }'; then
		drawn=1
		break
	fi
done
sleep 2
DISPLAY=$display import -window root "$shot"

size=$(identify -format '%wx%h' "$shot")
sd=$(identify -format '%[fx:standard_deviation]' "$shot")
colors=$(identify -format '%k' "$shot")
say "screenshot $shot: $size, standard deviation $sd, $colors colours"
if [[ $size != "${width}x${height}" ]]; then
	say "error: screenshot is $size, want ${width}x${height}"
	exit 1
fi
if [[ $drawn != 1 ]] || ! awk -v sd="$sd" -v n="$colors" 'BEGIN { exit !(sd > 0.02 && n > 16) }'; then
	say "error: the screen looks blank (standard deviation $sd, $colors colours)"
	cat "$out/headroom.log" >&2
	exit 1
fi
say "ok: the window was drawn"
