package planner

import (
	"math"
	"testing"
)

// TestWithinGroupMdAPE: a group whose rows are all off by one factor has
// no error within it; the spread around a group's own median remains.
func TestWithinGroupMdAPE(t *testing.T) {
	row := func(src string, metric Metric, meas, pred float64) RowResult {
		return RowResult{Row: Measurement{Source: src, Metric: metric, Value: meas}, Predicted: pred}
	}
	bySource := func(m Measurement) string { return m.Source }
	cases := []struct {
		name string
		res  []RowResult
		want map[Metric]float64
	}{
		{"one factor per source", []RowResult{
			row("a", MetricPP, 100, 150), row("a", MetricPP, 200, 300), row("a", MetricPP, 50, 75),
			row("b", MetricPP, 100, 50), row("b", MetricPP, 10, 5),
		}, map[Metric]float64{MetricPP: 0}},
		{"spread within a source stays", []RowResult{
			// ratios 1.0, 1.2, 1.44: median 1.2, so 1/1.2−1 and 1.2−1 remain
			row("a", MetricTTFT, 100, 100), row("a", MetricTTFT, 100, 120), row("a", MetricTTFT, 100, 144),
		}, map[Metric]float64{MetricTTFT: 16.7}},
		{"unpredicted rows and metrics apart", []RowResult{
			row("a", MetricTG, 10, 20), row("a", MetricTG, 10, 20),
			{Row: Measurement{Source: "a", Metric: MetricTG, Value: 10}, Err: "cannot predict"},
			row("a", MetricTPOT, 10, 11),
		}, map[Metric]float64{MetricTG: 0, MetricTPOT: 0}},
	}
	for _, c := range cases {
		got := withinGroupMdAPE(c.res, bySource)
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			continue
		}
		for m, w := range c.want {
			if math.Abs(got[m]-w) > 0.1 {
				t.Errorf("%s: %s within-group MdAPE %.1f, want %.1f", c.name, m, got[m], w)
			}
		}
	}
}

// TestSourceWeights: rows alike at 0, sources alike at 1 (each source's
// weights sum to 1), the square root of a source's size between.
func TestSourceWeights(t *testing.T) {
	srcs := []string{"a", "a", "a", "a", "b"}
	cases := []struct {
		a    float64
		want []float64
	}{
		{0, []float64{1, 1, 1, 1, 1}},
		{1, []float64{0.25, 0.25, 0.25, 0.25, 1}},
		{0.5, []float64{0.5, 0.5, 0.5, 0.5, 1}},
	}
	for _, c := range cases {
		got := sourceWeights(srcs, c.a)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-12 {
				t.Errorf("a=%g: weight %d = %g, want %g", c.a, i, got[i], c.want[i])
			}
		}
	}
}
