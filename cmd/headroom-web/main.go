//go:build js && wasm

// Command headroom-web is the desktop app's Fyne UI compiled to
// WebAssembly: the catalog and the planner run in the browser, so the page
// works offline once loaded. Build it with
//
//	scripts/build-wasm.sh   (then: go build -tags webwasm ./cmd/headroom)
//
// which builds it into server/wasm/ for `headroom serve` to serve at /app/
// (or `fyne package -os wasm`). A browser has no machine to probe: the My
// machine screen says the probe is not implemented on js, and the other
// screens work on catalog hardware.
package main

import (
	"fmt"
	"os"

	fyneapp "fyne.io/fyne/v2/app"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/ui"
)

func main() {
	a := fyneapp.NewWithID("io.headroom.app") // FyneApp.toml's id, as cmd/headroom's appID
	a.Settings().SetTheme(ui.NewTheme())
	h, err := app.Open(app.Options{NoUserDirs: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "headroom: error: %v\n", err)
		return
	}
	ui.New(a, ui.NewService(h), ui.Options{}).ShowAndRun()
}
