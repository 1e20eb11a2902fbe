package ui

import (
	"fmt"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"

	"github.com/headroom-planner/headroom/planner"
)

// TestErrorHidesStaleResult: an invalid input or a failed service call
// must not leave the previous answer on screen below the red error line.
func TestErrorHidesStaleResult(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.CanRun
	win.Tabs.SelectIndex(TabCanRun)
	pick(t, s.picker, "8b")
	win.wait()
	if !s.results.Visible() {
		t.Fatal("no result after choosing a model")
	}
	cases := []struct {
		name   string
		break_ func()
		fix    func()
	}{
		{"invalid users", func() { setText(s.users, "many") }, func() { setText(s.users, "2") }},
		{"model file fails to open", func() { s.OpenModelFile("/tmp/missing.gguf") }, func() { s.users.SetText("3") }},
	}
	for _, c := range cases {
		c.break_()
		win.wait()
		if !s.errLine.Visible() || s.results.Visible() {
			t.Errorf("%s: error shown %v, old result shown %v; want the error alone", c.name, s.errLine.Visible(), s.results.Visible())
		}
		c.fix()
		win.wait()
		if s.errLine.Visible() || !s.results.Visible() {
			t.Errorf("%s fixed: error shown %v (%q), result shown %v", c.name, s.errLine.Visible(), s.errLine.Text, s.results.Visible())
		}
	}
	// Plan and Compare hide theirs too.
	win.Tabs.SelectIndex(TabPlan)
	setText(win.Plan.maxTTFT, "soon")
	win.wait()
	if win.Plan.results.Visible() {
		t.Error("Plan keeps the previous plan below an invalid target")
	}
	win.Tabs.SelectIndex(TabCompare)
	setText(win.Compare.users, "0")
	win.wait()
	if win.Compare.results.Visible() {
		t.Error("Compare keeps the previous rows below an invalid user count")
	}
}

// TestSearchScrollsToTop: a new search shows its first matches, not the
// list scrolled where the last search left it.
func TestSearchScrollsToTop(t *testing.T) {
	test.NewTempApp(t)
	var models []planner.Model
	for i := range 60 {
		models = append(models, planner.Model{ID: fmt.Sprintf("org/model-%02d", i), Layers: 1})
	}
	p := newModelPicker(models, 150)
	w := test.NewWindow(p.content)
	defer w.Close()
	w.Resize(fyne.NewSize(320, 300))
	p.list.ScrollToBottom()
	if p.list.GetScrollOffset() == 0 {
		t.Fatal("the list did not scroll")
	}
	test.Type(p.search, "model-1")
	if off := p.list.GetScrollOffset(); off != 0 {
		t.Errorf("after a new search the list is scrolled to %v, want the top", off)
	}
}

// TestKeyboardChoosesModel: Down, Up and Enter in the search field choose
// from the list.
func TestKeyboardChoosesModel(t *testing.T) {
	win, _ := newTestWindow(t)
	p := win.CanRun.picker
	win.Tabs.SelectIndex(TabCanRun)
	win.Canvas().Focus(p.search)
	test.Type(p.search, "llama")
	if len(p.shown) < 2 {
		t.Fatalf("search shows %d models, want 2", len(p.shown))
	}
	key := func(k fyne.KeyName) { win.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: k}) }
	key(fyne.KeyReturn)
	win.wait()
	if want := p.models[p.shown[0]].ID; p.model.ID != want {
		t.Errorf("Enter chose %q, want the first match %q", p.model.ID, want)
	}
	key(fyne.KeyDown)
	win.wait()
	if want := p.models[p.shown[1]].ID; p.model.ID != want {
		t.Errorf("Down chose %q, want the second match %q", p.model.ID, want)
	}
	key(fyne.KeyUp)
	win.wait()
	if want := p.models[p.shown[0]].ID; p.model.ID != want {
		t.Errorf("Up chose %q, want the first match %q", p.model.ID, want)
	}
	if win.CanRun.fit.Verdict == "" {
		t.Error("a model chosen with the keyboard was not evaluated")
	}
}

// TestShortcutsWorkFromEntries: Ctrl+1…6 switch tabs while a text field
// has focus (the entry used to swallow them).
func TestShortcutsWorkFromEntries(t *testing.T) {
	win, _ := newTestWindow(t)
	win.Tabs.SelectIndex(TabPlan)
	win.Canvas().Focus(win.Plan.maxTTFT)
	focused, ok := win.Canvas().Focused().(fyne.Shortcutable)
	if !ok {
		t.Fatal("the focused entry takes no shortcuts")
	}
	// Fyne's driver gives a shortcut to the focused widget alone.
	focused.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.Key4, Modifier: fyne.KeyModifierShortcutDefault})
	if got := win.Tabs.SelectedIndex(); got != TabCompare {
		t.Errorf("Ctrl+4 in an entry selected tab %d, want %d", got, TabCompare)
	}
	// The entry's own shortcuts still reach it.
	win.Plan.maxTTFT.SetText("1500")
	focused.TypedShortcut(&fyne.ShortcutSelectAll{})
	if got := win.Plan.maxTTFT.SelectedText(); got != "1500" {
		t.Errorf("Ctrl+A in an entry selected %q", got)
	}
}

