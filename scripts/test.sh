#!/usr/bin/env bash
# Headroom's test suite, as CI runs it (bash .ci/run sets the machine up,
# then calls this). Run it directly on a machine that has Go and,
# optionally, Ollama:
#
#   scripts/test.sh
#
# 1. gofmt (tracked files), go vet, and the unit tests without cgo (no
#    network, no GPU).
# 2. The engine tests: a real Ollama v0.6.5 serving GGUF models the tests
#    write (calibrate/enginetest), and a launch plan applied to it. They run when HEADROOM_OLLAMA is set (1,
#    or the path of an ollama binary), when CI=true, or when ollama is on
#    PATH; otherwise they are skipped with a message. With CI=true a
#    missing ollama is a failure.
# 3. Fuzzing (scripts/fuzz.sh), cross-builds (scripts/cross.sh), the web
#    server's load test and a real browser (scripts/load-test.sh,
#    scripts/web-e2e.sh).
# 4. The GUI: the real cgo window under Xvfb, screenshotted
#    (scripts/gui-smoke.sh, out/gui-smoke) and driven with random input
#    (scripts/gui-monkey.sh, out/gui-monkey).
#
# Every step runs even if an earlier one failed; the script exits 1 if any
# failed and lists them.
set -uo pipefail
cd "$(dirname "$0")/.."

export CGO_ENABLED=0
export GHW_DISABLE_WARNINGS=1
t0=$(date +%s)
failed=()
step() { printf '\n== %s (%ds)\n' "$1" "$(($(date +%s) - t0))"; }
# check NAME CMD...: runs CMD, recording NAME as failed if it fails.
check() {
	local name=$1
	shift
	if ! "$@"; then
		failed+=("$name")
		printf '== FAILED: %s\n' "$name" >&2
	fi
}

gofmt_clean() {
	local files unformatted
	files=$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*')
	unformatted=$(gofmt -l $files)
	if [ -n "$unformatted" ]; then
		echo "not gofmt-ed (run gofmt -w):" >&2
		echo "$unformatted" >&2
		return 1
	fi
}

step "gofmt"
check gofmt gofmt_clean

step "go vet"
check "go vet" go vet -tags ci ./...

step "staticcheck"
# .ci/run installs it; elsewhere it is skipped when absent.
if command -v staticcheck >/dev/null 2>&1; then
	check staticcheck staticcheck -tags ci ./...
elif [ "${CI:-}" = true ]; then
	failed+=("staticcheck (not installed)")
else
	echo "skipped: staticcheck not installed (go install honnef.co/go/tools/cmd/staticcheck@v0.8.2, release 2026.2.2)"
fi

step "unit tests"
# The engine tests skip here (HEADROOM_OLLAMA is not passed on); they run
# on their own below, so no other package's tests compete with the timings.
check "unit tests" env -u HEADROOM_OLLAMA go test -tags ci -count=1 ./...

# The GUI's cgo build (about 5 minutes cold, most of it one C compile of
# GLFW on one core) starts here in the background, so it overlaps the
# fuzzing and cross-builds instead of adding to them. Fuzzing runs for a
# fixed time whatever the load and none of the steps it overlaps asserts
# a speed; the engine tests, which do time Ollama, start after it ends.
gui_tools=false
if command -v Xvfb >/dev/null 2>&1 && command -v import >/dev/null 2>&1 && command -v gcc >/dev/null 2>&1 && command -v xdotool >/dev/null 2>&1; then
	gui_tools=true
	guibin=$(mktemp -d)
	trap 'rm -rf "$guibin"' EXIT
	printf '\n== GUI build (cgo) started in the background (%ds)\n' "$(($(date +%s) - t0))"
	CGO_ENABLED=1 go build -o "$guibin/headroom" ./cmd/headroom >"$guibin/build.log" 2>&1 &
	gui_build=$!
fi

step "fuzzing (every target, FUZZTIME each)"
# scripts/fuzz.sh finds every fuzz target and runs it in turn (4 s each in
# CI, 44 targets; FUZZTIME=5m for the long run before a release). Without
# minimizing (fuzz.sh), 4 s run 10,000-100,000 inputs per target, where 5 s
# with it left 8 targets at their seed corpus.
check "fuzz" env FUZZTIME="${FUZZTIME:-4s}" bash scripts/fuzz.sh

step "cross-builds (darwin/arm64, darwin/amd64, windows/amd64, linux/arm64)"
check "cross-builds" bash scripts/cross.sh

