#!/usr/bin/env bash
# End-to-end test of the web page with a real browser: builds headroom,
# starts `headroom serve` on 127.0.0.1, checks the API's JSON is the CLI's
# --json byte for byte, opens the page headless in Chromium with inputs
# changed through the URL query (Plan screen, 16 users, a TTFT target),
# checks from the DOM that a plan rendered for those inputs, and saves a
# screenshot to out/web-e2e/plan.png (kept as a CI artifact). With
# HEADROOM_E2E_PLAYWRIGHT=1 it also types into the inputs and presses
# Answer through playwright-core (scripts/web-e2e.js; npm-installed when
# missing), saving out/web-e2e/plan-typed.png; with HEADROOM_E2E_WASM=1 as
# well it builds the Fyne UI for WebAssembly, embeds it, and checks /app/
# draws and opens the Plan tab (out/web-e2e/wasm-plan.png).
#
# Needs Chromium (Debian: apt-get install -y chromium; installed here when
# missing and running as root). Loopback only; the server stops by itself.
set -euo pipefail
cd "$(dirname "$0")/.."
export LANG=en_US.UTF-8 GHW_DISABLE_WARNINGS=1 CGO_ENABLED=0
out=out/web-e2e
mkdir -p "$out"
tmp=$(mktemp -d)
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "web-e2e: FAIL: $*" >&2; exit 1; }

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	[ "$(id -u)" = 0 ] || fail "chromium is not installed (apt-get install -y chromium)"
	apt-get update -qq && apt-get install -y -qq chromium >/dev/null
	browser=$(command -v chromium)
fi

tags=
if [ "${HEADROOM_E2E_WASM:-0}" = 1 ]; then
	scripts/build-wasm.sh >/dev/null
	tags=webwasm
fi
go build -tags "$tags" -o "$tmp/headroom" ./cmd/headroom
port=${HEADROOM_E2E_PORT:-18765}
base="http://127.0.0.1:$port"
XDG_CONFIG_HOME="$tmp/config" "$tmp/headroom" serve --addr "127.0.0.1:$port" --exit-after 300s 2>"$out/server.log" &
server_pid=$!
for _ in $(seq 1 100); do
	curl -sf "$base/api/openapi.json" >/dev/null 2>&1 && break
	kill -0 "$server_pid" 2>/dev/null || fail "server exited: $(cat "$out/server.log")"
	sleep 0.2
done
curl -sf "$base/api/openapi.json" >/dev/null || fail "server did not answer on $base"

# The API answers with the CLI's --json, byte for byte.
model=meta-llama/Llama-3.1-8B-Instruct hw=nvidia-rtx-4090
XDG_CONFIG_HOME="$tmp/config" "$tmp/headroom" fit -m "$model" -H "$hw" -c 8k -n 4 --json >"$tmp/cli-fit.json"
curl -sf -H 'Content-Type: application/json' -d "{\"model\":\"$model\",\"hardware\":\"$hw\",\"context\":\"8k\",\"concurrency\":4}" "$base/api/fit" >"$tmp/api-fit.json"
cmp "$tmp/cli-fit.json" "$tmp/api-fit.json" || fail "fit: API JSON differs from headroom fit --json"
XDG_CONFIG_HOME="$tmp/config" "$tmp/headroom" plan -m "$model" -H "$hw" --workload users=16 --slo ttft=1s --json >"$tmp/cli-plan.json" || true
curl -sf -H 'Content-Type: application/json' -d "{\"model\":\"$model\",\"hardware\":\"$hw\",\"workload\":\"users=16\",\"slo\":\"ttft=1s\"}" "$base/api/plan" >"$tmp/api-plan.json"
cmp "$tmp/cli-plan.json" "$tmp/api-plan.json" || fail "plan: API JSON differs from headroom plan --json"
if command -v python3 >/dev/null; then
	XDG_CONFIG_HOME="$tmp/config" "$tmp/headroom" flags -m "$model" -H "$hw" -e llama.cpp -q q4_k_m -c 4096 -n 4 >"$tmp/cli-flags.txt" 2>/dev/null
	curl -sf -H 'Content-Type: application/json' -d "{\"model\":\"$model\",\"hardware\":\"$hw\",\"engine\":\"llama.cpp\",\"quant\":\"q4_k_m\",\"context\":\"4096\",\"concurrency\":4}" "$base/api/flags" |
		python3 -c 'import json,sys; sys.stdout.write(json.load(sys.stdin)["command"])' >"$tmp/api-flags.txt"
	cmp "$tmp/cli-flags.txt" "$tmp/api-flags.txt" || fail "flags: the API's command differs from headroom flags"
fi
echo "web-e2e: API identical to the CLI for fit, plan (--json) and flags"

# The page, with inputs changed from their defaults through the query.
url="$base/?tab=plan&model=$model&hardware=$hw&workload=prompt=2048,gen=256,users=16&slo=ttft=1s"
chrome=("$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run
	--disable-component-update --disable-sync --user-data-dir="$tmp/profile" --virtual-time-budget=20000 --window-size=1280,1000)
