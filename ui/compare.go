package ui

import (
	"fmt"
	"image"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/headroom-planner/headroom/planner"
)

// compareColumns are the side-by-side table's columns.
var compareColumns = []string{"Device", "Verdict", "Users", "1-user tok/s", "Total tok/s", "tok/s per $1k", "tok/s per W", "Price", "TDP", "Memory", "GB/s", "TTFT", "Best configuration", "Note"}

// compareMetric is one quantity the bar chart can show.
type compareMetric struct {
	label string
	value func(CompareRow) float64
}

var compareMetrics = []compareMetric{
	{"Total tok/s", func(r CompareRow) float64 { return float64(r.Total) }},
	{"1-user tok/s", func(r CompareRow) float64 { return float64(r.SingleUser) }},
	{"tok/s per $1k", func(r CompareRow) float64 { return r.PerKiloUSD }},
	{"tok/s per W", func(r CompareRow) float64 { return r.PerWatt }},
}

// CompareScreen puts several devices side by side for one model and
// workload: the "before buying hardware" screen.
type CompareScreen struct {
	svc Service
	job job

	picker *modelPicker
	engine *selectChoice
	quant  *selectChoice
	users  *entry
	prompt *entry
	gen    *entry

	hwIDs     []string // "" = this machine, then the catalog
	hwNames   []string
	hwShown   []int
	checked   map[string]bool
	hwSearch  *entry
	hwList    *widget.List
	hwCount   *widget.Label
	metric    *choiceSelect
	table     *dataTable
	chart     *chartView
	errLine   errorLabel
	empty     fyne.CanvasObject
	results   fyne.CanvasObject
	rows      []CompareRow
	machineHW string

	// onModelChanged is called when the user picks a model here.
	onModelChanged func(planner.Model)
	// onInput is called after any input changes (the window saves its
	// state).
	onInput func()
	// onOpenFile asks the window for a model file.
	onOpenFile func()

	content fyne.CanvasObject
}

// NewCompareScreen builds the screen; this machine starts checked.
func NewCompareScreen(svc Service, opts Options) *CompareScreen {
	s := &CompareScreen{svc: svc, job: opts.job(true), checked: map[string]bool{"": true}}
	c := svc.Catalog()
	s.picker = newModelPicker(c.Models, 120)
	s.picker.onChanged = func(m planner.Model) {
		if s.onModelChanged != nil {
			s.onModelChanged(m)
		}
		s.update(false)
	}
	s.picker.onOpenFile = func() {
		if s.onOpenFile != nil {
			s.onOpenFile()
		}
	}
	now := func() { s.update(false) }
	typed := func(string) { s.update(true) }
	ids, labels := engineChoices(c)
	s.engine = newSelectChoice(true, ids, labels, now)
	ids, labels = quantChoices(c)
	s.quant = newSelectChoice(true, ids, labels, now)
	s.users = numberEntry("4", "concurrent users", typed)
	s.prompt = numberEntry("1024", "tokens per request", typed)
	s.gen = numberEntry("256", "tokens per answer", typed)
	ids, labels = hardwareChoices(c)
	s.hwIDs = append([]string{""}, ids...)
	s.hwNames = append([]string{thisMachine}, labels...)
	s.build()
	s.filterHardware("")
	return s
}

