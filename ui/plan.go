package ui

import (
	"fmt"
	"image"
	"math"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/headroom-planner/headroom/planner"
)

// planColumns are the ranked table's columns.
var planColumns = []string{"#", "Verdict", "Engine", "Weights", "KV", "Users served", "Context", "TTFT", "TPOT", "tok/s per user", "tok/s in all", "vs #1", "Source"}

// planUsersColumn is the index of "Users" (the engine's slots at a rate).
const planUsersColumn = 5

// PlanScreen turns a workload and latency target into ranked
// configurations, with charts of throughput and TTFT against concurrency
// for the chosen one.
type PlanScreen struct {
	svc      Service
	job      job
	curveJob job

	picker   *modelPicker
	hardware *hardwarePicker
	devices  *selectChoice
	nodes    *selectChoice
	engine   *selectChoice
	quant    *selectChoice
	prompt   *entry
	gen      *entry
	users    *entry
	rate     *entry
	burst    *entry
	offline  *widget.Check
	maxTTFT  *entry
	maxTPOT  *entry

	summary    *widget.Label
	table      *dataTable
	detail     *widget.Label
	throughput *chartView
	ttft       *chartView
	// chartKey names the row the charts show and its verdict, in the
	// verdict's colour (the charts' legend for the four states).
	chartKey *widget.Label
	export   *widget.Button
	errLine  errorLabel
	empty    fyne.CanvasObject
	results  fyne.CanvasObject

	// onModelChanged is called when the user picks a model here.
	onModelChanged func(planner.Model)
	// onInput is called after any input changes (the window saves its
	// state).
	onInput func()
	// onOpenFile asks the window for a model file.
	onOpenFile func()
	// onExport is called with the chosen row by the Export button.
	onExport func(PlanRow)

	view     PlanView // last plan shown
	selected int      // index into view.Rows, -1 = none
	input    PlanInput
	curve    []curvePoint
	content  fyne.CanvasObject
}

// NewPlanScreen builds the screen over svc's catalog.
func NewPlanScreen(svc Service, opts Options) *PlanScreen {
	s := &PlanScreen{svc: svc, job: opts.job(true), curveJob: opts.job(false), selected: -1}
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
	s.hardware = newHardwareSelect(c, now)
	s.devices = newSelectChoice(false, []string{"1", "2", "4", "8"}, []string{"1", "2", "4", "8"}, now)
	s.nodes = newSelectChoice(false, []string{"1", "2", "4", "8"}, []string{"1", "2", "4", "8"}, now)
	ids, labels := engineChoices(c)
	s.engine = newSelectChoice(true, ids, labels, now)
	ids, labels = quantChoices(c)
	s.quant = newSelectChoice(true, ids, labels, now)
	s.prompt = numberEntry("1024", "per request", typed)
	s.gen = numberEntry("256", "per answer", typed)
	s.users = numberEntry("8", "peak concurrent users", typed)
	s.rate = numberEntry("", "req/s at random, e.g. 2 or 90/min", func(string) {
		s.syncArrivals()
		s.update(true)
	})
	s.burst = numberEntry("", "prompts sent together, e.g. 500", func(string) {
		s.syncArrivals()
		s.update(true)
	})
	s.offline = widget.NewCheck("the largest batch it runs", func(bool) {
		s.syncArrivals()
		s.update(false)
	})
	s.maxTTFT = numberEntry("2000", "empty = no target", typed)
	s.maxTPOT = numberEntry("100", "empty = no target", typed)
	s.build()
	return s
}

// syncArrivals greys out the arrival patterns another overrides, as
// `--workload` takes one of users=, rate=, burst= and offline: an offline
// batch over a burst, a burst over a rate, a rate over users in a loop.
func (s *PlanScreen) syncArrivals() {
	off := s.offline.Checked
	burst := !off && strings.TrimSpace(s.burst.Text) != ""
	rate := !off && !burst && strings.TrimSpace(s.rate.Text) != ""
	enable(s.users, !off && !burst && !rate)
	enable(s.rate, !off && !burst)
	enable(s.burst, !off)
}

// enable enables or disables a widget.
func enable(w fyne.Disableable, on bool) {
	if on {
		w.Enable()
	} else {
		w.Disable()
	}
}

// numberEntry is an entry with a starting value and a placeholder.
func numberEntry(value, placeholder string, changed func(string)) *entry {
	e := newEntry()
	e.SetText(value)
	e.SetPlaceHolder(placeholder)
	e.OnChanged = changed
	return e
}

