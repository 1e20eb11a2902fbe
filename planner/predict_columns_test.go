package planner_test

import (
	"testing"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/measurements"
)

// A row's prediction comes from its columns alone: blanking every row's
// notes and source changes no prediction (issue 17: meaning is typed, not
// parsed from prose).
func TestPredictionsIgnoreNotesAndSource(t *testing.T) {
	c := catalog(t)
	rows, _, err := measurements.LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for i, m := range rows {
		want, werr := planner.PredictMeasurement(c, m, c.Perf)
		blank := m
		blank.Notes, blank.Source = "", ""
		got, gerr := planner.PredictMeasurement(c, blank, c.Perf)
		if (werr == nil) != (gerr == nil) || got != want {
			t.Errorf("row %d (%s %s %s): %v (%v) with notes, %v (%v) without", i, m.Hardware, m.Model, m.Metric, want, werr, got, gerr)
		}
		if werr == nil {
			compared++
		}
	}
	if compared < len(rows)*9/10 {
		t.Errorf("only %d of %d rows predicted", compared, len(rows))
	}
}