// TestEscapeClosesFileDialog: the Open model dialog closes on Escape.
func TestEscapeClosesFileDialog(t *testing.T) {
	win, _ := newTestWindow(t)
	win.Tabs.SelectIndex(TabCanRun)
	test.Tap(win.CanRun.picker.open)
	if win.Canvas().Overlays().Top() == nil || win.dialog == nil {
		t.Fatal("Open… showed no dialog")
	}
	win.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if top := win.Canvas().Overlays().Top(); top != nil {
		t.Errorf("Escape left the dialog open (%T)", top)
	}
}

// TestDefaultSizeFitsSmallScreen: the window opens no larger than a
// 1024 × 700 screen, and every screen's content fits in it.
func TestDefaultSizeFitsSmallScreen(t *testing.T) {
	if DefaultSize.Width > 1024 || DefaultSize.Height > 700-40 {
		t.Errorf("default size %v does not fit a 1024×700 screen with a title bar", DefaultSize)
	}
	win, _ := newTestWindow(t)
	for i := range win.Tabs.Items {
		win.Tabs.SelectIndex(i)
		if min := win.Tabs.MinSize(); min.Width > DefaultSize.Width || min.Height > DefaultSize.Height {
			t.Errorf("tab %d needs %v, more than the default %v", i, min, DefaultSize)
		}
	}
}

// TestStateRestoredOnNextStart: a second window over the same
// preferences opens where the first one was left.
func TestStateRestoredOnNextStart(t *testing.T) {
	a := test.NewTempApp(t)
	svc := newFakeService()
	first := Build(a, a.NewWindow("Headroom"), svc, testOptions())
	pick(t, first.CanRun.picker, "70b")
	first.CanRun.hardware.setID("amd-ryzen-ai-max-395")
	first.CanRun.engine.setID("llama.cpp")
	first.CanRun.quant.setID("q4_k_m")
	first.CanRun.kv.setID("q8_0")
	setText(first.CanRun.context, "16k")
	setText(first.CanRun.users, "3")
	setText(first.Plan.prompt, "2048")
	setText(first.Plan.gen, "512")
	setText(first.Plan.users, "12")
	setText(first.Plan.maxTTFT, "3s")
	setText(first.Plan.maxTPOT, "80")
	first.Compare.SetDevices("", "nvidia-rtx-3060")
	first.Compare.metric.SetSelected("tok/s per W")
	first.Tabs.SelectIndex(TabPlan)
	first.wait()
	first.Close()

	second := Build(a, a.NewWindow("Headroom"), svc, testOptions())
	t.Cleanup(second.wait)
	second.wait()
	c := second.CanRun
	checks := []struct{ what, got, want string }{
		{"model", c.picker.model.ID, "meta-llama/Llama-3.1-70B-Instruct"},
		{"plan's model", second.Plan.picker.model.ID, "meta-llama/Llama-3.1-70B-Instruct"},
		{"hardware", c.hardware.id(), "amd-ryzen-ai-max-395"},
		{"engine", c.engine.id(), "llama.cpp"},
		{"format", c.quant.id(), "q4_k_m"},
		{"KV", c.kv.id(), "q8_0"},
		{"context", c.context.Text, "16k"},
		{"users", c.users.Text, "3"},
		{"prompt", second.Plan.prompt.Text, "2048"},
		{"output", second.Plan.gen.Text, "512"},
		{"plan users", second.Plan.users.Text, "12"},
		{"TTFT target", second.Plan.maxTTFT.Text, "3s"},
		{"TPOT target", second.Plan.maxTPOT.Text, "80"},
		{"compare devices", second.Compare.devicesPref(), "@this\nnvidia-rtx-3060"},
		{"chart", second.Compare.metric.Selected, "tok/s per W"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s restored as %q, want %q", ch.what, ch.got, ch.want)
		}
	}
	if got := second.Tabs.SelectedIndex(); got != TabPlan {
		t.Errorf("screen restored as tab %d, want Plan", got)
	}
	if c.fit.Verdict == "" {
		t.Error("the restored inputs were not evaluated")
	}
}
