package ui

import (
	"testing"

	"fyne.io/fyne/v2/test"
)

// The benchmarks time a screen's update path as a change of input runs
// it: read the widgets, call the service, apply the result to the widgets
// (what the background goroutine and fyne.Do do, here in one goroutine).

func BenchmarkCanRunUpdate(b *testing.B) {
	a := test.NewTempApp(b)
	svc := newFakeService()
	s := NewCanRunScreen(svc, testOptions())
	w := a.NewWindow("bench")
	w.SetContent(s.Content())
	w.Resize(DefaultSize)
	s.picker.set(svc.cat.Models[0])
	contexts := []string{"8k", "16k", "32k", "4k"}
	b.ResetTimer()
	for i := range b.N {
		s.context.Text = contexts[i%len(contexts)]
		in, err := s.input()
		if err != nil {
			b.Fatal(err)
		}
		s.compute(in)()
	}
}

func BenchmarkPlanUpdate(b *testing.B) {
	a := test.NewTempApp(b)
	svc := newFakeService()
	s := NewPlanScreen(svc, testOptions())
	w := a.NewWindow("bench")
	w.SetContent(s.Content())
	w.Resize(DefaultSize)
	s.picker.set(svc.cat.Models[0])
	users := []string{"8", "16", "4", "32"}
	b.ResetTimer()
	for i := range b.N {
		s.users.Text = users[i%len(users)]
		in, err := s.readInput()
		if err != nil {
			b.Fatal(err)
		}
		s.compute(in)()
	}
}

// BenchmarkPlanCharts is the cost of drawing both Plan charts at
// 1280×800 sizes, paid when the window next paints them.
func BenchmarkPlanCharts(b *testing.B) {
	test.NewTempApp(b)
	st := currentStyle(96)
	for range b.N {
		if _, err := throughputChart(testCurve, 440, 300, st); err != nil {
			b.Fatal(err)
		}
		if _, err := ttftChart(testCurve, 2000, 440, 300, st); err != nil {
			b.Fatal(err)
		}
	}
}
