package ui

import (
	"fmt"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"

	"github.com/headroom-planner/headroom/planner"
)

// DefaultSize is the window's size when it opens: small enough for a
// 1024 × 700 screen with the window's title bar and a panel.
var DefaultSize = fyne.NewSize(1000, 640)

// defaultDebounce is how long typing must pause before a screen updates.
const defaultDebounce = 150 * time.Millisecond

// Options tune the window; the zero value is what the app uses.
type Options struct {
	// Debounce is how long typing must pause before a screen recomputes
	// (0 = 150 ms; negative = no delay, as tests use).
	Debounce time.Duration
	// Now is the clock used for ages ("calibrated 3 days ago"); nil =
	// time.Now.
	Now func() time.Time
	// NoProbe leaves the machine unprobed until Machine.Refresh is called
	// (tests).
	NoProbe bool
	// Stateless neither restores the last state from the app's
	// preferences nor saves it (screenshots).
	Stateless bool

	// pending counts the screens' unfinished background work (shared by
	// the screens of one window).
	pending *sync.WaitGroup
	// queue, when set, replaces fyne.Do (tests; see uiQueue).
	queue uiQueue
}

// do runs f on the UI thread.
func (o Options) do(f func()) {
	if o.queue != nil {
		o.queue.do(f)
		return
	}
	fyne.Do(f)
}

func (o Options) debounce() time.Duration {
	switch {
	case o.Debounce < 0:
		return 0
	case o.Debounce == 0:
		return defaultDebounce
	}
	return o.Debounce
}

// job returns a background runner for a screen, debounced when typed.
func (o Options) job(debounced bool) job {
	d := time.Duration(0)
	if debounced {
		d = o.debounce()
	}
	return newJob(d, o.pending, o.do)
}

func (o Options) now() func() time.Time {
	if o.Now != nil {
		return o.Now
	}
	return time.Now
}

// Tab indexes, in the order the tabs appear (Ctrl+1 … Ctrl+6).
const (
	TabMachine = iota
	TabCanRun
	TabPlan
	TabCompare
	TabCalibrate
	TabExport
)

// Window is Headroom's main window and its six screens.
type Window struct {
	fyne.Window
	Tabs      *container.AppTabs
	Machine   *MachineScreen
	CanRun    *CanRunScreen
	Plan      *PlanScreen
	Compare   *CompareScreen
	Calibrate *CalibrateScreen
	Export    *ExportScreen

	app     fyne.App
	pending *sync.WaitGroup
	queue   uiQueue

	// prefs keeps the last state (nil = none kept); restoring is set
	// while it is applied, so that applying it does not save half of it.
	prefs     fyne.Preferences
	restoring bool
	// dialog is the file dialog shown, if any (Escape closes it).
	dialog dialog.Dialog
}

// New creates the window on a, builds the screens over svc, sizes it to
// DefaultSize and starts probing the machine. The caller shows it.
func New(a fyne.App, svc Service, opts Options) *Window {
	w := a.NewWindow("Headroom")
	win := Build(a, w, svc, opts)
	w.Resize(DefaultSize)
	return win
}

// Build fills w with the six screens and wires them together.
func Build(a fyne.App, w fyne.Window, svc Service, opts Options) *Window {
	if opts.pending == nil {
		opts.pending = new(sync.WaitGroup)
	}
	win := &Window{
		pending:   opts.pending,
		queue:     opts.queue,
		Window:    w,
		app:       a,
		Machine:   NewMachineScreen(svc, opts),
		CanRun:    NewCanRunScreen(svc, opts),
		Plan:      NewPlanScreen(svc, opts),
		Compare:   NewCompareScreen(svc, opts),
		Calibrate: NewCalibrateScreen(svc, opts),
		Export:    NewExportScreen(svc, opts),
	}
	win.Tabs = container.NewAppTabs(
		container.NewTabItemWithIcon("My machine", theme.ComputerIcon(), win.Machine.Content()),
		container.NewTabItemWithIcon("Can I run it?", theme.QuestionIcon(), win.CanRun.Content()),
		container.NewTabItemWithIcon("Plan", theme.ListIcon(), win.Plan.Content()),
		container.NewTabItemWithIcon("Compare hardware", theme.GridIcon(), win.Compare.Content()),
		container.NewTabItemWithIcon("Calibrate", theme.MediaRecordIcon(), win.Calibrate.Content()),
		container.NewTabItemWithIcon("Export", theme.DocumentSaveIcon(), win.Export.Content()),
	)
	win.wire()
	w.SetContent(win.Tabs)
	win.addShortcuts()
	w.Canvas().SetOnTypedKey(win.typedKey)
	if keepsState(a, opts) {
		win.prefs = a.Preferences()
		win.restoreState(svc.Catalog().Models)
		win.Tabs.OnSelected = func(*container.TabItem) { win.saveState() }
		win.CanRun.onInput = win.saveState
		win.Plan.onInput = win.saveState
		win.Compare.onInput = win.saveState
	}
	if !opts.NoProbe {
		win.Machine.Refresh()
	}
	return win
}

