package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// choiceSelect is a widget.Select that a tap cannot crash.
//
// Fyne 2.7.1's Select opens its menu on the canvas the driver's object
// cache names for it. That cache keeps an object's entry without renewing
// it each frame (internal/cache.SetCanvasForObject stores only when absent;
// only a lookup renews it), so an entry made more than a minute earlier is
// dropped at the next canvas-refresh clean even while the select is on
// screen, and a tap before the next layout walk finds no canvas:
// NewPopUpMenu(…, nil) then dereferences it (fyne-io/fyne#5965; fixed
// upstream by a nil-canvas guard, PR #6305, not in v2.7.1). The desktop app
// crashed that way four times in forty minutes, on the Hardware and Engine
// selects and on Compare's chart select, and lost every input.
//
// When the driver has no canvas for it, choiceSelect opens the same menu
// on the window's canvas at the tap's position instead; with no window at
// all, a tap does nothing.
type choiceSelect struct {
	widget.Select
	// canvasOf finds the canvas the driver has for an object (nil: the
	// driver's CanvasForObject); tests replace it to detach the select.
	canvasOf func(fyne.CanvasObject) fyne.Canvas
}

// newChoiceSelect is widget.NewSelect for choiceSelect.
func newChoiceSelect(options []string, changed func(string)) *choiceSelect {
	s := &choiceSelect{}
	s.Options, s.OnChanged = options, changed
	s.ExtendBaseWidget(s)
	return s
}

// attached reports whether the driver knows the canvas the select is on.
func (s *choiceSelect) attached() bool {
	if s.canvasOf != nil {
		return s.canvasOf(s) != nil
	}
	a := fyne.CurrentApp()
	return a != nil && a.Driver().CanvasForObject(s) != nil
}

// Tapped opens the menu: Select's own when the select is attached, else
// the fallback below the tapped select.
func (s *choiceSelect) Tapped(ev *fyne.PointEvent) {
	if s.attached() {
		s.Select.Tapped(ev)
		return
	}
	if s.Disabled() || ev == nil {
		return
	}
	at := ev.AbsolutePosition.Subtract(ev.Position).Add(fyne.NewPos(0, s.Size().Height))
	s.fallbackMenu(at)
}

// TypedKey handles the keys that open the menu (space, up, down) only when
// the select is attached; the others change the selection as Select does.
func (s *choiceSelect) TypedKey(ev *fyne.KeyEvent) {
	switch ev.Name {
	case fyne.KeySpace, fyne.KeyUp, fyne.KeyDown:
		if !s.attached() {
			return
		}
	}
	s.Select.TypedKey(ev)
}

// fallbackMenu shows the options as a pop-up menu on the first window's
// canvas at pos.
func (s *choiceSelect) fallbackMenu(pos fyne.Position) {
	c := windowCanvas()
	if c == nil {
		return
	}
	widget.ShowPopUpMenuAtPosition(s.menu(), c, pos)
}

// menu is the options as a menu whose items choose them.
func (s *choiceSelect) menu() *fyne.Menu {
	items := make([]*fyne.MenuItem, len(s.Options))
	for i, text := range s.Options {
		items[i] = fyne.NewMenuItem(text, func() { s.SetSelected(text) })
	}
	return fyne.NewMenu("", items...)
}

// windowCanvas is the canvas to show a detached select's menu on: the last
// window opened (Headroom has one window, and its dialogs are overlays on
// it), or nil when there is none.
func windowCanvas() fyne.Canvas {
	a := fyne.CurrentApp()
	if a == nil {
		return nil
	}
	wins := a.Driver().AllWindows()
	for i := len(wins) - 1; i >= 0; i-- {
		if c := wins[i].Canvas(); c != nil {
			return c
		}
	}
	return nil
}
