#!/usr/bin/env bash
# Builds the desktop app's Fyne UI for the browser (GOOS=js GOARCH=wasm)
# into server/wasm/, where `go build -tags webwasm ./cmd/headroom` embeds it
# and `headroom serve` serves it at /app/. The catalog and the planner run
# in the browser: once loaded, the UI works offline.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=server/wasm
GOOS=js GOARCH=wasm CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$dir/headroom.wasm" ./cmd/headroom-web
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" "$dir/wasm_exec.js"
cat >"$dir/index.html" <<'HTML'
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Headroom</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<script src="wasm_exec.js"></script><script src="start.js"></script>
</head><body><p id="loading">Loading Headroom (the planner runs in your browser)…</p></body></html>
HTML
cat >"$dir/start.js" <<'JS'
const go = new Go();
WebAssembly.instantiateStreaming(fetch("headroom.wasm"), go.importObject)
  .then(r => { document.getElementById("loading").remove(); document.title = "Headroom"; go.run(r.instance); })
  .catch(e => { document.getElementById("loading").textContent = "Could not start: " + e; });
JS
ls -l "$dir"
