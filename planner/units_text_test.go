package planner

import (
	"math"
	"testing"
)

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{
		"2.5": 2.5, "2.5/s": 2.5, " 90/min ": 1.5, "1e6": 1e6, "60 /min": 1,
	} {
		got, err := ParseRate(in)
		if err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("ParseRate(%q) = %g, %v; want %g", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "abc", "NaN", "Inf", "2e6", "3/h", "/s", "1,5"} {
		if got, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) = %g, want an error", in, got)
		}
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"2.5", "90/min", "1e6/s", "NaN", "-0", " 3 /s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err == nil && (!(r > 0) || math.IsInf(r, 0) || r > 1e6) {
			t.Fatalf("ParseRate(%q) = %g without an error", s, r)
		}
	})
}

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		unit string
		want string
	}{{1, "user", "1 user"}, {0, "user", "0 users"}, {8, "sequence", "8 sequences"}, {2, "slot", "2 slots"}} {
		if got := Plural(c.n, c.unit); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.unit, got, c.want)
		}
	}
}
