package ui

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// maxColumnWidth caps a text column's width, and maxFirstColumnWidth the
// first column's, which stays on screen when the table scrolls sideways
// and would leave little room for the rest; the detail pane below a table
// shows the whole text of a row.
const (
	maxColumnWidth      = 420
	maxFirstColumnWidth = 320
)

// dataTable is a read-only table of text with a header row. Columns are as
// wide as their widest text (up to maxColumnWidth), the last one takes
// the width left over, and the first stays put when the table scrolls
// sideways. A header tap sorts by its column (again: the other way);
// numeric columns (right-aligned) sort by value. Cells may carry an
// importance (red, orange, green text).
type dataTable struct {
	table   *widget.Table
	headers []string
	align   []fyne.TextAlign
	cells   [][]string
	imp     [][]widget.Importance

	// order maps display rows to rows of cells; sortCol is the column
	// sorted by (-1 = as given), desc its direction.
	order   []int
	sortCol int
	desc    bool
	// natural are the columns' widths for their text; width is the width
	// the table was last laid out at.
	natural []float32
	width   float32
	applied []float32 // the widths last given to the table

	// onSelect is called with the row of cells (not the display row)
	// the user selects.
	onSelect func(row int)

	content fyne.CanvasObject
}

// newDataTable makes a table with the given headers; numeric columns
// (right-aligned, sorted by value) are listed in right.
func newDataTable(headers []string, right ...int) *dataTable {
	t := &dataTable{headers: headers, align: make([]fyne.TextAlign, len(headers)), sortCol: -1}
	for _, c := range right {
		t.align[c] = fyne.TextAlignTrailing
	}
	t.table = widget.NewTableWithHeaders(
		func() (int, int) { return len(t.cells), len(t.headers) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		t.updateCell,
	)
	t.table.ShowHeaderColumn = false
	t.table.StickyColumnCount = 1
	t.table.CreateHeader = func() fyne.CanvasObject {
		b := widget.NewButton("", nil)
		b.Importance = widget.LowImportance
		return b
	}
	t.table.UpdateHeader = t.updateHeader
	t.table.OnSelected = func(id widget.TableCellID) {
		if t.onSelect != nil && id.Row >= 0 && id.Row < len(t.order) {
			t.onSelect(t.order[id.Row])
		}
	}
	t.measure()
	t.content = container.New(&fitLayout{t: t}, t.table)
	return t
}

// fitLayout gives the table all its space and sizes its columns to it.
type fitLayout struct{ t *dataTable }

// Layout fits the columns to the width, then lays the table out.
func (l *fitLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	l.t.fit(size.Width)
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}

// MinSize is the table's own.
func (l *fitLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	return objs[0].MinSize()
}

// headerText is a column's header with the sort arrow when sorted by it.
func (t *dataTable) headerText(col int) string {
	h := t.headers[col]
	if col == t.sortCol {
		if t.desc {
			return h + " ▼"
		}
		return h + " ▲"
	}
	return h
}

func (t *dataTable) updateHeader(id widget.TableCellID, o fyne.CanvasObject) {
	b := o.(*widget.Button)
	if id.Col < 0 || id.Col >= len(t.headers) {
		return
	}
	col := id.Col
	b.Alignment = widget.ButtonAlignLeading
	if t.align[col] == fyne.TextAlignTrailing {
		b.Alignment = widget.ButtonAlignTrailing
	}
	b.OnTapped = func() { t.sortBy(col) }
	b.SetText(t.headerText(col))
}

// updateCell fills a cell template. Laying text out is the expensive part
// of a table refresh, so a cell that already shows the right text in the
// right style is left alone.
func (t *dataTable) updateCell(id widget.TableCellID, o fyne.CanvasObject) {
	l := o.(*widget.Label)
	text, align, imp := "", fyne.TextAlignLeading, widget.MediumImportance
	if id.Row >= 0 && id.Row < len(t.order) && id.Col < len(t.headers) {
		row := t.order[id.Row]
		if id.Col < len(t.cells[row]) {
			text, align = t.cells[row][id.Col], t.align[id.Col]
		}
		if row < len(t.imp) && id.Col < len(t.imp[row]) {
			imp = t.imp[row][id.Col]
		}
	}
	// Only text columns end in "…": ellipsis truncation shapes the text
	// again on every refresh, clipping does not.
	trunc := fyne.TextTruncateClip
	if align == fyne.TextAlignLeading {
		trunc = fyne.TextTruncateEllipsis
	}
	if l.Text == text && l.Alignment == align && l.Importance == imp && l.Truncation == trunc {
		return
	}
	l.Text, l.Alignment, l.Importance, l.Truncation = text, align, imp, trunc
	l.Refresh()
}

// set replaces the rows, keeping the sort; imp may be nil or shorter than
// cells.
func (t *dataTable) set(cells [][]string, imp [][]widget.Importance) {
	t.cells, t.imp = cells, imp
	t.sort()
	t.measure()
	t.fit(t.width)
	t.table.UnselectAll()
	t.table.Refresh()
}

// sortBy sorts by col, the other way when it is sorted by col already.
func (t *dataTable) sortBy(col int) {
	if col == t.sortCol {
		t.desc = !t.desc
	} else {
		t.sortCol, t.desc = col, false
	}
	t.sort()
	t.measure()
	t.fit(t.width)
	t.table.UnselectAll()
	t.table.Refresh()
}

// sort orders the display rows by the sort column; empty cells ("", "–")
// go last either way.
func (t *dataTable) sort() {
	t.order = make([]int, len(t.cells))
	for i := range t.order {
		t.order[i] = i
	}
	col := t.sortCol
	if col < 0 || col >= len(t.headers) {
		return
	}
	numeric := t.align[col] == fyne.TextAlignTrailing
	cell := func(r int) string {
		if col < len(t.cells[r]) {
			return t.cells[r][col]
		}
		return ""
	}
	sort.SliceStable(t.order, func(x, y int) bool {
		a, b := cell(t.order[x]), cell(t.order[y])
		if ea, eb := isEmptyCell(a), isEmptyCell(b); ea || eb {
			return !ea && eb
		}
		if numeric {
			va, vb := cellNumber(a), cellNumber(b)
			if va != vb {
				return (va < vb) != t.desc
			}
			return false
		}
		la, lb := strings.ToLower(a), strings.ToLower(b)
		if la != lb {
			return (la < lb) != t.desc
		}
		return false
	})
}

// isEmptyCell reports whether a cell shows no figure.
func isEmptyCell(s string) bool {
	s = strings.TrimSpace(s)
	return s == "" || s == "–" || s == "-"
}

// cellUnits scale a figure's unit to a common one per kind (ms, MiB,
// tokens, per second), so "1.42 s" sorts above "850 ms".
var cellUnits = map[string]float64{
	"s": 1000, "ms": 1, "GiB": 1024, "MiB": 1, "k": 1024, "W": 1, "%": 1,
}

// cellNumber reads the figure a numeric cell shows ("$1,599", "1.42 s",
// "850 ms", "24.0 GiB", "8k", "±10%"); text it cannot read is NaN-free
// -Inf, so it sorts first ascending.
func cellNumber(s string) float64 {
	s = strings.TrimSpace(strings.NewReplacer(",", "", "$", "", "±", "", "≈", "").Replace(s))
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.' || s[end] == '-' && end == 0) {
		end++
	}
	v, err := strconv.ParseFloat(s[:end], 64)
	if err != nil || math.IsNaN(v) {
		return math.Inf(-1)
	}
	unit := strings.TrimSpace(s[end:])
	if f := strings.Fields(unit); len(f) > 0 {
		unit = f[0]
	}
	if m, ok := cellUnits[unit]; ok {
		v *= m
	}
	return v
}

