package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/headroom-planner/headroom/planner"
)

func TestCanRunEmptyState(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.CanRun
	win.Tabs.SelectIndex(TabCanRun)
	if !s.empty.Visible() || s.results.Visible() {
		t.Fatal("with no model chosen the screen should show its empty state only")
	}
	test.AssertRendersToMarkup(t, "canrun_empty.xml", win.Canvas())
}

func TestCanRunVerdictFollowsInputs(t *testing.T) {
	win, svc := newTestWindow(t)
	s := win.CanRun
	win.Tabs.SelectIndex(TabCanRun)

	pick(t, s.picker, "8b")
	win.wait()
	if s.fit.Verdict != planner.Fits {
		t.Fatalf("8B on this machine's RTX 4090: verdict %q, want fits (reasons %v)", s.fit.Verdict, s.fit.Reasons)
	}
	if got := s.verdict.Text; got != "Fits" {
		t.Errorf("verdict card says %q, want Fits", got)
	}

	// Typing a context changes the verdict: 8k fits, 128k does not.
	setText(s.context, "8k")
	win.wait()
	if s.fit.Context != 8192 || !strings.Contains(s.summary.Text, "8k context") {
		t.Errorf("after typing 8k: context %d, summary %q", s.fit.Context, s.summary.Text)
	}
	setText(s.context, "128k")
	win.wait()
	if s.fit.Verdict != planner.DoesNotFit || s.verdict.Text != "Does not fit" {
		t.Fatalf("after typing 128k: verdict %q (card %q), want does not fit", s.fit.Verdict, s.verdict.Text)
	}
	if !s.advice.Visible() || !strings.Contains(s.advice.Text, "lower the context") {
		t.Errorf("a context that does not fit should say what would make it fit; advice %q", s.advice.Text)
	}

	// A smaller card does not hold bf16 weights; a 4-bit format does.
	setText(s.context, "8k")
	s.hardware.setID("nvidia-rtx-3060")
	win.wait()
	if s.fit.Verdict != planner.DoesNotFit || !strings.Contains(s.advice.Text, "4-bit") {
		t.Fatalf("8B bf16 on a 12 GiB card: verdict %q, advice %q", s.fit.Verdict, s.advice.Text)
	}
	s.quant.setID("awq-int4")
	win.wait()
	if s.fit.Verdict != planner.Fits {
		t.Fatalf("8B AWQ on a 12 GiB card: verdict %q, want fits (%v)", s.fit.Verdict, s.fit.Reasons)
	}
	if s.advice.Visible() {
		t.Errorf("advice still shown after it fits: %q", s.advice.Text)
	}

	// The stacked bar holds weights, KV cache and overhead within the
	// device, and the rest is free.
	b := s.fit.Breakdown
	if s.bar.total != b.Device || len(s.bar.segs) != 3 || s.bar.segs[0].bytes != b.Weights || s.bar.segs[1].bytes != b.KVCache {
		t.Errorf("memory bar total %v segments %+v, want device %v weights %v KV %v", s.bar.total, s.bar.segs, b.Device, b.Weights, b.KVCache)
	}
	if s.bar.free() != b.Device-b.Used() {
		t.Errorf("bar free %v, want %v", s.bar.free(), b.Device-b.Used())
	}
	if !strings.Contains(s.speed.Text, "tok/s per user") {
		t.Errorf("speed line %q", s.speed.Text)
	}
	if svc.calls.Load() == 0 {
		t.Error("the screen never called the service")
	}
	test.AssertRendersToMarkup(t, "canrun_fits.xml", win.Canvas())
}

func TestCanRunUsersChangeSpeed(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.CanRun
	pick(t, s.picker, "8b")
	setText(s.context, "8k")
	win.wait()
	one := s.speed.Text
	setText(s.users, "16")
	win.wait()
	if s.fit.Concurrency != 16 || s.speed.Text == one || !strings.Contains(s.speed.Text, "with 16 users") {
		t.Errorf("16 users: concurrency %d, speed %q (was %q)", s.fit.Concurrency, s.speed.Text, one)
	}
}

