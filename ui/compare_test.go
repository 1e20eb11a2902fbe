package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"github.com/headroom-planner/headroom/planner"
)

func TestCompareEmptyState(t *testing.T) {
	win, _ := newTestWindow(t)
	win.Tabs.SelectIndex(TabCompare)
	if !win.Compare.empty.Visible() {
		t.Fatal("Compare with no model should show its empty state")
	}
	if got := win.Compare.hwCount.Text; got != "1 chosen" {
		t.Errorf("this machine should start ticked; count %q", got)
	}
}

func TestCompareSideBySide(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.Compare
	win.Tabs.SelectIndex(TabCompare)
	pick(t, s.picker, "8b")
	s.SetDevices("", "nvidia-rtx-3060", "amd-ryzen-ai-max-395")
	win.wait()
	if len(s.rows) != 3 {
		t.Fatalf("%d rows, want 3", len(s.rows))
	}
	if got := s.table.text(0, 0); got != "This machine (NVIDIA GeForce RTX 4090)" {
		t.Errorf("first device %q", got)
	}
	apu := s.rows[2]
	if apu.Verdict != planner.Fits || apu.PerKiloUSD != 0 || apu.PerWatt <= 0 {
		t.Errorf("APU row %+v: fits, no price, a per-watt figure", apu)
	}
	if got := s.table.text(2, 7); got != "no price" {
		t.Errorf("tok/s per $1k without a price shows %q, want \"no price\"", got)
	}
	gpu := s.rows[0]
	if gpu.PerKiloUSD <= 0 || gpu.Total <= 0 {
		t.Errorf("4090 row %+v", gpu)
	}

	// The chart follows the metric.
	s.metric.SetSelected("tok/s per W")
	if s.chart.draw == nil {
		t.Fatal("no chart for tok/s per W")
	}
	img := s.chart.generate(500, 260)
	if b := img.Bounds(); b.Dx() != 500 || b.Dy() != 260 || inked(img) < 0.01 {
		t.Errorf("bar chart %v inked %.3f", b, inked(img))
	}
	test.AssertRendersToMarkup(t, "compare.xml", win.Canvas())

	// More users: more total throughput on the 4090.
	setText(s.users, "16")
	win.wait()
	if s.rows[0].Total <= gpu.Total || s.rows[0].Users != 16 {
		t.Errorf("16 users: total %v (was %v), users %d", s.rows[0].Total, gpu.Total, s.rows[0].Users)
	}

	// Unticking a device drops its row.
	s.setChecked("nvidia-rtx-3060", false)
	win.wait()
	if len(s.rows) != 2 || s.hwCount.Text != "2 chosen" {
		t.Errorf("after unticking: %d rows, %q", len(s.rows), s.hwCount.Text)
	}
}

func TestCompareHardwareSearch(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.Compare
	setText(s.hwSearch, "rtx")
	if len(s.hwShown) != 2 {
		t.Errorf("search rtx shows %d devices, want 2", len(s.hwShown))
	}
	setText(s.hwSearch, "ryzen max")
	if len(s.hwShown) != 1 || !strings.Contains(s.hwNames[s.hwShown[0]], "Max+ 395") {
		t.Errorf("search 'ryzen max' shows %v", s.hwShown)
	}
}

func TestCompareNothingWithAPrice(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.Compare
	pick(t, s.picker, "8b")
	s.SetDevices("amd-ryzen-ai-max-395")
	win.wait()
	s.metric.SetSelected("tok/s per $1k")
	// The device stays in the chart, named with why it has no bar.
	bars := chartBars(s.rows, compareMetrics[s.metric.SelectedIndex()], s.rowName)
	if s.chart.draw == nil || len(bars) != 1 || !strings.HasSuffix(bars[0].name, "(no price)") || bars[0].value != 0 {
		t.Errorf("no price: chart %v, bars %+v", s.chart.draw != nil, bars)
	}
}