// measure sets each column's natural width: its widest text (header with
// a sort arrow, or cell) plus the cell's padding, capped at
// maxColumnWidth (maxFirstColumnWidth for the first).
func (t *dataTable) measure() {
	pad := 2*theme.InnerPadding() + 2*theme.Padding()
	size := theme.TextSize()
	t.natural = make([]float32, len(t.headers))
	for c, h := range t.headers {
		w := fyne.MeasureText(h+" ▼", size, fyne.TextStyle{}).Width + pad
		for _, row := range t.cells {
			if c < len(row) {
				w = max(w, fyne.MeasureText(row[c], size, fyne.TextStyle{}).Width+pad)
			}
		}
		limit := float32(maxColumnWidth)
		if c == 0 {
			limit = maxFirstColumnWidth
		}
		t.natural[c] = float32(math.Ceil(float64(min(w, limit))))
	}
}

// fit sets the column widths for a table width: natural widths, the last
// column widened to take what is left over.
func (t *dataTable) fit(width float32) {
	t.width = width
	var sum float32
	for _, w := range t.natural {
		sum += w
	}
	if len(t.applied) != len(t.natural) {
		t.applied = make([]float32, len(t.natural))
	}
	for c, w := range t.natural {
		if c == len(t.natural)-1 && width > sum {
			// Leave room for the table's scroll bar.
			w = max(w, w+width-sum-theme.ScrollBarSize())
		}
		if t.applied[c] != w {
			t.applied[c] = w
			t.table.SetColumnWidth(c, w)
		}
	}
}

// text returns the cell text at display row, col ("" outside the table).
func (t *dataTable) text(row, col int) string {
	if row < 0 || row >= len(t.order) {
		return ""
	}
	r := t.order[row]
	if col < 0 || col >= len(t.cells[r]) {
		return ""
	}
	return t.cells[r][col]
}

// setHeader renames column col (shown at the next set); the headers
// slice given to newDataTable is not modified.
func (t *dataTable) setHeader(col int, name string) {
	if col < 0 || col >= len(t.headers) || t.headers[col] == name {
		return
	}
	h := append([]string(nil), t.headers...)
	h[col] = name
	t.headers = h
}
