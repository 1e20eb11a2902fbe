package ui

import (
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// heading is a bold title line, a size up from body text.
func heading(text string) *widget.Label {
	l := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	l.SizeName = theme.SizeNameSubHeadingText
	return l
}

// caption is secondary text that wraps.
func caption(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	return l
}

// emptyState is a screen's message while it has nothing to show: italic,
// centred, wrapping within the space it is given.
func emptyState(text string) (fyne.CanvasObject, *widget.Label) {
	l := widget.NewLabelWithStyle(text, fyne.TextAlignCenter, fyne.TextStyle{Italic: true})
	l.Wrapping = fyne.TextWrapWord
	return container.NewVBox(layout.NewSpacer(), l, layout.NewSpacer()), l
}

// errorLabel is the inline error line every screen has: red, wrapping,
// hidden while empty. An error also hides the results it makes stale
// (hideOnError), so a red line never sits above the previous input's
// answer; the screen shows them again with its next answer.
type errorLabel struct {
	*widget.Label
	stale *[]fyne.CanvasObject
}

func newErrorLabel() errorLabel {
	l := widget.NewLabel("")
	l.Importance = widget.DangerImportance
	l.Wrapping = fyne.TextWrapWord
	l.Hide()
	return errorLabel{Label: l, stale: new([]fyne.CanvasObject)}
}

// hideOnError names objects an error makes stale: set(err) hides them.
func (e errorLabel) hideOnError(objs ...fyne.CanvasObject) {
	*e.stale = append(*e.stale, objs...)
}

// set shows err and hides the stale results, or hides the label when err
// is nil (the caller shows its results).
func (e errorLabel) set(err error) {
	if err == nil {
		e.SetText("")
		e.Hide()
		return
	}
	for _, o := range *e.stale {
		o.Hide()
	}
	msg := err.Error()
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	e.SetText(msg)
	e.Show()
}

// sized stacks obj over an invisible rectangle so that it asks for at least
// size (lists and tables otherwise shrink to one row).
func sized(obj fyne.CanvasObject, size fyne.Size) fyne.CanvasObject {
	r := canvas.NewRectangle(color.Transparent)
	r.SetMinSize(size)
	return container.NewStack(r, obj)
}

// section is a titled block: a heading, then its content.
func section(title string, content ...fyne.CanvasObject) *fyne.Container {
	return container.NewVBox(append([]fyne.CanvasObject{heading(title)}, content...)...)
}

// formRow is a label and its input on one line, for a form of two columns.
func formRow(label string, input fyne.CanvasObject) []fyne.CanvasObject {
	l := widget.NewLabel(label)
	return []fyne.CanvasObject{l, input}
}

// withUnit puts a unit after an input: "[ 2000 ] ms".
func withUnit(input fyne.CanvasObject, unit string) fyne.CanvasObject {
	return container.NewBorder(nil, nil, nil, widget.NewLabel(unit), input)
}

// form lays rows of formRow out in two columns.
func form(rows ...[]fyne.CanvasObject) *fyne.Container {
	var objs []fyne.CanvasObject
	for _, r := range rows {
		objs = append(objs, r...)
	}
	return container.New(layout.NewFormLayout(), objs...)
}

// bulletText joins lines as a list with bullets ("" for none).
func bulletText(lines []string, bullet string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(bullet)
		b.WriteString(l)
	}
	return b.String()
}