func (s *CompareScreen) build() {
	s.hwSearch = newEntry()
	s.hwSearch.SetPlaceHolder(fmt.Sprintf("Search %d devices…", len(s.hwIDs)-1))
	s.hwSearch.OnChanged = s.filterHardware
	s.hwList = widget.NewList(
		func() int { return len(s.hwShown) },
		func() fyne.CanvasObject { return widget.NewCheck("NVIDIA GeForce RTX 4090 Ti Super", nil) },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(s.hwShown) {
				return
			}
			k := s.hwShown[i]
			ch := o.(*widget.Check)
			ch.OnChanged = nil
			ch.Text = s.hwNames[k]
			ch.SetChecked(s.checked[s.hwIDs[k]])
			id := s.hwIDs[k]
			ch.OnChanged = func(on bool) { s.setChecked(id, on) }
			ch.Refresh()
		},
	)
	s.hwCount = caption("")
	left := container.NewVBox(
		section("Model", s.picker.content),
		widget.NewSeparator(),
		section("Devices", s.hwCount, s.hwSearch, sized(s.hwList, fyne.NewSize(200, 190))),
		widget.NewSeparator(),
		section("Workload", form(
			formRow("Engine", s.engine.sel),
			formRow("Weights", s.quant.sel),
			formRow("Users", s.users),
			formRow("Prompt", s.prompt),
			formRow("Output", s.gen),
		)),
	)
	s.table = newDataTable(compareColumns,
		[]float32{210, 84, 62, 110, 104, 120, 108, 70, 66, 84, 56, 70, 200, 300}, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	names := make([]string, len(compareMetrics))
	for i, m := range compareMetrics {
		names[i] = m.label
	}
	s.metric = newChoiceSelect(names, func(string) {
		s.drawChart()
		if s.onInput != nil {
			s.onInput()
		}
	})
	s.metric.SetSelectedIndex(0)
	s.chart = newChartView("Nothing to chart yet.", fyne.NewSize(400, 240))
	s.errLine = newErrorLabel()
	s.results = container.NewBorder(
		nil, nil, nil, nil,
		container.NewVSplit(
			s.table.table,
			container.NewBorder(container.NewHBox(widget.NewLabel("Chart"), s.metric), nil, nil, nil, s.chart),
		),
	)
	s.empty, _ = emptyState("Choose a model and tick two or more devices to compare them.")
	s.results.Hide()
	s.errLine.hideOnError(s.results)
	right := container.NewBorder(s.errLine, nil, nil, nil, container.NewStack(s.empty, s.results))
	split := container.NewHSplit(container.NewVScroll(container.NewPadded(left)), container.NewPadded(right))
	split.SetOffset(0.26)
	s.content = split
	s.updateCount()
}

// Content is the screen's root object.
func (s *CompareScreen) Content() fyne.CanvasObject { return s.content }

// OpenModelFile reads a model file off the UI thread and makes it the
// current model.
func (s *CompareScreen) OpenModelFile(path string) {
	s.picker.openFile(s.svc, path, &s.job, s.errLine)
}

// SetModel shows m (chosen on another screen) without telling others.
func (s *CompareScreen) SetModel(m planner.Model) {
	s.picker.set(m)
	s.update(false)
}

// SetMachine relabels "This machine" with the probed device.
func (s *CompareScreen) SetMachine(mv MachineView) {
	s.machineHW = mv.HardwareName
	if mv.HardwareName != "" {
		s.hwNames[0] = thisMachine + " (" + mv.HardwareName + ")"
	}
	s.hwList.Refresh()
	if s.checked[""] {
		s.update(false)
	}
}

// SetDevices checks exactly the given hardware ids ("" = this machine).
func (s *CompareScreen) SetDevices(ids ...string) {
	s.checked = map[string]bool{}
	for _, id := range ids {
		s.checked[id] = true
	}
	s.filterHardware(s.hwSearch.Text)
	s.updateCount()
	s.update(false)
}

// filterHardware lists the devices matching every word of q, the ticked
// ones first. Ticking does not reorder the list (it would move under the
// pointer); the next search or SetDevices does.
func (s *CompareScreen) filterHardware(q string) {
	words := strings.Fields(strings.ToLower(q))
	s.hwShown = s.hwShown[:0]
	var unticked []int
	for i, n := range s.hwNames {
		hay := strings.ToLower(n + " " + s.hwIDs[i])
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(hay, w)
		}
		switch {
		case ok && s.checked[s.hwIDs[i]]:
			s.hwShown = append(s.hwShown, i)
		case ok:
			unticked = append(unticked, i)
		}
	}
	s.hwShown = append(s.hwShown, unticked...)
	s.hwList.Refresh()
}

func (s *CompareScreen) setChecked(id string, on bool) {
	if on {
		s.checked[id] = true
	} else {
		delete(s.checked, id)
	}
	s.updateCount()
	s.update(false)
}

func (s *CompareScreen) updateCount() {
	s.hwCount.SetText(fmt.Sprintf("%d chosen", len(s.checked)))
}

// chosen lists the checked ids in catalog order.
func (s *CompareScreen) chosen() []string {
	var out []string
	for _, id := range s.hwIDs {
		if s.checked[id] {
			out = append(out, id)
		}
	}
	return out
}

