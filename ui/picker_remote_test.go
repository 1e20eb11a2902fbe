package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// The model field takes what `headroom fit -m` takes: a search that names
// a Hub repository or an Ollama tag the catalog lacks offers to read it,
// Enter or the button reads it through the service off the UI thread, and
// an error shows inline with the old model kept.
func TestPickerReadsRemoteReferences(t *testing.T) {
	win, svc := newTestWindow(t)
	s := win.CanRun
	for _, c := range []struct{ q, where string }{
		{"Qwen/Qwen2.5-72B-Instruct-AWQ", "Hugging Face"},
		{"hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M", "Hugging Face"},
		{"ollama:qwen3:32b", "the Ollama registry"},
		{"qwen3:32b", "the Ollama registry"},
		{"llama 8b", ""},
	} {
		setText(s.picker.search, c.q)
		if got := s.picker.remote.Visible(); got != (c.where != "") || (got && !strings.Contains(s.picker.remote.Text, c.where)) {
			t.Errorf("search %q: remote button visible %v (%q), want %q", c.q, got, s.picker.remote.Text, c.where)
		}
	}
	setText(s.picker.search, "example/missing-model")
	before := svc.calls.Load()
	test.Tap(s.picker.remote)
	win.wait()
	if svc.calls.Load() == before {
		t.Error("the service was not asked to read the reference")
	}
	if !strings.Contains(s.errLine.Text, "example/missing-model") {
		t.Errorf("a reference the service cannot read: error line %q", s.errLine.Text)
	}
	setText(s.picker.search, "example/good-model")
	test.Tap(s.picker.remote)
	win.wait()
	if s.picker.model.ID != "local/good-model" || s.errLine.Text != "" {
		t.Errorf("after reading example/good-model: model %q, error %q", s.picker.model.ID, s.errLine.Text)
	}
}
