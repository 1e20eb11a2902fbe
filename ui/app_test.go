package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
)

func TestWindowHasSixTabs(t *testing.T) {
	win, _ := newTestWindow(t)
	want := []string{"My machine", "Can I run it?", "Plan", "Compare hardware", "Calibrate", "Export"}
	if len(win.Tabs.Items) != len(want) {
		t.Fatalf("%d tabs", len(win.Tabs.Items))
	}
	for i, w := range want {
		if win.Tabs.Items[i].Text != w {
			t.Errorf("tab %d is %q, want %q", i, win.Tabs.Items[i].Text, w)
		}
	}
	if got := win.Canvas().Size(); got != DefaultSize {
		t.Errorf("window size %v, want %v", got, DefaultSize)
	}
}

func TestShortcutsSwitchTabs(t *testing.T) {
	win, _ := newTestWindow(t)
	sc, ok := win.Canvas().(fyne.Shortcutable)
	if !ok {
		t.Fatal("canvas takes no shortcuts")
	}
	keys := []fyne.KeyName{fyne.Key1, fyne.Key2, fyne.Key3, fyne.Key4, fyne.Key5, fyne.Key6}
	for i := len(keys) - 1; i >= 0; i-- {
		sc.TypedShortcut(&desktop.CustomShortcut{KeyName: keys[i], Modifier: fyne.KeyModifierShortcutDefault})
		if got := win.Tabs.SelectedIndex(); got != i {
			t.Errorf("Ctrl+%d selected tab %d", i+1, got)
		}
	}
}

func TestKeyboardFocusMovesThroughInputs(t *testing.T) {
	win, _ := newTestWindow(t)
	win.Tabs.SelectIndex(TabCanRun)
	c := win.Canvas()
	test.FocusNext(c)
	first := c.Focused()
	if first == nil {
		t.Fatal("Tab focuses nothing")
	}
	seen := map[fyne.Focusable]bool{first: true}
	for range 8 {
		test.FocusNext(c)
		seen[c.Focused()] = true
	}
	if len(seen) < 5 {
		t.Errorf("Tab visits only %d widgets on Can I run it?", len(seen))
	}
}

func TestModelChoiceIsShared(t *testing.T) {
	win, _ := newTestWindow(t)
	pick(t, win.Plan.picker, "70b")
	win.wait()
	for name, p := range map[string]*modelPicker{"Can I run it?": win.CanRun.picker, "Compare": win.Compare.picker} {
		if p.model.Params != 70_550_000_000 {
			t.Errorf("%s did not follow the model chosen on Plan: %q", name, p.model.ID)
		}
	}
	if win.CanRun.fit.Verdict == "" {
		t.Error("Can I run it? did not evaluate the shared model")
	}
}