func (s *PlanScreen) build() {
	left := container.NewVBox(
		section("Model", s.picker.content),
		widget.NewSeparator(),
		section("Hardware", form(
			formRow("Device", s.hardware.sel),
			formRow("Find", s.hardware.find),
			formRow("Devices", s.devices.sel),
			formRow("Nodes", s.nodes.sel),
			formRow("Engine", s.engine.sel),
			formRow("Weights", s.quant.sel),
		)),
		widget.NewSeparator(),
		section("Workload", form(
			formRow("Prompt", withUnit(s.prompt, "tokens")),
			formRow("Output", withUnit(s.gen, "tokens")),
			formRow("Users", withUnit(s.users, "at once")),
			formRow("or Rate", withUnit(s.rate, "req/s")),
			formRow("or Burst", withUnit(s.burst, "prompts")),
			formRow("or Offline", s.offline),
		)),
		section("Latency target", form(
			formRow("TTFT ≤", withUnit(s.maxTTFT, "ms")),
			formRow("TPOT ≤", withUnit(s.maxTPOT, "ms")),
		), caption("TTFT: time to the first token. TPOT: time per output token after it. \"2s\" is 2000 ms.")),
	)
	s.summary = widget.NewLabel("")
	s.summary.Wrapping = fyne.TextWrapWord
	s.summary.TextStyle.Bold = true
	s.table = newDataTable(planColumns, 0, 5, 6, 7, 8, 9, 10, 11)
	s.table.onSelect = s.selectRow
	s.detail = widget.NewLabel("")
	s.detail.Wrapping = fyne.TextWrapWord
	s.detail.Selectable = true
	s.chartKey = widget.NewLabel("")
	s.chartKey.TextStyle.Bold = true
	s.throughput = newChartView("Choose a row to chart it.", fyne.NewSize(300, 230))
	s.ttft = newChartView("Choose a row to chart it.", fyne.NewSize(300, 230))
	s.export = widget.NewButtonWithIcon("Export this plan…", theme.DocumentSaveIcon(), func() {
		if s.onExport != nil && s.selected >= 0 && s.selected < len(s.view.Rows) {
			s.onExport(s.view.Rows[s.selected])
		}
	})
	s.export.Importance = widget.HighImportance
	s.export.Disable()
	s.errLine = newErrorLabel()

	lower := container.NewBorder(
		container.NewBorder(nil, nil, nil, container.NewVBox(s.export), sized(container.NewVScroll(s.detail), fyne.NewSize(0, 96))), nil, nil, nil,
		container.NewBorder(s.chartKey, nil, nil, nil, container.NewGridWithColumns(2, s.throughput, s.ttft)),
	)
	tableSplit := container.NewVSplit(sized(s.table.content, fyne.NewSize(400, 160)), lower)
	tableSplit.SetOffset(0.42)
	s.results = container.NewBorder(s.summary, nil, nil, nil, tableSplit)
	s.empty, _ = emptyState("Choose a model on the left to plan for it.")
	s.results.Hide()
	s.errLine.hideOnError(s.results)
	right := container.NewBorder(s.errLine, nil, nil, nil, container.NewStack(s.empty, s.results))
	split := container.NewHSplit(container.NewVScroll(container.NewPadded(left)), container.NewPadded(right))
	split.SetOffset(0.26)
	s.content = split
}

// Content is the screen's root object.
func (s *PlanScreen) Content() fyne.CanvasObject { return s.content }

// OpenModelFile reads a model file off the UI thread and makes it the
// current model.
func (s *PlanScreen) OpenModelFile(path string) {
	s.picker.openFile(s.svc, path, &s.job, s.errLine)
}

// SetModel shows m (chosen on another screen) without telling others.
func (s *PlanScreen) SetModel(m planner.Model) {
	s.picker.set(m)
	s.update(false)
}

// SetMachine relabels "This machine" with the probed device.
func (s *PlanScreen) SetMachine(mv MachineView) {
	s.hardware.setMachineName(mv.HardwareName)
	if s.hardware.id() == "" {
		s.update(false)
	}
}

