package ui

import (
	"fmt"
	"image"
	"image/color"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

// compareColumns are the side-by-side table's columns.
//
// "tok/s, 1 user alone" is the device's speed for a single user (its best
// configuration for one user, TTFT included): it does not change with the
// users asked for. "tok/s, all users" is the output of every user served
// together, with the configuration best for that many.
var compareColumns = []string{"Device", "Verdict", "Users served", "tok/s, 1 user alone", "tok/s, all users", "Best configuration", "Note",
	"tok/s per $1k", "tok/s per W", "Price", "TDP", "Memory", "GB/s", "TTFT"}

// compareNumeric are the columns of figures (right-aligned, sorted by
// value).
var compareNumeric = []int{2, 3, 4, 7, 8, 9, 10, 11, 12, 13}

// compareMetric is one quantity the bar chart can show.
type compareMetric struct {
	label string
	value func(CompareRow) float64
}

var compareMetrics = []compareMetric{
	{"tok/s, all users", func(r CompareRow) float64 { return float64(r.Total) }},
	{"tok/s, 1 user alone", func(r CompareRow) float64 { return float64(r.SingleUser) }},
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
	hw        []planner.Hardware // by index of hwIDs; [0] is this machine (zero)
	hwShown   []int
	checked   map[string]bool
	hwSearch  *entry
	hwList    *widget.List
	hwCount   *widget.Label
	metric    *choiceSelect
	table     *dataTable
	detail    *widget.Label
	chart     *chartView
	errLine   errorLabel
	empty     fyne.CanvasObject
	results   fyne.CanvasObject
	rows      []CompareRow
	asked     int // the users the rows were computed for
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
	s.picker.onOpenRef = s.OpenModelFile
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
	s.prompt = numberEntry("1024", "per request", typed)
	s.gen = numberEntry("256", "per answer", typed)
	ids, labels = hardwareChoices(c)
	s.hw = append([]planner.Hardware{{}}, c.Hardware...)
	s.hwIDs = append([]string{""}, ids...)
	s.hwNames = append([]string{thisMachine}, labels...)
	s.build()
	s.filterHardware("")
	return s
}

func (s *CompareScreen) build() {
	s.hwSearch = newEntry()
	s.hwSearch.SetPlaceHolder(fmt.Sprintf("Search %d: name, >=48gb, <$2000", len(s.hwIDs)-1))
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
			formRow("Users", withUnit(s.users, "at once")),
			formRow("Prompt", withUnit(s.prompt, "tokens")),
			formRow("Output", withUnit(s.gen, "tokens")),
		)),
	)
	s.table = newDataTable(compareColumns, compareNumeric...)
	s.table.onSelect = s.selectRow
	s.detail = widget.NewLabel("Select a row for its full note.")
	s.detail.Wrapping = fyne.TextWrapWord
	s.detail.Selectable = true
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
			container.NewBorder(nil, s.detail, nil, nil, s.table.content),
			container.NewBorder(container.NewHBox(widget.NewLabel("Chart"), sized(s.metric, fyne.NewSize(220, 0))), nil, nil, nil, s.chart),
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
	hq := app.ParseHardwareQuery(q)
	// This machine's memory and price are not known here: only the words
	// of the search apply to it.
	words := hq.WordsOnly()
	s.hwShown = s.hwShown[:0]
	var unticked []int
	for i, n := range s.hwNames {
		ok := hq.Matches(s.hw[i], n)
		if i == 0 {
			ok = words.Matches(s.hw[i], n)
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
			s.asked = in.Workload.Concurrency
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
	s.detail.SetText("Select a row for its full note.")
	s.drawChart()
}

// selectRow shows row i's details below the table.
func (s *CompareScreen) selectRow(i int) {
	if i < 0 || i >= len(s.rows) {
		return
	}
	s.detail.SetText(compareDetail(s.rowName(s.rows[i]), s.rows[i], s.asked))
}

// compareDetail is the detail pane's text for a row: the verdict, the
// configuration, what each speed means, and the full note.
func compareDetail(name string, r CompareRow, asked int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", name, verdictText(r.Verdict))
	if r.Config != "" {
		fmt.Fprintf(&b, " with %s", r.Config)
	}
	if r.Verdict != planner.DoesNotFit {
		fmt.Fprintf(&b, "\n%s tok/s for one user alone (TTFT included)", tps(r.SingleUser))
		if r.Users > 0 {
			fmt.Fprintf(&b, "; %s tok/s for %s together, TTFT %s", tps(r.Total), usersText(r.Users), ms(r.TTFT))
		}
		if r.Users > 0 && r.Users < asked {
			fmt.Fprintf(&b, "\nServes %d of the %d users asked for within the target.", r.Users, asked)
		}
		if r.Source != "" {
			fmt.Fprintf(&b, " (%s)", sourceLabel(r.Source))
		}
	}
	if r.PriceUSD <= 0 {
		b.WriteString("\nNo price in the catalog: no tok/s per $1k.")
	}
	if r.Note != "" {
		b.WriteString("\n" + r.Note)
	}
	return b.String()
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
	switch {
	case r.Users > 0 && r.Users < s.asked:
		users = fmt.Sprintf("%d of %d", r.Users, s.asked)
	case r.Users > 0:
		users = strconv.Itoa(r.Users)
	}
	perKilo := money(r.PerKiloUSD, "%.1f")
	if r.PriceUSD <= 0 {
		perKilo = "no price"
	}
	return []string{
		s.rowName(r), verdictText(r.Verdict), users, tps(r.SingleUser), tps(r.Total), r.Config, r.Note,
		perKilo, money(r.PerWatt, "%.2f"), money(r.PriceUSD, "$%.0f"), money(r.Watts, "%.0f W"),
		gib(r.Memory), fmt.Sprintf("%.0f", r.BandwidthGBs), ms(r.TTFT),
	}
}

// verdictImportance colours a verdict, one colour per state: green fits,
// orange fits with limits, blue fits with offload, red does not fit.
func verdictImportance(v planner.Verdict) widget.Importance {
	switch v {
	case planner.Fits:
		return widget.SuccessImportance
	case planner.FitsWithLimits:
		return widget.WarningImportance
	case planner.FitsWithOffload:
		return widget.HighImportance
	}
	return widget.DangerImportance
}

// drawChart charts the chosen metric for every row: bars coloured by
// verdict, and a row without the figure named with why ("no price", "no
// TDP figure", "does not fit", "misses target") instead of left out.
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
	bars := chartBars(s.rows, m, s.rowName)
	names := make([]string, len(bars))
	values := make([]float64, len(bars))
	colors := make([]color.Color, len(bars))
	seen := map[planner.Verdict]bool{}
	for i, b := range bars {
		names[i], values[i], colors[i] = b.name, b.value, verdictColor(b.verdict)
		seen[b.verdict] = true
	}
	var legend []legendEntry
	for _, v := range []planner.Verdict{planner.Fits, planner.FitsWithLimits, planner.FitsWithOffload, planner.DoesNotFit} {
		if seen[v] {
			legend = append(legend, legendEntry{verdictText(v), verdictColor(v)})
		}
	}
	title := m.label + " · " + modelName(s.picker.model)
	s.chart.set(func(w, h int, st chartStyle) (image.Image, error) {
		return coloredBarChart(title, m.label, names, values, colors, legend, w, h, st)
	})
}

