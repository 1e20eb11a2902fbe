package ui

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
)

// TestScreenshotsRenderEveryScreen renders the fake service's screens the
// way `headroom gui --screenshots` does, and checks each PNG.
func TestScreenshotsRenderEveryScreen(t *testing.T) {
	a := test.NewTempApp(t)
	dir := t.TempDir()
	paths, err := Screenshots(a, newFakeService(), ScreenshotOptions{
		Dir: dir, Model: "meta-llama/Llama-3.1-8B-Instruct",
		Compare: []string{"nvidia-rtx-3060", "amd-ryzen-ai-max-395"}, Dark: []int{TabPlan},
		Now: func() time.Time { return testNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1-machine.png", "2-canrun.png", "3-plan.png", "4-compare.png", "5-calibrate.png", "6-export.png", "3-plan-dark.png"}
	if len(paths) != len(want) {
		t.Fatalf("rendered %v", paths)
	}
	for i, p := range paths {
		if filepath.Base(p) != want[i] {
			t.Errorf("screenshot %d is %s, want %s", i, filepath.Base(p), want[i])
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
			t.Errorf("%s is %v, want 1280×800", p, b)
		}
		if got := inked(img); got < 0.02 {
			t.Errorf("%s looks blank (%.3f drawn)", p, got)
		}
	}
}
