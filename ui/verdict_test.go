package ui

import (
	"image/color"
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"

	"github.com/headroom-planner/headroom/planner"
)

var allVerdicts = []planner.Verdict{planner.Fits, planner.FitsWithLimits, planner.FitsWithOffload, planner.DoesNotFit}

// TestVerdictStatesAreDistinct: the four states have their own words and
// their own colour in tables, on the card and in charts.
func TestVerdictStatesAreDistinct(t *testing.T) {
	texts, titles := map[string]bool{}, map[string]bool{}
	imps := map[widget.Importance]bool{}
	tints, bars := map[color.Color]bool{}, map[color.Color]bool{}
	for _, v := range allVerdicts {
		texts[verdictText(v)] = true
		titles[verdictTitle(v)] = true
		imp, tint := verdictLook(v)
		if imp != verdictImportance(v) {
			t.Errorf("%s: card colour %v, table colour %v", v, imp, verdictImportance(v))
		}
		imps[imp], tints[tint], bars[verdictColor(v)] = true, true, true
	}
	for name, n := range map[string]int{"table words": len(texts), "card titles": len(titles), "colours": len(imps), "card tints": len(tints), "chart colours": len(bars)} {
		if n != len(allVerdicts) {
			t.Errorf("%s: %d distinct for %d verdicts", name, n, len(allVerdicts))
		}
	}
}