// chartBar is one device's bar in the compare chart.
type chartBar struct {
	name    string
	value   float64
	verdict planner.Verdict
}

// chartBars are the rows as bars of metric m, largest first; a row
// without the figure keeps its place at the end with a note on why.
func chartBars(rows []CompareRow, m compareMetric, name func(CompareRow) string) []chartBar {
	var with, without []chartBar
	for _, r := range rows {
		b := chartBar{name: name(r), value: m.value(r), verdict: r.Verdict}
		if b.value > 0 {
			with = append(with, b)
			continue
		}
		b.value = 0
		b.name += " (" + missingWhy(r, m) + ")"
		without = append(without, b)
	}
	sort.SliceStable(with, func(i, j int) bool { return with[i].value > with[j].value })
	return append(with, without...)
}

// missingWhy says why a row has no figure for metric m.
func missingWhy(r CompareRow, m compareMetric) string {
	switch {
	case r.Verdict == planner.DoesNotFit:
		return "does not fit"
	case m.label == "tok/s per $1k" && r.PriceUSD <= 0:
		return "no price"
	case m.label == "tok/s per W" && r.Watts <= 0:
		return "no TDP figure"
	}
	return "misses target"
}

// verdictColor is a verdict's colour in charts, as verdictImportance
// colours it in tables.
func verdictColor(v planner.Verdict) color.Color {
	switch v {
	case planner.Fits:
		return palette.good
	case planner.FitsWithLimits:
		return palette.warn
	case planner.FitsWithOffload:
		return palette.offload
	}
	return palette.bad
}
