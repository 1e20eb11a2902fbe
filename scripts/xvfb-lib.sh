# xvfb-lib.sh: what gui-smoke.sh and gui-monkey.sh share. Source it after
# setting name (the script's name, for messages), out (the output folder),
# width, height and display; it defines say, needs, builds $bin (unless
# HEADROOM_BIN names one), starts Xvfb on $display and stops everything it
# started, and removes $tmp, on exit.

tmp=$(mktemp -d)
pids=()

say() { echo "$name: $*" >&2; }

# needs TOOL... exits 2 naming the first tool that is missing.
needs() {
	for tool in "$@"; do
		command -v "$tool" >/dev/null || { say "error: $tool not found (apt-get install -y xvfb xdotool imagemagick)"; exit 2; }
	done
}

cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# build_headroom sets bin: HEADROOM_BIN, or a cgo build in $tmp.
build_headroom() {
	bin=${HEADROOM_BIN:-}
	if [[ -z $bin ]]; then
		bin=$tmp/headroom
		say "building $bin with cgo (the first build takes minutes)"
		CGO_ENABLED=1 go build -o "$bin" ./cmd/headroom
	fi
}

# start_xvfb starts a virtual screen of width×height on $display and waits
# for its socket (5 s at most).
start_xvfb() {
	Xvfb "$display" -screen 0 "${width}x${height}x24" -nolisten tcp >"$out/xvfb.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do
		[[ -e /tmp/.X11-unix/X${display#:} ]] && break
		sleep 0.1
	done
	[[ -e /tmp/.X11-unix/X${display#:} ]] || { say "error: Xvfb did not start on $display"; cat "$out/xvfb.log" >&2; exit 1; }
}