timeout 120 "${chrome[@]}" --dump-dom "$url" >"$out/plan.html" 2>"$tmp/chrome.log" || fail "chromium --dump-dom: $(tail -3 "$tmp/chrome.log")"
grep -q 'data-state="ready"' "$out/plan.html" || fail "the page did not finish (no data-state=ready): $(grep -o '<body[^>]*>' "$out/plan.html")"
grep -q 'data-tab="plan"' "$out/plan.html" || fail "the page did not show the Plan screen"
best=$(grep -o 'data-plan="[^"]*"' "$out/plan.html" | head -1)
[ -n "$best" ] || fail "no plan rendered"
grep -q '16 users at' "$out/plan.html" || fail "the plan is not for the 16 users asked"
grep -q 'Typical error (median, on sources held out of the fit, for closed loops of users): decode ±[0-9]*%' "$out/plan.html" || fail "the plan shows no error band for its workload"
grep -q '<svg' "$out/plan.html" || fail "no chart"
timeout 120 "${chrome[@]}" --screenshot="$out/plan.png" "$url" >/dev/null 2>"$tmp/chrome.log" || fail "chromium --screenshot: $(tail -3 "$tmp/chrome.log")"
size=$(stat -c %s "$out/plan.png")
[ "$size" -gt 20000 ] || fail "screenshot is $size bytes: blank?"
# A fleet: a rate one H100 cannot serve (replicas), and DeepSeek-R1 over 2 nodes of 8.
url="$base/?tab=plan&model=meta-llama/Llama-3.1-8B-Instruct&hardware=nvidia-h100-sxm5-80gb&workload=rate=500"
timeout 120 "${chrome[@]}" --dump-dom "$url" >"$out/fleet.html" 2>"$tmp/chrome.log" || fail "chromium --dump-dom (fleet): $(tail -3 "$tmp/chrome.log")"
grep -q 'Fleet: [0-9]* replicas' "$out/fleet.html" || fail "a 500 req/s plan shows no replicas"
grep -q '>slots<' "$out/fleet.html" || fail "a plan at a rate does not count its slots"
# A burst: the summary says when the last of the prompts is answered, not "N users".
url="$base/?tab=plan&model=meta-llama/Llama-3.1-8B-Instruct&hardware=nvidia-h100-sxm5-80gb&workload=prompt=1024,gen=256,burst=500"
timeout 120 "${chrome[@]}" --dump-dom "$url" >"$out/burst.html" 2>"$tmp/chrome.log" || fail "chromium --dump-dom (burst): $(tail -3 "$tmp/chrome.log")"
grep -q 'All 500 prompts answered in' "$out/burst.html" || fail "a burst of 500 does not say when the last prompt is answered"
grep -q '>at once<' "$out/burst.html" || fail "a burst's table does not count sequences at once"
grep -q 'for bursts of prompts sent at once): .*output throughput ±[0-9]*%' "$out/burst.html" || fail "a burst's plan shows no error band of bursts"
# Compare under a burst counts sequences at once, not users.
url="$base/?tab=compare&model=meta-llama/Llama-3.1-8B-Instruct&machines=nvidia-rtx-4090,nvidia-h100-sxm5-80gb&workload=prompt=1024,gen=256,burst=500"
timeout 120 "${chrome[@]}" --dump-dom "$url" >"$out/compare.html" 2>"$tmp/chrome.log" || fail "chromium --dump-dom (compare): $(tail -3 "$tmp/chrome.log")"
grep -q 'data-compare="2"' "$out/compare.html" || fail "compare did not answer for the 2 machines: $(grep -o '<body[^>]*>' "$out/compare.html")"
grep -q '>at once<' "$out/compare.html" || fail "compare under a burst does not count sequences at once"
url="$base/?tab=plan&model=deepseek-ai/DeepSeek-R1&hardware=nvidia-h100-sxm5-80gb&devices=8&nodes=2&workload=users=16"
timeout 120 "${chrome[@]}" --dump-dom "$url" >"$out/nodes.html" 2>"$tmp/chrome.log" || fail "chromium --dump-dom (nodes): $(tail -3 "$tmp/chrome.log")"
grep -q 'TP8 × PP2 over 2 nodes' "$out/nodes.html" || fail "DeepSeek-R1 on 2 × 8 H100 does not show TP8 × PP2"
if [ "${HEADROOM_E2E_PLAYWRIGHT:-0}" = 1 ]; then
	# Type into the inputs and press Answer, through playwright-core.
	if ! node -e 'require.resolve("playwright-core")' 2>/dev/null; then
		npm install --silent --no-save --prefix "$tmp/pw" playwright-core@1 >/dev/null
		export NODE_PATH="$tmp/pw/node_modules"
	fi
	timeout 300 node scripts/web-e2e.js "$base" "$browser" "$out/plan-typed.png" || fail "interactive step"
	if [ "$tags" = webwasm ]; then
		timeout 400 node scripts/web-wasm-e2e.js "$base" "$browser" "$out/wasm-plan.png" || fail "wasm UI"
	fi
fi
echo "web-e2e: ok — plan rendered ($best), screenshot $out/plan.png ($size bytes)"