// readInput reads the widgets (UI thread).
func (s *CompareScreen) readInput() (CompareInput, error) {
	in := CompareInput{Hardware: s.chosen(), Model: s.picker.model, Engine: s.engine.id(), Quant: s.quant.id()}
	u, err := parseCount(s.users.Text, 1, 4096, "users")
	if err != nil {
		return in, err
	}
	p, err := parseCount(s.prompt.Text, 1024, 10_000_000, "prompt tokens")
	if err != nil {
		return in, err
	}
	g, err := parseCount(s.gen.Text, 256, 1_000_000, "output tokens")
	if err != nil {
		return in, err
	}
	in.Workload = planner.Workload{Prompt: planner.Tokens(p), Gen: planner.Tokens(g), Concurrency: u, Serving: u > 1}
	return in, nil
}

// update recompares: after the debounce delay when typed, at once when
// chosen.
func (s *CompareScreen) update(typed bool) {
	if s.onInput != nil {
		s.onInput()
	}
	if s.picker.model.Layers == 0 || len(s.checked) == 0 {
		s.results.Hide()
		s.empty.Show()
		return
	}
	refresh(&s.job, s.errLine, typed, s.readInput, func(in CompareInput) func() {
		rows, err := s.svc.Compare(in)
		return func() {
			if err != nil {
				s.errLine.set(err)
				return
			}
			s.show(rows)
		}
	})
}

// show applies the comparison (UI thread).
func (s *CompareScreen) show(rows []CompareRow) {
	s.errLine.set(nil)
	s.rows = rows
	s.empty.Hide()
	s.results.Show()
	cells := make([][]string, len(rows))
	imp := make([][]widget.Importance, len(rows))
	for i, r := range rows {
		cells[i] = s.compareCells(r)
		imp[i] = make([]widget.Importance, len(compareColumns))
		imp[i][1] = verdictImportance(r.Verdict)
	}
	s.table.set(cells, imp)
	s.drawChart()
}

func (s *CompareScreen) rowName(r CompareRow) string {
	if r.Hardware == "" {
		if r.Name != "" {
			return "This machine (" + r.Name + ")"
		}
		return thisMachine
	}
	return r.Name
}

// compareCells is one table row.
func (s *CompareScreen) compareCells(r CompareRow) []string {
	money := func(v float64, f string) string {
		if v <= 0 {
			return "–"
		}
		return fmt.Sprintf(f, v)
	}
	users := "–"
	if r.Users > 0 {
		users = strconv.Itoa(r.Users)
	}
	return []string{
		s.rowName(r), string(r.Verdict), users, tps(r.SingleUser), tps(r.Total),
		money(r.PerKiloUSD, "%.1f"), money(r.PerWatt, "%.2f"), money(r.PriceUSD, "$%.0f"), money(r.Watts, "%.0f W"),
		gib(r.Memory), fmt.Sprintf("%.0f", r.BandwidthGBs), ms(r.TTFT), r.Config, r.Note,
	}
}

func verdictImportance(v planner.Verdict) widget.Importance {
	switch v {
	case planner.Fits:
		return widget.SuccessImportance
	case planner.FitsWithOffload, planner.FitsWithLimits:
		return widget.WarningImportance
	}
	return widget.DangerImportance
}

// drawChart charts the chosen metric over the rows that have it.
func (s *CompareScreen) drawChart() {
	if s.chart == nil {
		return
	}
	i := s.metric.SelectedIndex()
	if i < 0 || len(s.rows) == 0 {
		s.chart.set(nil)
		return
	}
	m := compareMetrics[i]
	type bar struct {
		name  string
		value float64
		this  bool
	}
	var bars []bar
	for _, r := range s.rows {
		if v := m.value(r); v > 0 {
			bars = append(bars, bar{s.rowName(r), v, r.Hardware == ""})
		}
	}
	sort.SliceStable(bars, func(i, j int) bool { return bars[i].value > bars[j].value })
	names := make([]string, len(bars))
	values := make([]float64, len(bars))
	highlight := -1
	for i, b := range bars {
		names[i], values[i] = b.name, b.value
		if b.this {
			highlight = i
		}
	}
	if len(names) == 0 {
		s.chart.empty = "No device has a figure for " + m.label + " (a price or power figure may be missing, or nothing fits)."
		s.chart.set(nil)
		return
	}
	title := m.label + " · " + modelName(s.picker.model)
	s.chart.set(func(w, h int, st chartStyle) (image.Image, error) {
		return barChart(title, m.label, names, values, highlight, w, h, st)
	})
}