step "web: load test and a real browser"
# 200 concurrent plans against headroom serve on 127.0.0.1 (p50/p99 and
# peak memory printed), then the page in headless Chromium: a plan
# rendered for changed inputs, screenshot in out/web-e2e/plan.png.
check "web load test" bash scripts/load-test.sh
if command -v chromium >/dev/null 2>&1 || [ "$(id -u)" = 0 ]; then
	check "web end-to-end" bash scripts/web-e2e.sh
elif [ "${CI:-}" = true ]; then
	failed+=("web end-to-end (no chromium)")
else
	echo "skipped: chromium not installed (apt-get install -y chromium)"
fi

# The engine tests time Ollama against this machine's measured speed, so
# the background GUI build (long done by now on a cold machine) finishes
# first.
gui_built=false
if $gui_tools; then
	if wait "$gui_build"; then
		gui_built=true
		printf '\nGUI build (cgo) done (%ds)\n' "$(($(date +%s) - t0))"
	else
		tail -n 40 "$guibin/build.log" >&2
	fi
fi

step "engine tests (Ollama)"
# .ci/run builds Ollama in the background on a fresh machine and names the
# folder where that build leaves its exit status; wait for it here (a line
# a minute, at most an hour).
if [ -n "${HEADROOM_OLLAMA_BUILD:-}" ]; then
	waited=0
	while [ ! -f "$HEADROOM_OLLAMA_BUILD/status" ] && [ $waited -lt 3600 ]; do
		[ $((waited % 60)) -eq 0 ] && echo "waiting for the Ollama build: $(grep -c '^[a-z]' "$HEADROOM_OLLAMA_BUILD/build.log" 2>/dev/null || true) packages done"
		sleep 5
		waited=$((waited + 5))
	done
	if [ "$(cat "$HEADROOM_OLLAMA_BUILD/status" 2>/dev/null)" = 0 ]; then
		OLLAMA_HOST=127.0.0.1:9 ollama --version 2>&1 | tail -n 1
	else
		grep -v '^[a-z][^ ]*$' "$HEADROOM_OLLAMA_BUILD/build.log" 2>/dev/null | tail -n 40 >&2
		echo "building ollama failed or did not finish within an hour ($HEADROOM_OLLAMA_BUILD)" >&2
		failed+=("ollama build")
	fi
fi
ollama_bin=${HEADROOM_OLLAMA:-}
if [ -z "$ollama_bin" ] && command -v ollama >/dev/null 2>&1; then
	ollama_bin=1
fi
if [ -n "$ollama_bin" ]; then
	check "engine tests" env HEADROOM_OLLAMA="$ollama_bin" go test -count=1 -timeout 20m -v ./calibrate/enginetest/
elif [ "${CI:-}" = true ]; then
	echo "CI=true but no ollama on PATH; bash .ci/run installs it" >&2
	failed+=("engine tests (no ollama)")
else
	echo "skipped: no ollama on PATH (bash .ci/run installs it; or set HEADROOM_OLLAMA=/path/to/ollama)"
fi

step "GUI: the real cgo window under Xvfb (smoke test, then random input)"
# Uses the cgo binary built in the background above, starts it under Xvfb,
# screenshots the screen and checks the window rendered at the expected
# size and is not blank (gui-smoke.sh), then drives it with random clicks,
# keys and typing on every screen and checks it is still running
# (gui-monkey.sh, GUI_MONKEY_SECONDS, default 60). Needs the X11/GL
# headers, xvfb, xdotool and imagemagick that .ci/run installs; skipped
# (or failed under CI=true) without them.
if $gui_tools; then
	if $gui_built; then
		check "GUI smoke" env HEADROOM_BIN="$guibin/headroom" bash scripts/gui-smoke.sh
		check "GUI random input" env HEADROOM_BIN="$guibin/headroom" bash scripts/gui-monkey.sh "${GUI_MONKEY_SECONDS:-60}" "${GUI_MONKEY_SEED:-$RANDOM}"
	else
		failed+=("GUI build (cgo)")
	fi
elif [ "${CI:-}" = true ]; then
	echo "CI=true but Xvfb, xdotool, ImageMagick or gcc is missing; bash .ci/run installs them" >&2
	failed+=("GUI (tools missing)")
else
	echo "skipped: Xvfb/xdotool/ImageMagick/gcc not installed"
fi

step "done"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'FAILED: %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "all passed"