// wire connects the screens' callbacks.
func (win *Window) wire() {
	win.Machine.onMachine = func(mv MachineView) {
		win.CanRun.SetMachine(mv)
		win.Plan.SetMachine(mv)
		win.Compare.SetMachine(mv)
	}
	win.Machine.onCalibrate = func() { win.Tabs.SelectIndex(TabCalibrate) }
	win.Calibrate.onCalibrated = func(CalibrationView) { win.Machine.Refresh() }

	win.CanRun.onModelChanged = func(m planner.Model) {
		win.Plan.SetModel(m)
		win.Compare.SetModel(m)
	}
	win.Plan.onModelChanged = func(m planner.Model) {
		win.CanRun.SetModel(m)
		win.Compare.SetModel(m)
	}
	win.Compare.onModelChanged = func(m planner.Model) {
		win.CanRun.SetModel(m)
		win.Plan.SetModel(m)
	}
	win.CanRun.onOpenFile = func() { win.openModelDialog(win.CanRun.OpenModelFile) }
	win.Plan.onOpenFile = func() { win.openModelDialog(win.Plan.OpenModelFile) }
	win.Compare.onOpenFile = func() { win.openModelDialog(win.Compare.OpenModelFile) }

	win.Plan.onExport = func(r PlanRow) {
		win.Export.SetRow(r)
		win.Tabs.SelectIndex(TabExport)
	}
	win.Export.clipboard = win.app.Clipboard()
	win.Export.onSave = win.saveDialog
}

// addShortcuts binds Ctrl+1 … Ctrl+6 to the tabs and Ctrl+Q to quit.
func (win *Window) addShortcuts() {
	keys := []fyne.KeyName{fyne.Key1, fyne.Key2, fyne.Key3, fyne.Key4, fyne.Key5, fyne.Key6}
	for i, k := range keys {
		win.Canvas().AddShortcut(&desktop.CustomShortcut{KeyName: k, Modifier: fyne.KeyModifierShortcutDefault},
			func(fyne.Shortcut) { win.Tabs.SelectIndex(i) })
	}
	win.Canvas().AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyQ, Modifier: fyne.KeyModifierShortcutDefault},
		func(fyne.Shortcut) { win.app.Quit() })
}

// typedKey handles the keys no focused widget took: Escape closes the
// file dialog.
func (win *Window) typedKey(ev *fyne.KeyEvent) {
	if ev.Name == fyne.KeyEscape && win.dialog != nil {
		win.dialog.Hide()
		win.dialog = nil
	}
}

// showDialog shows d as the window's file dialog; Escape closes it.
func (win *Window) showDialog(d dialog.Dialog) {
	d.SetOnClosed(func() {
		if win.dialog == d {
			win.dialog = nil
		}
	})
	win.dialog = d
	d.Resize(fyne.NewSize(min(800, win.Canvas().Size().Width-40), min(560, win.Canvas().Size().Height-40)))
	d.Show()
	// Nothing in the dialog has focus yet: keys reach typedKey.
	win.Canvas().Unfocus()
}

// openModelDialog asks for a GGUF file or config.json and passes its path
// to open.
func (win *Window) openModelDialog(open func(path string)) {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		path := r.URI().Path()
		_ = r.Close()
		open(path)
	}, win.Window)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".gguf", ".json"}))
	win.showDialog(d)
}

// saveDialog asks where to save data, suggesting name.
func (win *Window) saveDialog(name string, data []byte) {
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil {
			win.Export.Saved("", err)
			return
		}
		if wc == nil {
			return
		}
		_, werr := wc.Write(data)
		cerr := wc.Close()
		if werr == nil {
			werr = cerr
		}
		if werr != nil {
			win.Export.Saved("", fmt.Errorf("%s: %w", wc.URI().Path(), werr))
			return
		}
		win.Export.Saved(wc.URI().Path(), nil)
	}, win.Window)
	d.SetFileName(name)
	win.showDialog(d)
}

// wait blocks until no screen has background work left (tests and
// screenshots; never on the UI thread of a real driver).
func (win *Window) wait() {
	if win.queue != nil {
		win.queue.drain(win.pending)
		return
	}
	win.pending.Wait()
}
