package ui

import (
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/headroom-planner/headroom/planner"
)

func TestPlanEmptyState(t *testing.T) {
	win, _ := newTestWindow(t)
	win.Tabs.SelectIndex(TabPlan)
	if !win.Plan.empty.Visible() || win.Plan.results.Visible() {
		t.Fatal("Plan with no model should show its empty state")
	}
}

func TestPlanRanksAndCharts(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.Plan
	win.Tabs.SelectIndex(TabPlan)
	pick(t, s.picker, "8b")
	win.wait()
	rows := s.view.Rows
	if len(rows) == 0 {
		t.Fatal("no plan rows")
	}
	if rows[0].Rank != 1 || !rows[0].Fits {
		t.Errorf("first row %+v", rows[0])
	}
	if got := s.table.text(0, 2); got != rows[0].Engine {
		t.Errorf("table row 1 engine %q, want %q", got, rows[0].Engine)
	}
	if !strings.HasPrefix(s.summary.Text, "Best on NVIDIA GeForce RTX 4090") {
		t.Errorf("summary %q", s.summary.Text)
	}
	if s.throughput.draw == nil || s.ttft.draw == nil || len(s.curve) == 0 {
		t.Fatal("the best row is not charted")
	}
	if s.curve[0].Concurrency != 1 || s.curve[len(s.curve)-1].Concurrency != 16 {
		t.Errorf("curve concurrencies %v", s.curve)
	}
	img := s.throughput.generate(400, 240)
	if b := img.Bounds(); b.Dx() != 400 || b.Dy() != 240 || inked(img) < 0.01 {
		t.Errorf("throughput chart %v, inked %.3f", b, inked(img))
	}
	test.AssertRendersToMarkup(t, "plan.xml", win.Canvas())
}

func TestPlanFollowsWorkloadAndTarget(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.Plan
	pick(t, s.picker, "8b")
	win.wait()
	before := s.view.Rows

	setText(s.users, "32")
	win.wait()
	found := false
	for _, r := range s.view.Rows {
		found = found || r.Concurrency == 32
	}
	if !found {
		t.Errorf("after typing 32 users no row serves 32: %v", s.view.Rows)
	}
	if len(s.view.Rows) == len(before) && s.view.Rows[0].Total == before[0].Total && s.view.Rows[0].Concurrency == before[0].Concurrency {
		t.Error("typing users did not change the plan")
	}

	setText(s.maxTPOT, "1")
	win.wait()
	if !strings.HasPrefix(s.summary.Text, "Nothing meets the target") {
		t.Errorf("a 1 ms TPOT target: summary %q", s.summary.Text)
	}
	if got := s.table.text(0, 1); got != "fits with limits: misses target" {
		t.Errorf("status column %q", got)
	}
	if !strings.Contains(s.detail.Text, "over the 1.0 ms target") {
		t.Errorf("detail should say why: %q", s.detail.Text)
	}

	setText(s.maxTPOT, "fast")
	win.wait()
	if !s.errLine.Visible() {
		t.Error("a non-number target shows no error")
	}
}

func TestPlanSelectRowAndExport(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.Plan
	pick(t, s.picker, "8b")
	win.wait()
	if len(s.view.Rows) < 2 {
		t.Fatalf("want at least 2 rows, got %d", len(s.view.Rows))
	}
	s.table.table.Select(widget.TableCellID{Row: 1, Col: 2})
	win.wait()
	if s.selected != 1 || !strings.HasPrefix(s.detail.Text, "#2 ") {
		t.Fatalf("selected %d, detail %q", s.selected, s.detail.Text)
	}
	test.Tap(s.export)
	if win.Tabs.SelectedIndex() != TabExport {
		t.Errorf("Export this plan… left tab %d selected", win.Tabs.SelectedIndex())
	}
	if win.Export.row.Rank != 2 {
		t.Errorf("Export got row %d, want 2", win.Export.row.Rank)
	}
}

func TestConcurrencies(t *testing.T) {
	for _, c := range []struct {
		users int
		want  string
	}{
		{1, "[1 2 4 8 16]"},
		{8, "[1 2 4 8 16]"},
		{12, "[1 2 4 8 12 16]"},
		{100, "[1 2 4 8 16 32 64 100 128]"},
	} {
		if got := fmt.Sprint(concurrencies(c.users)); got != c.want {
			t.Errorf("concurrencies(%d) = %s, want %s", c.users, got, c.want)
		}
	}
}

// A rate replaces the users in a loop: it reaches the plan input, greys
// out Users, and a bad rate says what is wrong with it.
func TestPlanRateEntry(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.Plan
	pick(t, s.picker, "8b")
	win.wait()

	setText(s.rate, "90/min")
	win.wait()
	if s.input.Workload.Rate != 1.5 {
		t.Errorf("rate 90/min reached the plan as %g req/s", s.input.Workload.Rate)
	}
	if !s.users.Disabled() {
		t.Error("Users stays editable while a rate is set")
	}
	if !strings.Contains(s.summary.Text, "at 1.5 req/s") {
		t.Errorf("summary does not name the rate: %q", s.summary.Text)
	}
	if s.table.headers[planUsersColumn] != "Slots" || planColumns[planUsersColumn] != "Users served" {
		t.Errorf("at a rate the column reads %q (planColumns %q)", s.table.headers[planUsersColumn], planColumns[planUsersColumn])
	}

	setText(s.rate, "fast")
	win.wait()
	if !s.errLine.Visible() || !strings.Contains(s.errLine.Text, `Rate "fast"`) {
		t.Errorf("a bad rate shows %q", s.errLine.Text)
	}

	setText(s.rate, "")
	win.wait()
	if s.users.Disabled() || s.input.Workload.Rate != 0 || s.table.headers[planUsersColumn] != planColumns[planUsersColumn] {
		t.Errorf("clearing the rate: users disabled %v, rate %g, column %q", s.users.Disabled(), s.input.Workload.Rate, s.table.headers[planUsersColumn])
	}
}

