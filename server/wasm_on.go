//go:build webwasm

package server

import (
	"embed"
	"io/fs"
	"net/http"
)

// wasmFiles is the desktop UI compiled to WebAssembly (scripts/build-wasm.sh).
//
//go:embed wasm/index.html wasm/start.js wasm/wasm_exec.js wasm/headroom.wasm
var wasmFiles embed.FS

// wasmHandler serves the Fyne UI at /app/.
func wasmHandler() http.Handler {
	sub, err := fs.Sub(wasmFiles, "wasm")
	if err != nil {
		return http.NotFoundHandler()
	}
	return http.StripPrefix("/app/", staticFiles(sub))
}