func TestCanRunBadInputShowsInlineError(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.CanRun
	pick(t, s.picker, "8b")
	win.wait()
	setText(s.users, "lots")
	win.wait()
	if !s.errLine.Visible() || !strings.Contains(s.errLine.Text, "Users") {
		t.Fatalf("typing a non-number in Users: error line %v %q", s.errLine.Visible(), s.errLine.Text)
	}
	setText(s.context, "12q")
	setText(s.users, "2")
	win.wait()
	if !strings.Contains(s.errLine.Text, "Context") {
		t.Errorf("bad context: error %q", s.errLine.Text)
	}
	setText(s.context, "")
	win.wait()
	if s.errLine.Visible() {
		t.Errorf("error line still shown after fixing the inputs: %q", s.errLine.Text)
	}
}

func TestCanRunServiceErrorShowsInline(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.CanRun
	pick(t, s.picker, "8b")
	s.engine.setID("llama.cpp")
	s.kv.setID("q8_0")
	s.engine.setID("vllm") // vLLM has no q8_0 KV cache: Scenario fails
	win.wait()
	if !s.errLine.Visible() || !strings.Contains(s.errLine.Text, "q8_0") {
		t.Fatalf("invalid combination: error %q", s.errLine.Text)
	}
}

func TestCanRunOpenModelFile(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.CanRun
	win.Tabs.SelectIndex(TabCanRun)
	test.Tap(s.picker.open)
	if win.Canvas().Overlays().Top() == nil {
		t.Fatal("Open… did not show a file dialog")
	}
	win.Canvas().Overlays().Top().Hide()
	win.Canvas().Overlays().Remove(win.Canvas().Overlays().Top())

	s.OpenModelFile("/models/my-llama.gguf")
	win.wait()
	if s.picker.model.ID != "local/my-llama" || !strings.Contains(s.picker.current.Text, "file, q4_k_m") {
		t.Fatalf("opened model %q, label %q", s.picker.model.ID, s.picker.current.Text)
	}
	if s.fit.Verdict == "" {
		t.Error("opening a file did not evaluate it")
	}
	if win.Plan.picker.model.ID != "local/my-llama" || win.Compare.picker.model.ID != "local/my-llama" {
		t.Error("the opened model did not reach Plan and Compare")
	}
	s.OpenModelFile("/models/missing.gguf")
	win.wait()
	if !s.errLine.Visible() || !strings.Contains(s.errLine.Text, "no such file") {
		t.Errorf("missing file: error %q", s.errLine.Text)
	}
}

func TestModelSearchFilters(t *testing.T) {
	win, _ := newTestWindow(t)
	p := win.CanRun.picker
	if len(p.shown) != 2 {
		t.Fatalf("empty search shows %d models, want 2", len(p.shown))
	}
	for q, want := range map[string]int{"llama": 2, "70b": 1, "LLAMA 8B": 1, "qwen": 0} {
		setText(p.search, q)
		if len(p.shown) != want {
			t.Errorf("search %q shows %d, want %d", q, len(p.shown), want)
		}
	}
}

// A checkpoint read from its files that names its KV cache type says so
// beside its format.
func TestPickerShowsCheckpointKV(t *testing.T) {
	win, svc := newTestWindow(t)
	p := win.CanRun.picker
	m := model(t, svc, "Llama-3.1-8B")
	m.FileQuant, m.CheckpointKV = "fp8", "fp8"
	p.model = m
	p.showCurrent()
	if !strings.Contains(p.current.Text, "file, fp8, KV cache fp8 (the checkpoint's)") {
		t.Errorf("label %q", p.current.Text)
	}
	m.CheckpointKV = ""
	p.model = m
	p.showCurrent()
	if strings.Contains(p.current.Text, "KV cache") {
		t.Errorf("a checkpoint naming no KV type: label %q", p.current.Text)
	}
}
