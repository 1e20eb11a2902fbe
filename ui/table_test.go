package ui

import (
	"fmt"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// column returns a display column of a table.
func column(t *dataTable, col int) []string {
	var out []string
	for r := range t.cells {
		out = append(out, t.text(r, col))
	}
	return out
}

// TestTableHeaderSorts: a header tap sorts by its column, a second tap the
// other way; figures sort by value across units, empty cells last, and a
// selection names the row of cells, not the row on screen.
func TestTableHeaderSorts(t *testing.T) {
	test.NewTempApp(t)
	tb := newDataTable([]string{"Name", "TTFT", "Memory"}, 1, 2)
	tb.set([][]string{
		{"b", "1.42 s", "24.0 GiB"},
		{"a", "850 ms", "512 MiB"},
		{"c", "–", "1.5 GiB"},
		{"D", "12.3 ms", "–"},
	}, nil)
	header := widget.NewButton("", nil)
	tap := func(col int) {
		tb.updateHeader(widget.TableCellID{Row: -1, Col: col}, header)
		test.Tap(header)
	}
	cases := []struct {
		name string
		col  int
		show int
		want string
	}{
		{"text ascending, case-blind", 0, 0, "[a b c D]"},
		{"text descending", 0, 0, "[D c b a]"},
		{"latency ascending across ms and s, empty last", 1, 1, "[12.3 ms 850 ms 1.42 s –]"},
		{"latency descending, empty still last", 1, 1, "[1.42 s 850 ms 12.3 ms –]"},
		{"memory ascending across MiB and GiB", 2, 2, "[512 MiB 1.5 GiB 24.0 GiB –]"},
	}
	for _, c := range cases {
		tap(c.col)
		if got := fmt.Sprint(column(tb, c.show)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	tb.updateHeader(widget.TableCellID{Row: -1, Col: 2}, header)
	if header.Text != "Memory ▲" {
		t.Errorf("sorted header reads %q", header.Text)
	}
	picked := -1
	tb.onSelect = func(row int) { picked = row }
	tb.table.Select(widget.TableCellID{Row: 0, Col: 0})
	if picked != 1 {
		t.Errorf("selecting the first row on screen (512 MiB) gave cells row %d, want 1", picked)
	}
	// New rows keep the sort.
	tb.set([][]string{{"x", "1 ms", "2 GiB"}, {"y", "1 ms", "1 GiB"}}, nil)
	if got := fmt.Sprint(column(tb, 2)); got != "[1 GiB 2 GiB]" {
		t.Errorf("new rows not sorted: %s", got)
	}
}

// TestTableColumnsFitText: every column is at least as wide as its text
// (nothing truncated below the cap), and the last one takes the width
// left over.
func TestTableColumnsFitText(t *testing.T) {
	test.NewTempApp(t)
	long := "misses the SLO even with one user: TTFT 24.9 s > 2000 ms"
	tb := newDataTable([]string{"Device", "tok/s", "Note"}, 1)
	tb.set([][]string{{"NVIDIA GeForce RTX 4090", "1,234", long}}, nil)
	tb.fit(1600)
	for c, h := range tb.headers {
		text := h + " ▼"
		for _, row := range tb.cells {
			if fyne.MeasureText(row[c], theme.TextSize(), fyne.TextStyle{}).Width > fyne.MeasureText(text, theme.TextSize(), fyne.TextStyle{}).Width {
				text = row[c]
			}
		}
		if w := fyne.MeasureText(text, theme.TextSize(), fyne.TextStyle{}).Width; tb.applied[c] < w {
			t.Errorf("column %q is %.0f wide, its text %.0f", h, tb.applied[c], w)
		}
	}
	var sum float32
	for _, w := range tb.applied {
		sum += w
	}
	if sum < 1600-theme.ScrollBarSize()-1 || sum > 1600 {
		t.Errorf("columns take %.0f of 1600", sum)
	}
	if tb.table.StickyColumnCount != 1 {
		t.Error("the first column scrolls away")
	}
}
