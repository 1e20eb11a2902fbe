//go:build !webwasm

package server

import (
	"errors"
	"net/http"
)

// wasmHandler answers /app/ in a build without the WebAssembly UI.
func wasmHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, withStatus(http.StatusNotFound, errors.New("this headroom was built without the WebAssembly UI: run scripts/build-wasm.sh, then go build -tags webwasm ./cmd/headroom")))
	})
}
