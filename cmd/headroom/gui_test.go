//go:build ci

package main

import (
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/headroom-planner/headroom/app"
)

// screenshotsDir, when set, makes TestGUIScreenshots write the README's
// screenshots there:
//
//	CGO_ENABLED=0 go test -tags ci ./cmd/headroom -run TestGUIScreenshots -screenshots $PWD/docs/screenshots
var (
	screenshotsDir  = flag.String("screenshots", "", "write the GUI screenshots to this directory")
	screenshotsSize = flag.String("screenshot-size", "1280x800", "window size of the GUI screenshots")
)

// screenshotRoot is the machine the screenshots show: a probe fixture with
// two RTX 4090s, so that the README does not depend on where it was made.
const screenshotRoot = "../../probe/testdata/rtx-4090-x2"

// guiTestApp is the application layer the desktop app is built over, with
// an empty calibration directory and the given machine to probe.
func guiTestApp(t *testing.T, root string) *app.App {
	t.Helper()
	a, err := app.Open(app.Options{CalibrationDir: t.TempDir(), NoUserDirs: true, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestGUIScreenshots(t *testing.T) {
	dir := *screenshotsDir
	if dir == "" {
		dir = t.TempDir()
	}
	o := &guiOptions{screenshots: dir, model: "meta-llama/Llama-3.1-8B-Instruct", size: *screenshotsSize,
		compare: "nvidia-rtx-4090,nvidia-rtx-5090,amd-ryzen-ai-max-395,apple-m4-max-40c,nvidia-rtx-3090",
		// seed 002's vllm bench serve run (Strix Halo): the Calibrate
		// screen shows what an import saved, into guiTestApp's scratch
		// calibration directory.
		calibrateFile: "../../calibrate/importer/testdata/vllm-serve-result.json"}
	hr := guiTestApp(t, screenshotRoot)
	paths, err := renderScreenshots(hr, o)
	if err != nil {
		t.Fatal(err)
	}
	// The Calibrate screenshot is of a saved import, not of an error.
	if saved, err := filepath.Glob(filepath.Join(hr.CalibrationDir(), "amd-ryzen-ai-max-395__vllm__rocm.toml")); err != nil || len(saved) != 1 {
		t.Errorf("the Calibrate screenshot's import saved %v (%v) in %s", saved, err, hr.CalibrationDir())
	}
	if len(paths) != 8 {
		t.Errorf("%d screenshots, want 6 light and 2 dark: %v", len(paths), paths)
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		w, h, _ := o.windowSize()
		if b := img.Bounds(); b.Dx() != int(w) || b.Dy() != int(h) {
			t.Errorf("%s is %v, want %v×%v", p, b, w, h)
		}
	}
}
