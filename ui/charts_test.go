package ui

import (
	"errors"
	"image"
	"image/color"
	"testing"

	"fyne.io/fyne/v2"
)

func testStyle() chartStyle {
	return chartStyle{fg: color.Black, grid: color.Gray{Y: 0xc0}, dpi: 96,
		series: []color.Color{palette.series1, palette.series2, palette.series3}}
}

var testCurve = []curvePoint{
	{Concurrency: 1, Total: 90, PerUser: 90, TTFT: 120},
	{Concurrency: 2, Total: 170, PerUser: 85, TTFT: 180},
	{Concurrency: 4, Total: 300, PerUser: 75, TTFT: 300},
	{Concurrency: 8, Total: 480, PerUser: 60, TTFT: 550},
	{Concurrency: 16, Total: 640, PerUser: 40, TTFT: 1100},
}

func TestChartsRenderAtTheRequestedSize(t *testing.T) {
	st := testStyle()
	cases := []struct {
		name string
		draw func(w, h int) (image.Image, error)
	}{
		{"throughput", func(w, h int) (image.Image, error) { return throughputChart(testCurve, w, h, st) }},
		{"ttft", func(w, h int) (image.Image, error) { return ttftChart(testCurve, 800, w, h, st) }},
		{"bars", func(w, h int) (image.Image, error) {
			return barChart("Total tok/s", "tok/s", []string{"RTX 4090", "RTX 3060", "Strix Halo"}, []float64{640, 210, 95}, 1, w, h, st)
		}},
		{"scatter", func(w, h int) (image.Image, error) {
			return scatterChart([]CalibrationPoint{{Predicted: 120, Measured: 131}, {Predicted: 820, Measured: 760}, {Predicted: 9000, Measured: 10400}}, w, h, st)
		}},
	}
	for _, c := range cases {
		for _, size := range [][2]int{{480, 260}, {300, 200}, {1100, 420}} {
			img, err := c.draw(size[0], size[1])
			if err != nil {
				t.Fatalf("%s %v: %v", c.name, size, err)
			}
			if b := img.Bounds(); b.Dx() != size[0] || b.Dy() != size[1] {
				t.Errorf("%s: image %v, want %d×%d", c.name, b, size[0], size[1])
			}
			// Axes, labels and lines cover at least 2% of the pixels.
			if got := inked(img); got < 0.02 {
				t.Errorf("%s %v: only %.3f of the pixels drawn", c.name, size, got)
			}
		}
	}
}

func TestChartsRejectNothingToDraw(t *testing.T) {
	st := testStyle()
	zero := []curvePoint{{Concurrency: 1}, {Concurrency: 2}}
	if _, err := throughputChart(nil, 300, 200, st); !errors.Is(err, errNoData) {
		t.Errorf("throughput of nothing: %v", err)
	}
	if _, err := throughputChart(zero, 300, 200, st); !errors.Is(err, errNoData) {
		t.Errorf("throughput of zeros: %v", err)
	}
	if _, err := ttftChart(zero, 0, 300, 200, st); !errors.Is(err, errNoData) {
		t.Errorf("TTFT of zeros: %v", err)
	}
	if _, err := barChart("x", "y", []string{"a"}, nil, -1, 300, 200, st); err == nil {
		t.Error("bars with mismatched values drew")
	}
	if _, err := scatterChart([]CalibrationPoint{{Predicted: -1, Measured: 3}}, 300, 200, st); !errors.Is(err, errNoData) {
		t.Errorf("scatter of a negative point: %v", err)
	}
	if _, err := throughputChart(testCurve, 0, 200, st); err == nil {
		t.Error("a zero-width chart drew")
	}
}

func TestChartsOfOnePointDoNotPanic(t *testing.T) {
	st := testStyle()
	one := testCurve[:1]
	for name, f := range map[string]func() (image.Image, error){
		"throughput": func() (image.Image, error) { return throughputChart(one, 300, 200, st) },
		"ttft":       func() (image.Image, error) { return ttftChart(one, 0, 300, 200, st) },
		"scatter": func() (image.Image, error) {
			return scatterChart([]CalibrationPoint{{Predicted: 5, Measured: 5}}, 300, 200, st)
		},
	} {
		if _, err := f(); err != nil {
			t.Errorf("%s of one point: %v", name, err)
		}
	}
}

func TestChartViewEmptyAndCache(t *testing.T) {
	c := newChartView("nothing yet", fyne.NewSize(100, 80))
	if !c.box.Visible() || c.msg.Text != "nothing yet" {
		t.Fatal("an empty chart should show its message")
	}
	calls := 0
	c.set(func(w, h int, st chartStyle) (image.Image, error) {
		calls++
		return throughputChart(testCurve, w, h, st)
	})
	if c.box.Visible() {
		t.Error("message still shown with a chart set")
	}
	c.generate(300, 200)
	c.generate(300, 200)
	if calls != 1 {
		t.Errorf("same size drawn %d times, want 1 (cached)", calls)
	}
	c.generate(400, 200)
	if calls != 2 || c.lastW != 400 {
		t.Errorf("a new size should redraw: calls %d, last width %d", calls, c.lastW)
	}
}

func TestTickLabels(t *testing.T) {
	for v, want := range map[float64]string{0.5: "0.5", 20: "20", 1500: "1.5k", 5000: "5k", 2e6: "2M"} {
		if got := shortNumber(v); got != want {
			t.Errorf("shortNumber(%v) = %q, want %q", v, got, want)
		}
	}
	ticks := pow2Ticks{}.Ticks(0.9, 16.5)
	if len(ticks) != 5 || ticks[0].Label != "1" || ticks[4].Label != "16" {
		t.Errorf("pow2 ticks %v", ticks)
	}
}
