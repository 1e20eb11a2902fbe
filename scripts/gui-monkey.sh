#!/usr/bin/env bash
# gui-monkey.sh: drive the real desktop app (cgo, OpenGL) under a virtual X
# server with random clicks, keys and typing on every screen for a while,
# and check that it is still running at the end.
#
#   scripts/gui-monkey.sh [SECONDS] [SEED]
#
# SECONDS (default 60) bounds the run; SEED (default 1) makes it repeatable.
# Needs Xvfb, xdotool and ImageMagick (apt-get install -y xvfb xdotool
# imagemagick) and a cgo build (HEADROOM_BIN skips the build). The app runs
# with a throwaway HOME and config directory, so whatever the clicks save
# (exports, calibrations, preferences) is thrown away. Ctrl+Q, the one key
# that quits on purpose, is never sent. The last screenshot and the app's
# log are left in out/gui-monkey.
# Exit status: 0 the app survived, 1 it died or never drew, 2 a tool is missing.
set -euo pipefail

cd "$(dirname "$0")/.."
duration=${1:-60}
RANDOM=${2:-1}
out=out/gui-monkey
mkdir -p "$out"
width=1280 height=800
display=${GUI_MONKEY_DISPLAY:-:98}
name=gui-monkey
# shellcheck source=scripts/xvfb-lib.sh
source scripts/xvfb-lib.sh
needs Xvfb xdotool import identify
build_headroom
start_xvfb
export DISPLAY=$display

HOME=$tmp XDG_CONFIG_HOME=$tmp/config XDG_CACHE_HOME=$tmp/cache LIBGL_ALWAYS_SOFTWARE=1 \
	"$bin" gui >"$out/headroom.log" 2>&1 &
app=$!
pids+=($app)

alive() { kill -0 "$app" 2>/dev/null; }
died() {
	say "error: the app died after $1 actions (seed ${2:-1}); its log:"
	tail -n 60 "$out/headroom.log" >&2
	exit 1
}

# Wait for the window to draw.
for _ in $(seq 60); do
	sleep 0.5
	alive || died 0
	import -window root "$out/screen.png" 2>/dev/null || continue
	sd=$(identify -format '%[fx:standard_deviation]' "$out/screen.png")
	awk -v sd="$sd" 'BEGIN { exit !(sd > 0.02) }' && break
done

# What a hurried user types into fields: good values, bad values, garbage.
words=(8b llama qwen 32k 4096 8 -5 0 NaN 2s 500ms "hf.co/x/y:Q4" "" abc 1e12 "users=4" 🙂)
keys=(Tab Tab Tab Return Escape Down Up Left Right BackSpace space Page_Down Page_Up Home End
	ctrl+1 ctrl+2 ctrl+3 ctrl+4 ctrl+5 ctrl+6 ctrl+a ctrl+c ctrl+v)

end=$((SECONDS + duration))
n=0
while ((SECONDS < end)); do
	n=$((n + 1))
	case $((RANDOM % 10)) in
	0 | 1 | 2 | 3 | 4)
		# Tabs sit along the top; most of what there is to click is below.
		x=$((RANDOM % width)) y=$((RANDOM % height))
		xdotool mousemove "$x" "$y" click 1 2>/dev/null || true
		;;
	5 | 6)
		xdotool key "${keys[RANDOM % ${#keys[@]}]}" 2>/dev/null || true
		;;
	7 | 8)
		xdotool type --delay 5 -- "${words[RANDOM % ${#words[@]}]}" 2>/dev/null || true
		;;
	9)
		x=$((RANDOM % width)) y=$((RANDOM % height))
		xdotool mousemove "$x" "$y" click --repeat 2 1 2>/dev/null || true
		;;
	esac
	sleep 0.05
	if ((n % 25 == 0)); then
		alive || died "$n" "${2:-1}"
	fi
done
sleep 1
alive || died "$n" "${2:-1}"
import -window root "$out/screen.png"
say "ok: the app survived $n random actions in ${duration}s (seed ${2:-1}); last screen in $out/screen.png"