// TestCanRunCardShowsEachVerdict: the card's headline and colour follow
// each of the four states.
func TestCanRunCardShowsEachVerdict(t *testing.T) {
	win, svc := newTestWindow(t)
	s := win.CanRun
	win.Tabs.SelectIndex(TabCanRun)
	pick(t, s.picker, "8b")
	win.wait()
	sc, err := svc.Scenario(ScenarioInput{Model: s.picker.model})
	if err != nil {
		t.Fatal(err)
	}
	fr, err := svc.Fit(sc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[planner.Verdict]string{planner.Fits: "Fits", planner.FitsWithLimits: "Fits, with limits",
		planner.FitsWithOffload: "Fits with offload to system RAM", planner.DoesNotFit: "Does not fit"}
	for _, v := range allVerdicts {
		fr.Verdict = v
		s.show(sc, fr, planner.Prediction{})
		if s.verdict.Text != want[v] || s.verdict.Importance != verdictImportance(v) {
			t.Errorf("%s: card %q in %v", v, s.verdict.Text, s.verdict.Importance)
		}
	}
}

// TestPlanRowVerdicts: a plan row's Verdict cell, one per state; a row
// serving 4 of 8 users is not "fits", whatever its latency.
func TestPlanRowVerdicts(t *testing.T) {
	closed := PlanInput{Workload: planner.Workload{Concurrency: 8}}
	atRate := PlanInput{Workload: planner.Workload{Concurrency: 8, Rate: 2}}
	offload := planner.Candidate{Fit: planner.FitResult{Verdict: planner.FitsWithOffload}}
	cases := []struct {
		name string
		row  PlanRow
		in   PlanInput
		want planner.Verdict
		text string
	}{
		{"meets with all users", PlanRow{Fits: true, MeetsSLO: true, Concurrency: 8}, closed, planner.Fits, "fits"},
		{"meets with 4 of 8", PlanRow{Fits: true, MeetsSLO: true, Concurrency: 4}, closed, planner.FitsWithLimits, "fits with limits: 4 of 8 users"},
		{"misses the target", PlanRow{Fits: true, Concurrency: 8}, closed, planner.FitsWithLimits, "fits with limits: misses target"},
		{"at a rate, slots are not users", PlanRow{Fits: true, MeetsSLO: true, Concurrency: 3}, atRate, planner.Fits, "fits"},
		{"offload", PlanRow{Fits: true, MeetsSLO: true, Concurrency: 8, Candidate: offload}, closed, planner.FitsWithOffload, "fits with offload"},
		{"dropped", PlanRow{}, closed, planner.DoesNotFit, "does not fit"},
	}
	for _, c := range cases {
		if got := rowVerdict(c.row, c.in); got != c.want {
			t.Errorf("%s: verdict %q, want %q", c.name, got, c.want)
		}
		if got := statusText(c.row, c.in); got != c.text {
			t.Errorf("%s: cell %q, want %q", c.name, got, c.text)
		}
	}
}

// TestPlanTiesWithinErrorBand: a difference inside the error band is a
// tie, outside it a percentage.
func TestPlanTiesWithinErrorBand(t *testing.T) {
	in := PlanInput{Workload: planner.Workload{Concurrency: 8}, MaxTPOT: 100}
	v := PlanView{Hardware: "RTX 4090", Rows: []PlanRow{
		{Rank: 1, Engine: "vLLM", Quant: "bf16", Fits: true, MeetsSLO: true, Concurrency: 8, Total: 1000, ErrorBand: 10},
		{Rank: 2, Engine: "SGLang", Quant: "bf16", Fits: true, MeetsSLO: true, Concurrency: 8, Total: 930, ErrorBand: 10},
		{Rank: 3, Engine: "TGI", Quant: "bf16", Fits: true, MeetsSLO: true, Concurrency: 8, Total: 700, ErrorBand: 10},
		{Rank: 4, Engine: "llama-server", Quant: "bf16", Fits: true, Concurrency: 8, Total: 500, ErrorBand: 10},
	}}
	want := []string{"best", "≈ tie within ±10%", "-30%", "–"}
	for i, r := range v.Rows {
		if got := vsBest(r, v, in); got != want[i] {
			t.Errorf("row %d: %q, want %q", r.Rank, got, want[i])
		}
	}
	if s := planSummary(v, in); !strings.Contains(s, "1 row ≈ tie within ±10% with the best") && !strings.Contains(s, "≈ tie within ±10%") {
		t.Errorf("summary does not say the first two tie: %q", s)
	}
}

// TestPlanClosestIsSmallestMiss: when nothing meets the target, the
// summary names the row that misses by the least, not the first row.
func TestPlanClosestIsSmallestMiss(t *testing.T) {
	in := PlanInput{Workload: planner.Workload{Concurrency: 8}, MaxTTFT: 2000, MaxTPOT: 100}
	v := PlanView{Hardware: "this machine", Rows: []PlanRow{
		{Rank: 1, Engine: "vLLM", Quant: "bf16", Fits: true, TTFT: 9000, TPOT: 400},
		{Rank: 2, Engine: "llama-server", Quant: "q8_0", Fits: true, TTFT: 2500, TPOT: 120},
		{Rank: 3, Engine: "Ollama", Quant: "q4_0", Fits: true, TTFT: 1900, TPOT: 150},
		{Rank: 4, Engine: "TGI", Quant: "fp8"},
	}}
	if got := closestRow(v, in); got != 1 {
		t.Errorf("closest row %d, want 1 (llama-server: 25%% over, Ollama 50%%)", got)
	}
	s := planSummary(v, in)
	if !strings.Contains(s, "Closest (#2): llama-server with q8_0") || !strings.Contains(s, "TPOT 120 ms vs 100 ms (+20%)") {
		t.Errorf("summary %q", s)
	}
}

// TestQualityNotes: low-bit formats carry a word on quality.
func TestQualityNotes(t *testing.T) {
	for _, c := range []struct {
		bpw  float64
		want string
	}{
		{16, ""}, {8.5, ""}, {6.56, ""},
		{5.5, "5-bit: very small quality loss"},
		{4.5, "4-bit: small quality loss"}, {4.156, "4-bit: small quality loss"},
		{3.4, "sub-4-bit: noticeable quality loss"}, {2.6, "sub-4-bit: noticeable quality loss"},
	} {
		if got := qualityNote(c.bpw); got != c.want {
			t.Errorf("%.2f bits per weight: %q, want %q", c.bpw, got, c.want)
		}
	}
	q4 := planner.Scenario{Quant: planner.Quant{ID: "q4_0", LinearBPW: 4.5}}
	r := PlanRow{Rank: 1, Engine: "llama-server", Quant: "q4_0", Fits: true, MeetsSLO: true, Concurrency: 1,
		Candidate: planner.Candidate{Scenario: &q4}}
	s := planSummary(PlanView{Hardware: "x", Rows: []PlanRow{r}}, PlanInput{Workload: planner.Workload{Concurrency: 1}})
	if !strings.Contains(s, "q4_0 (4-bit: small quality loss) weights") {
		t.Errorf("a recommended q4_0 says nothing on quality: %q", s)
	}
}

// TestCompareRowServingFewerUsers: a device that serves fewer users than
// asked says how many, in the table and in the detail pane.
func TestCompareRowServingFewerUsers(t *testing.T) {
	s := &CompareScreen{asked: 8}
	r := CompareRow{Hardware: "nvidia-rtx-3060", Name: "RTX 3060", Verdict: planner.FitsWithLimits, Users: 4, SingleUser: 50, Total: 160, PriceUSD: 329}
	cells := s.compareCells(r)
	if cells[1] != "fits with limits" || cells[2] != "4 of 8" {
		t.Errorf("verdict %q, users %q; want fits with limits, 4 of 8", cells[1], cells[2])
	}
	if d := compareDetail("RTX 3060", r, 8); !strings.Contains(d, "Serves 4 of the 8 users") {
		t.Errorf("detail %q", d)
	}
}

// TestBudgetIsExplained: the engine's budget says what sets it.
func TestBudgetIsExplained(t *testing.T) {
	sc := planner.Scenario{Engine: planner.Engine{ID: planner.VLLM, Name: "vLLM", GPUMemoryUtilization: 0.9}}
	if got := budgetRule(sc); got != "vLLM's default utilization 0.90 of device memory" {
		t.Errorf("budget rule %q", got)
	}
	sc.GPUMemoryUtilization = 0.8
	if got := budgetRule(sc); got != "--gpu-memory-utilization 0.80" {
		t.Errorf("budget rule with a flag %q", got)
	}
}

// TestPlanChartKeyShowsVerdict: the charts name the row they show and its
// verdict, in the verdict's colour.
func TestPlanChartKeyShowsVerdict(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.Plan
	pick(t, s.picker, "8b")
	win.wait()
	r := s.view.Rows[s.selected]
	v := rowVerdict(r, s.input)
	if !strings.Contains(s.chartKey.Text, statusText(r, s.input)) || s.chartKey.Importance != verdictImportance(v) {
		t.Errorf("chart key %q in %v for a row that %s", s.chartKey.Text, s.chartKey.Importance, v)
	}
	setText(s.maxTPOT, "1")
	win.wait()
	if !strings.Contains(s.chartKey.Text, "fits with limits") || s.chartKey.Importance != widget.WarningImportance {
		t.Errorf("a missed target: chart key %q in %v", s.chartKey.Text, s.chartKey.Importance)
	}
}

// TestFirstShownIsClosestMiss: with nothing meeting the target, a new plan
// opens on the row the summary calls closest.
func TestFirstShownIsClosestMiss(t *testing.T) {
	in := PlanInput{MaxTPOT: 100}
	meets := PlanView{Rows: []PlanRow{{Fits: true, MeetsSLO: true, TPOT: 50}, {Fits: true, MeetsSLO: true, TPOT: 40}}}
	misses := PlanView{Rows: []PlanRow{{Fits: true, TPOT: 400}, {Fits: true, TPOT: 120}, {TPOT: 101}}}
	if got := firstShown(meets, in); got != 0 {
		t.Errorf("a plan that meets the target opens on row %d", got)
	}
	if got := firstShown(misses, in); got != 1 {
		t.Errorf("nothing meets the target: opens on row %d, want the closest fitting miss 1", got)
	}
}
