package ui

import (
	"image"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/headroom-planner/headroom/planner"
)

// testOptions run background work without debounce on a fixed clock.
func testOptions() Options {
	return Options{Debounce: -1, Now: func() time.Time { return testNow }, NoProbe: true, queue: make(uiQueue)}
}

// newTestWindow builds the whole window over a fake service in a headless
// test app, at the default size.
func newTestWindow(t *testing.T) (*Window, *fakeService) {
	t.Helper()
	a := test.NewTempApp(t)
	svc := newFakeService()
	w := a.NewWindow("Headroom")
	win := Build(a, w, svc, testOptions())
	w.Resize(DefaultSize)
	t.Cleanup(func() {
		win.wait()
		w.Close()
	})
	return win, svc
}

// model returns the fake catalog's model whose id contains frag.
func model(t *testing.T, svc *fakeService, frag string) planner.Model {
	t.Helper()
	for _, m := range svc.cat.Models {
		if strings.Contains(m.ID, frag) {
			return m
		}
	}
	t.Fatalf("no model %q in the fake catalog", frag)
	return planner.Model{}
}

// pick types q into a picker's search and chooses the only match.
func pick(t *testing.T, p *modelPicker, q string) {
	t.Helper()
	p.search.SetText("")
	test.Type(p.search, q)
	if len(p.shown) != 1 {
		t.Fatalf("search %q shows %d models, want 1", q, len(p.shown))
	}
	p.list.Select(0)
}

// setText replaces an entry's text as a user would by selecting all and
// typing.
func setText(e interface {
	fyne.Focusable
	SetText(string)
}, text string) {
	e.SetText("")
	test.Type(e, text)
}

// inked returns the share of pixels that are not fully transparent and not
// the most common colour (the background).
func inked(img image.Image) float64 {
	b := img.Bounds()
	counts := map[[4]uint32]int{}
	total := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			counts[[4]uint32{r >> 8, g >> 8, bl >> 8, a >> 8}]++
			total++
		}
	}
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	if total == 0 {
		return 0
	}
	return float64(total-most) / float64(total)
}