// readInput reads the widgets (UI thread).
func (s *PlanScreen) readInput() (PlanInput, error) {
	var in PlanInput
	in.Scenario = ScenarioInput{Model: s.picker.model, Hardware: s.hardware.id(), Engine: s.engine.id(), Quant: s.quant.id()}
	var err error
	if in.Scenario.Devices, err = parseCount(s.devices.id(), 1, 64, "devices"); err != nil {
		return in, err
	}
	if in.Scenario.Nodes, err = parseCount(s.nodes.id(), 1, 64, "nodes"); err != nil {
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
	u, err := parseCount(s.users.Text, 1, 4096, "users")
	if err != nil {
		return in, err
	}
	in.Scenario.Users = u
	in.Workload = planner.Workload{Prompt: planner.Tokens(p), Gen: planner.Tokens(g), Concurrency: u, Serving: true}
	// One arrival pattern, as planner.ParseWorkload reads them: offline,
	// else a burst, else a rate, else users in a loop (syncArrivals).
	switch {
	case s.offline.Checked:
		in.Workload.Kind, in.Workload.Concurrency, in.Workload.Saturate = planner.WorkloadOffline, 1, true
		in.Scenario.Users = 1
	case strings.TrimSpace(s.burst.Text) != "":
		n, err := parseCount(s.burst.Text, 1, planner.MaxWorkloadRequests, "prompts at once")
		if err != nil {
			return in, err
		}
		in.Workload.Kind, in.Workload.Burst, in.Workload.Concurrency = planner.WorkloadBurst, n, n
		in.Scenario.Users = n
	case strings.TrimSpace(s.rate.Text) != "":
		t := strings.TrimSpace(s.rate.Text)
		r, err := planner.ParseRate(t)
		if err != nil {
			return in, fmt.Errorf("rate %q: %v", t, err)
		}
		in.Workload.Rate = r
	}
	if in.MaxTTFT, err = parseMillis(s.maxTTFT.Text, "TTFT target"); err != nil {
		return in, err
	}
	if in.MaxTPOT, err = parseMillis(s.maxTPOT.Text, "TPOT target"); err != nil {
		return in, err
	}
	return in, nil
}

// update replans: after the debounce delay when typed, at once when chosen.
func (s *PlanScreen) update(typed bool) {
	if s.onInput != nil {
		s.onInput()
	}
	if s.picker.model.Layers == 0 {
		s.results.Hide()
		s.empty.Show()
		return
	}
	refresh(&s.job, s.errLine, typed, s.readInput, s.compute)
}

// compute plans (any goroutine) and returns what to apply. The first row's
// curve is computed here too, so a new plan appears with its charts.
func (s *PlanScreen) compute(in PlanInput) func() {
	v, err := s.svc.Plan(in)
	if err != nil {
		return func() { s.errLine.set(err) }
	}
	var curve []curvePoint
	if len(v.Rows) > 0 {
		curve = s.curveFor(v.Rows[firstShown(v, in)], in)
	}
	return func() { s.show(in, v, curve) }
}

// firstShown is the row a new plan opens on: the best, or when nothing
// meets the target the closest miss (closestRow), which the summary names.
func firstShown(v PlanView, in PlanInput) int {
	if len(v.Rows) > 0 && !v.Rows[0].MeetsSLO {
		if c := closestRow(v, in); c >= 0 {
			return c
		}
	}
	return 0
}

// concurrencies are the points of a curve: powers of two up to twice the
// peak users (at least 16, at most 1024), and the peak itself.
func concurrencies(users int) []int {
	top := min(max(2*users, 16), 1024)
	var out []int
	for c := 1; c <= top; c *= 2 {
		if users > c/2 && users < c {
			out = append(out, users)
		}
		out = append(out, c)
	}
	return out
}

// curveFor predicts a row's workload over concurrencies (any goroutine);
// a configuration that does not fit has no curve.
func (s *PlanScreen) curveFor(r PlanRow, in PlanInput) []curvePoint {
	if !r.Fits {
		return nil
	}
	w := r.Workload
	if w.Prompt == 0 && w.Gen == 0 {
		w = in.Workload
	}
	peak := in.Workload.Concurrency
	if w.Rate > 0 || w.RunsAtOnce() {
		// The curve is closed-loop, up to the slots the rate needs or
		// the sequences a burst or an offline batch runs at once.
		peak, w.Rate, w.Burst, w.Saturate, w.Kind = max(r.Concurrency, 1), 0, 0, false, planner.WorkloadClosed
	}
	cs := concurrencies(peak)
	ps := s.svc.Curve(r.Scenario, w, cs)
	out := make([]curvePoint, 0, len(ps))
	for i, p := range ps {
		c := p.Concurrency
		if c == 0 && i < len(cs) {
			c = cs[i]
		}
		out = append(out, curvePoint{Concurrency: c, Total: float64(p.TotalTPS), PerUser: float64(perUser(p)), TTFT: float64(p.TTFT)})
	}
	return out
}

// show applies a plan (UI thread).
func (s *PlanScreen) show(in PlanInput, v PlanView, curve []curvePoint) {
	s.errLine.set(nil)
	s.empty.Hide()
	s.results.Show()
	s.view, s.input = v, in
	cells := make([][]string, len(v.Rows))
	imp := make([][]widget.Importance, len(v.Rows))
	for i, r := range v.Rows {
		cells[i] = planCells(r, v, in)
		imp[i] = make([]widget.Importance, len(planColumns))
		imp[i][1] = verdictImportance(rowVerdict(r, in))
	}
	// At a rate the engine is given slots, not a number of users; a
	// burst or an offline batch runs some number at once.
	switch {
	case in.Workload.Rate > 0:
		s.table.setHeader(planUsersColumn, "Slots")
	case in.Workload.RunsAtOnce():
		s.table.setHeader(planUsersColumn, "At once")
	default:
		s.table.setHeader(planUsersColumn, planColumns[planUsersColumn])
	}
	s.table.set(cells, imp)
	s.summary.SetText(planSummary(v, in))
	s.selected = -1
	if len(v.Rows) == 0 {
		s.detail.SetText(bulletText(v.Notes, ""))
		s.export.Disable()
		s.throughput.set(nil)
		s.ttft.set(nil)
		s.chartKey.SetText("")
		return
	}
	s.applyRow(firstShown(v, in), curve)
}

// planCells is one table row.
func planCells(r PlanRow, v PlanView, in PlanInput) []string {
	band := ""
	if r.ErrorBand > 0 {
		band = fmt.Sprintf(" ±%.0f%%", r.ErrorBand)
	}
	users := strconv.Itoa(r.Concurrency)
	if r.Concurrency <= 0 {
		users = "–"
	}
	return []string{
		strconv.Itoa(r.Rank), statusText(r, in), r.Engine, r.Quant, r.KV, users, tokens(r.Context),
		ms(r.TTFT), ms(r.TPOT), tps(r.PerUser), tps(r.Total), vsBest(r, v, in), r.Source + band,
	}
}

// rowVerdict is a plan row's state among the four every screen shows: it
// does not fit; it fits with limits when it misses the latency target or
// serves fewer users than asked; it fits with offload when weights stream
// from system RAM; else it fits.
func rowVerdict(r PlanRow, in PlanInput) planner.Verdict {
	switch {
	case !r.Fits:
		return planner.DoesNotFit
	case !r.MeetsSLO || servesFewer(r, in):
		return planner.FitsWithLimits
	case r.Candidate.Fit.Verdict == planner.FitsWithOffload:
		return planner.FitsWithOffload
	}
	return planner.Fits
}

// servesFewer reports whether a row serves fewer users at once than the
// workload asks for (never at an arrival rate, where it is given slots,
// nor for a burst or an offline batch, whose prompts wait for a slot).
func servesFewer(r PlanRow, in PlanInput) bool {
	return in.Workload.Rate == 0 && !in.Workload.RunsAtOnce() && r.Concurrency < in.Workload.Concurrency
}

// makespanText is how long a burst of n prompts takes to answer
// (Prediction.Makespan; "–" when unknown).
func makespanText(n int, r PlanRow) string {
	if t := r.Candidate.Pred.Makespan(n); t > 0 {
		return ms(t)
	}
	return "–"
}

// statusText is the Verdict cell: the verdict and, for limits, which.
func statusText(r PlanRow, in PlanInput) string {
	v := rowVerdict(r, in)
	switch {
	case v != planner.FitsWithLimits:
		return verdictText(v)
	case !r.MeetsSLO:
		return "fits with limits: misses target"
	}
	return fmt.Sprintf("fits with limits: %d of %d users", r.Concurrency, in.Workload.Concurrency)
}

// verdictText is a verdict as the tables write it.
func verdictText(v planner.Verdict) string {
	switch v {
	case planner.Fits:
		return "fits"
	case planner.FitsWithLimits:
		return "fits with limits"
	case planner.FitsWithOffload:
		return "fits with offload"
	case planner.DoesNotFit:
		return "does not fit"
	}
	return string(v)
}

// tieText says that a figure is within the error band of the best one.
func tieText(band float64) string { return fmt.Sprintf("≈ tie within ±%.0f%%", band) }

// vsBest compares a row's total throughput with the first row's: "best",
// "≈ tie within ±10%" when the difference is inside the rows' error band
// (the model cannot tell them apart), else the difference in percent.
// Rows that miss the target or do not fit, and plans at a rate (where
// every row that keeps up delivers the same), show "–".
func vsBest(r PlanRow, v PlanView, in PlanInput) string {
	if len(v.Rows) == 0 || in.Workload.Rate > 0 || !r.MeetsSLO || !v.Rows[0].MeetsSLO {
		return "–"
	}
	best := v.Rows[0]
	if r.Rank == best.Rank {
		return "best"
	}
	if best.Total <= 0 {
		return "–"
	}
	diff := 100 * (float64(r.Total)/float64(best.Total) - 1)
	if band := max(r.ErrorBand, best.ErrorBand); band > 0 && math.Abs(diff) <= band {
		return tieText(band)
	}
	return fmt.Sprintf("%+.0f%%", diff)
}

// tiesWithBest counts the rows after the first whose total is within the
// error band of the first's.
func tiesWithBest(v PlanView, in PlanInput) int {
	n := 0
	for _, r := range v.Rows[1:] {
		if strings.HasPrefix(vsBest(r, v, in), "≈") {
			n++
		}
	}
	return n
}

// qualityNote is a word on what a weight format costs in quality, by its
// bits per weight ("" for 6 bits and more, where the loss is negligible).
func qualityNote(bpw float64) string {
	switch {
	case bpw <= 0 || bpw >= 6:
		return ""
	case bpw >= 4.9:
		return "5-bit: very small quality loss"
	case bpw >= 3.9:
		return "4-bit: small quality loss"
	}
	return "sub-4-bit: noticeable quality loss"
}

// rowQuality is a row's quality note ("" when none or unknown).
func rowQuality(r PlanRow) string {
	if r.Candidate.Scenario == nil {
		return ""
	}
	return qualityNote(r.Candidate.Scenario.Quant.LinearBPW)
}

// weightsText is a row's format with its quality note: "q4_0 (4-bit:
// small quality loss)".
func weightsText(r PlanRow) string {
	if q := rowQuality(r); q != "" {
		return r.Quant + " (" + q + ")"
	}
	return r.Quant
}

// closestRow is the row that misses the target by the least: the
// smallest ratio of predicted to target latency over the terms the target
// sets (TTFT, TPOT), among the rows that fit. It is -1 when none fits.
func closestRow(v PlanView, in PlanInput) int {
	best, bestMiss := -1, math.Inf(1)
	for i, r := range v.Rows {
		if !r.Fits {
			continue
		}
		miss := 0.0
		if in.MaxTTFT > 0 && r.TTFT > 0 {
			miss = max(miss, float64(r.TTFT)/float64(in.MaxTTFT))
		}
		if in.MaxTPOT > 0 && r.TPOT > 0 {
			miss = max(miss, float64(r.TPOT)/float64(in.MaxTPOT))
		}
		if miss < bestMiss {
			best, bestMiss = i, miss
		}
	}
	return best
}

// missText says by how much a row misses the target: "TPOT 131 ms vs
// 100 ms (+31%)".
func missText(r PlanRow, in PlanInput) string {
	var parts []string
	add := func(name string, got, target planner.Milliseconds) {
		if target > 0 && got > target {
			parts = append(parts, fmt.Sprintf("%s %s vs %s (+%.0f%%)", name, ms(got), ms(target), 100*(float64(got)/float64(target)-1)))
		}
	}
	add("TTFT", r.TTFT, in.MaxTTFT)
	add("TPOT", r.TPOT, in.MaxTPOT)
	if len(parts) == 0 {
		return "misses the target"
	}
	return strings.Join(parts, ", ")
}

// planSummary is the headline above the table.
func planSummary(v PlanView, in PlanInput) string {
	if len(v.Rows) == 0 {
		return "No configuration of this model runs on " + v.Hardware + "."
	}
	r := v.Rows[0]
	if f := r.Candidate.Fleet; !r.MeetsSLO && r.Fits && f != nil && f.Replicas > 1 {
		within := "within the target"
		if !f.MeetsSLO {
			within = "still missing the target"
		}
		return fmt.Sprintf("%s is more than one server on %s can take. Best: %s with %s weights as %s: TTFT %s, TPOT %s per replica, %s.",
			rateText(in.Workload.Rate), v.Hardware, r.Engine, weightsText(r), loadText(r), ms(f.Pred.TTFT), ms(f.Pred.TPOT), within)
	}
	if !r.MeetsSLO {
		i := closestRow(v, in)
		if i < 0 {
			return "No configuration of this model fits on " + v.Hardware + "."
		}
		c := v.Rows[i]
		return fmt.Sprintf("Nothing meets the target on %s. Closest (#%d): %s with %s weights, even with 1 user: %s.",
			v.Hardware, c.Rank, c.Engine, weightsText(c), missText(c, in))
	}
	var b strings.Builder
	if w := in.Workload; w.Burst > 1 {
		fmt.Fprintf(&b, "Best on %s for %d prompts at once: %s with %s weights, all answered in %s (%s tok/s in all), %d at a time",
			v.Hardware, w.Burst, r.Engine, weightsText(r), makespanText(w.Burst, r), tps(r.Total), r.Concurrency)
		if r.Concurrency < w.Burst {
			fmt.Fprintf(&b, ", the other %d waiting for a slot", w.Burst-r.Concurrency)
		}
		fmt.Fprintf(&b, "; mean TTFT %s with the wait.", ms(r.TTFT))
	} else if w.Offline() {
		fmt.Fprintf(&b, "Best on %s for an offline batch: %s with %s weights, %d sequences at once (its largest batch): %s tok/s in all, TTFT %s.",
			v.Hardware, r.Engine, weightsText(r), r.Concurrency, tps(r.Total), ms(r.TTFT))
	} else if rate := in.Workload.Rate; rate > 0 {
		fmt.Fprintf(&b, "Best on %s at %s: %s with %s weights, %s: %s tok/s per user, %s tok/s in all, TTFT %s.",
			v.Hardware, rateText(rate), r.Engine, weightsText(r), loadText(r), tps(r.PerUser), tps(r.Total), ms(r.TTFT))
	} else {
		fmt.Fprintf(&b, "Best on %s: %s with %s weights, %s: %s tok/s per user, %s tok/s in all, TTFT %s.",
			v.Hardware, r.Engine, weightsText(r), usersText(r.Concurrency), tps(r.PerUser), tps(r.Total), ms(r.TTFT))
	}
	if servesFewer(r, in) {
		fmt.Fprintf(&b, " Fits with limits: serves %d of the %d users asked for within the target.", r.Concurrency, in.Workload.Concurrency)
	}
	if n := tiesWithBest(v, in); n > 0 {
		fmt.Fprintf(&b, " %s with the best: %s.", planner.Plural(n, "row"), tieText(max(r.ErrorBand, v.Rows[1].ErrorBand)))
	}
	return b.String()
}

// rateText is an arrival rate: "2 req/s", "0.25 req/s".
func rateText(r float64) string { return fmt.Sprintf("%.3g req/s", r) }

// loadText says how loaded a row is at a fixed rate: its share of its
// capacity and the slots it is given.
func loadText(r PlanRow) string {
	if r.Capacity <= 0 {
		return "no capacity figure"
	}
	if f := r.Candidate.Fleet; f != nil && f.Replicas > 1 {
		return fmt.Sprintf("%d replicas of %s (%s in all), each at %.0f%% of its %s capacity, %s",
			f.Replicas, planner.Plural(f.DevicesPerReplica, "device"), planner.Plural(f.Devices, "device"),
			100*f.Utilization, rateText(r.Capacity), planner.Plural(r.Concurrency, "slot"))
	}
	return fmt.Sprintf("%.0f%% of its %s capacity, %s", 100*r.Utilization, rateText(r.Capacity), planner.Plural(r.Concurrency, "slot"))
}

// selectRow charts row i (called by the table).
func (s *PlanScreen) selectRow(i int) {
	if i < 0 || i >= len(s.view.Rows) || i == s.selected {
		return
	}
	r, in := s.view.Rows[i], s.input
	s.selected = i
	s.curveJob.now(func() func() {
		curve := s.curveFor(r, in)
		return func() { s.applyRow(i, curve) }
	})
}

// rowDetail is the detail pane's text for a row: what it is, its verdict,
// the figures' meaning, the full reason and the launch command.
func rowDetail(r PlanRow, v PlanView, in PlanInput) string {
	var b strings.Builder
	seqs := usersText(max(r.Concurrency, 1))
	switch {
	case in.Workload.Rate > 0:
		// At a rate the row's concurrency is the slots it is given.
		seqs = planner.Plural(max(r.Concurrency, 1), "slot")
	case in.Workload.RunsAtOnce():
		seqs = fmt.Sprintf("%d at once", max(r.Concurrency, 1))
	}
	fmt.Fprintf(&b, "#%d %s · %s · KV %s · %s × %s context", r.Rank, r.Engine, weightsText(r), r.KV, seqs, tokens(r.Context))
	if rate := in.Workload.Rate; rate > 0 && r.Fits {
		fmt.Fprintf(&b, "\nAt %s: %s", rateText(rate), loadText(r))
	}
	fmt.Fprintf(&b, "\nVerdict: %s", statusText(r, in))
	if vs := vsBest(r, v, in); vs != "–" && vs != "best" {
		fmt.Fprintf(&b, " · total vs #1: %s", vs)
	}
	switch {
	case r.Fits && in.Workload.Rate > 0 && r.Utilization >= 1:
		// Past capacity one server runs its full batch and completes
		// what it can; the rest queue.
		fmt.Fprintf(&b, "\n%s tok/s per request, streaming at %s tok/s; %s tok/s in all, its capacity: %s arrive, so the queue grows and TTFT adds its wait.",
			tps(r.PerUser), tps(r.Stream), tps(r.Total), rateText(in.Workload.Rate))
	case r.Fits && in.Workload.Rate > 0:
		// At a rate the total is what arrives: the rate times the output
		// length, below one request's speed when requests are sparse.
		fmt.Fprintf(&b, "\n%s tok/s per request (TTFT included), streaming at %s tok/s; %s tok/s delivered in all at %s (the rate × %s output tokens).",
			tps(r.PerUser), tps(r.Stream), tps(r.Total), rateText(in.Workload.Rate), tokens(in.Workload.Gen))
	case r.Fits && in.Workload.Burst > 1:
		fmt.Fprintf(&b, "\n%s tok/s per request (TTFT with its wait included), streaming at %s tok/s; all %d answered in %s, %s tok/s in all.",
			tps(r.PerUser), tps(r.Stream), in.Workload.Burst, makespanText(in.Workload.Burst, r), tps(r.Total))
	case r.Fits && in.Workload.RunsAtOnce():
		fmt.Fprintf(&b, "\n%s tok/s per request (TTFT included), streaming at %s tok/s; %s tok/s in all at its largest batch.", tps(r.PerUser), tps(r.Stream), tps(r.Total))
	case r.Fits:
		fmt.Fprintf(&b, "\n%s tok/s per user (TTFT included), streaming at %s tok/s; %s tok/s for all users together.", tps(r.PerUser), tps(r.Stream), tps(r.Total))
	}
	if r.WhyNot != "" {
		b.WriteString("\n" + r.WhyNot)
	}
	if t := planner.BandText(r.Candidate.ErrorBand, v.BandKind); t != "" && r.Fits {
		fmt.Fprintf(&b, "\nFigures are %s; %s.", r.Source, t)
	}
	if r.Launch != "" {
		b.WriteString("\nLaunch: " + r.Launch)
	}
	// The plan's own notes (what would meet an unmet target, formats
	// engines load, nodes) hold for every row.
	if len(v.Notes) > 0 {
		b.WriteString("\n\nAbout this plan:\n" + bulletText(v.Notes, "• "))
	}
	return b.String()
}

// applyRow shows row i's details and charts (UI thread).
func (s *PlanScreen) applyRow(i int, curve []curvePoint) {
	s.selected = i
	r := s.view.Rows[i]
	s.curve = curve
	s.detail.SetText(rowDetail(r, s.view, s.input))
	s.export.Enable()
	s.chartKey.SetText(fmt.Sprintf("Charts: #%d %s %s · %s", r.Rank, r.Engine, r.Quant, statusText(r, s.input)))
	s.chartKey.Importance = verdictImportance(rowVerdict(r, s.input))
	s.chartKey.Refresh()
	target := float64(s.input.MaxTTFT)
	s.throughput.set(func(w, h int, st chartStyle) (image.Image, error) { return throughputChart(curve, w, h, st) })
	s.ttft.set(func(w, h int, st chartStyle) (image.Image, error) { return ttftChart(curve, target, w, h, st) })
}