func TestPlanSummaryAtRate(t *testing.T) {
	v := PlanView{Hardware: "RTX 4090", Rows: []PlanRow{{Engine: "vllm", Quant: "fp8", Concurrency: 23, MeetsSLO: true,
		Fits: true, PerUser: 41, Total: 502, TTFT: 101, Capacity: 6.22, Utilization: 0.3215}}}
	in := PlanInput{Workload: planner.Workload{Rate: 2}}
	want := "Best on RTX 4090 at 2 req/s: vllm with fp8 weights, 32% of its 6.22 req/s capacity, 23 slots: 41.0 tok/s per user, 502 tok/s in all, TTFT 101 ms."
	if got := planSummary(v, in); got != want {
		t.Errorf("summary\n got %q\nwant %q", got, want)
	}
}

// A row's details at a rate: below capacity the total is what arrives;
// past it, one server's capacity while the queue grows.
func TestPlanRowDetailAtRate(t *testing.T) {
	row := PlanRow{Engine: "vllm", Quant: "fp8", Concurrency: 23, Fits: true, PerUser: 41, Stream: 60, Total: 502, TTFT: 101, Capacity: 6.22, Utilization: 0.3215}
	v := PlanView{Hardware: "RTX 4090", Rows: []PlanRow{row}}
	in := PlanInput{Workload: planner.Workload{Rate: 2, Gen: 256}}
	if got := rowDetail(row, v, in); !strings.Contains(got, "tok/s delivered in all at 2 req/s (the rate × 256 output tokens)") || !strings.Contains(got, "23 slots ×") {
		t.Errorf("below capacity:\n%s", got)
	}
	row.Utilization, row.Total = 1.6, 1590
	in.Workload.Rate = 10
	got := rowDetail(row, v, in)
	if !strings.Contains(got, "1,590 tok/s in all, its capacity: 10 req/s arrive, so the queue grows and TTFT adds its wait") || strings.Contains(got, "the rate ×") {
		t.Errorf("past capacity:\n%s", got)
	}
}

// A dropped configuration (its row explains why it lost) has no scenario
// to chart: selecting it asks the service for nothing.
func TestPlanDroppedRowHasNoCurve(t *testing.T) {
	win, svc := newTestWindow(t)
	before := svc.calls.Load()
	if c := win.Plan.curveFor(PlanRow{Engine: "vLLM", Quant: "bf16", WhyNot: "does not fit"}, PlanInput{}); c != nil {
		t.Errorf("curve for a dropped row: %v", c)
	}
	if svc.calls.Load() != before {
		t.Error("the service was asked for a dropped row's curve")
	}
}

// A burst or an offline batch replaces users and rate as --workload's
// burst= and offline do: it reaches the plan input, greys out what it
// overrides, and the table counts sequences at once.
func TestPlanBurstAndOfflineEntries(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.Plan
	pick(t, s.picker, "8b")
	win.wait()
	setText(s.maxTTFT, "")
	setText(s.maxTPOT, "")

	setText(s.rate, "2")
	setText(s.burst, "500")
	win.wait()
	w := s.input.Workload
	if w.Kind != planner.WorkloadBurst || w.Burst != 500 || w.Rate != 0 {
		t.Errorf("burst 500 with a rate typed reached the plan as %+v", w)
	}
	if !s.users.Disabled() || !s.rate.Disabled() || s.burst.Disabled() {
		t.Errorf("with a burst: users disabled %v, rate disabled %v, burst disabled %v", s.users.Disabled(), s.rate.Disabled(), s.burst.Disabled())
	}
	if s.table.headers[planUsersColumn] != "At once" {
		t.Errorf("for a burst the column reads %q", s.table.headers[planUsersColumn])
	}
	if !strings.Contains(s.summary.Text, "for 500 prompts at once") {
		t.Errorf("summary does not name the burst: %q", s.summary.Text)
	}
	if strings.Contains(s.table.text(0, 1), "users") {
		t.Errorf("a burst's row reads %q: its prompts wait for a slot, it serves no fewer users", s.table.text(0, 1))
	}

	setText(s.burst, "lots")
	win.wait()
	if !s.errLine.Visible() || !strings.Contains(strings.ToLower(s.errLine.Text), `prompts at once "lots"`) {
		t.Errorf("a bad burst shows %q", s.errLine.Text)
	}

	setText(s.burst, "500")
	s.offline.SetChecked(true)
	win.wait()
	if w := s.input.Workload; w.Kind != planner.WorkloadOffline || !w.Saturate || w.Burst != 0 || w.Rate != 0 {
		t.Errorf("offline reached the plan as %+v", w)
	}
	if !s.burst.Disabled() || !s.rate.Disabled() || !s.users.Disabled() {
		t.Error("offline leaves another arrival pattern editable")
	}
	if !strings.Contains(s.summary.Text, "for an offline batch") {
		t.Errorf("summary does not name the offline batch: %q", s.summary.Text)
	}

	s.offline.SetChecked(false)
	setText(s.burst, "")
	setText(s.rate, "")
	win.wait()
	if s.users.Disabled() || s.rate.Disabled() || s.burst.Disabled() || s.input.Workload.Kind != "" || s.table.headers[planUsersColumn] != planColumns[planUsersColumn] {
		t.Errorf("clearing both: users disabled %v, workload %+v, column %q", s.users.Disabled(), s.input.Workload, s.table.headers[planUsersColumn])
	}
}
