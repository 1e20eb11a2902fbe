package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// entry is a one-line widget.Entry that keeps the window's shortcuts
// working while it has focus, and lets its screen take some keys.
//
// Fyne hands a shortcut to the focused widget alone when that widget
// handles shortcuts, and Entry swallows the ones it does not know: with a
// text field focused, Ctrl+1…6 and Ctrl+Q did nothing. entry passes those
// on to its window's canvas.
type entry struct {
	widget.Entry
	// onKey, when set, sees each key first; it returns true when it
	// handled the key (the entry then ignores it).
	onKey func(*fyne.KeyEvent) bool
}

// newEntry is widget.NewEntry for entry.
func newEntry() *entry {
	e := &entry{}
	e.ExtendBaseWidget(e)
	return e
}

// TypedKey offers the key to onKey, then to the entry.
func (e *entry) TypedKey(ev *fyne.KeyEvent) {
	if e.onKey != nil && e.onKey(ev) {
		return
	}
	e.Entry.TypedKey(ev)
}

// TypedShortcut passes window shortcuts to the window's canvas and the
// rest (copy, paste, select all…) to the entry.
func (e *entry) TypedShortcut(s fyne.Shortcut) {
	if isWindowShortcut(s) {
		if c, ok := canvasOf(e).(interface{ TypedShortcut(fyne.Shortcut) }); ok {
			c.TypedShortcut(s)
			return
		}
	}
	e.Entry.TypedShortcut(s)
}

// windowShortcutKeys are the keys the window binds with the platform's
// shortcut modifier (Window.addShortcuts).
var windowShortcutKeys = map[fyne.KeyName]bool{
	fyne.Key1: true, fyne.Key2: true, fyne.Key3: true, fyne.Key4: true, fyne.Key5: true, fyne.Key6: true,
	fyne.KeyQ: true,
}

// isWindowShortcut reports whether s is one the window binds.
func isWindowShortcut(s fyne.Shortcut) bool {
	cs, ok := s.(*desktop.CustomShortcut)
	return ok && cs.Modifier == fyne.KeyModifierShortcutDefault && windowShortcutKeys[cs.KeyName]
}

// canvasOf is the canvas o is shown on: the driver's, else the window's
// (see choiceSelect for why the driver may not know it), else nil.
func canvasOf(o fyne.CanvasObject) fyne.Canvas {
	if a := fyne.CurrentApp(); a != nil {
		if c := a.Driver().CanvasForObject(o); c != nil {
			return c
		}
	}
	return windowCanvas()
}
