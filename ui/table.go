package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// dataTable is a read-only table of text with a header row and fixed
// column widths. Cells may carry an importance (red, orange, green text).
type dataTable struct {
	table   *widget.Table
	headers []string
	align   []fyne.TextAlign
	cells   [][]string
	imp     [][]widget.Importance
}

// newDataTable makes a table with the given headers and column widths;
// numeric columns (right-aligned) are listed in right.
func newDataTable(headers []string, widths []float32, right ...int) *dataTable {
	t := &dataTable{headers: headers, align: make([]fyne.TextAlign, len(headers))}
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
	t.table.CreateHeader = func() fyne.CanvasObject {
		l := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		l.Truncation = fyne.TextTruncateEllipsis
		return l
	}
	t.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		l := o.(*widget.Label)
		if id.Col >= 0 && id.Col < len(t.headers) {
			l.Alignment = t.align[id.Col]
			l.SetText(t.headers[id.Col])
		}
	}
	for i, w := range widths {
		t.table.SetColumnWidth(i, w)
	}
	return t
}

// updateCell fills a cell template. Laying text out is the expensive part
// of a table refresh, so a cell that already shows the right text in the
// right style is left alone.
func (t *dataTable) updateCell(id widget.TableCellID, o fyne.CanvasObject) {
	l := o.(*widget.Label)
	text, align, imp := "", fyne.TextAlignLeading, widget.MediumImportance
	if id.Row < len(t.cells) && id.Col < len(t.cells[id.Row]) {
		text, align = t.cells[id.Row][id.Col], t.align[id.Col]
		if id.Row < len(t.imp) && id.Col < len(t.imp[id.Row]) {
			imp = t.imp[id.Row][id.Col]
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

// set replaces the rows; imp may be nil or shorter than cells.
func (t *dataTable) set(cells [][]string, imp [][]widget.Importance) {
	t.cells, t.imp = cells, imp
	t.table.UnselectAll()
	t.table.Refresh()
}

// text returns the cell text at row, col ("" outside the table).
func (t *dataTable) text(row, col int) string {
	if row < 0 || row >= len(t.cells) || col < 0 || col >= len(t.cells[row]) {
		return ""
	}
	return t.cells[row][col]
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
