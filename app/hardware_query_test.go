package app

import (
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// Device searches over the embedded catalog: words, memory and price
// bounds, and every device a search keeps answers it.
func TestHardwareQuery(t *testing.T) {
	a, err := Open(Options{NoUserDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	c := a.Catalog()
	cases := []struct {
		q        string
		must     []string // ids that must be found
		mustNot  []string
		check    func(h planner.Hardware) bool
		minFound int
	}{
		{q: "rtx 4090", must: []string{"nvidia-rtx-4090"}, mustNot: []string{"nvidia-h100-sxm5-80gb"}, minFound: 1},
		{q: "4090", must: []string{"nvidia-rtx-4090"}, minFound: 1}, // a model number is a word, not a bound
		{q: ">=80gb", must: []string{"nvidia-h100-sxm5-80gb", "amd-mi300x"}, mustNot: []string{"nvidia-rtx-4090"},
			check: func(h planner.Hardware) bool { return h.Memory >= planner.Bytes(80*planner.GiB*97/100) }, minFound: 5},
		{q: "24gb nvidia", must: []string{"nvidia-rtx-4090"}, mustNot: []string{"nvidia-rtx-3060"},
			check: func(h planner.Hardware) bool { return strings.Contains(strings.ToLower(h.Name), "nvidia") }, minFound: 2},
		{q: "<=16GiB", mustNot: []string{"nvidia-rtx-4090"}, check: func(h planner.Hardware) bool { return h.Memory <= planner.Bytes(16*planner.GiB*103/100) }, minFound: 2},
		{q: "<$2000", mustNot: []string{"nvidia-h100-sxm5-80gb"}, check: func(h planner.Hardware) bool { return h.PriceUSD > 0 && h.PriceUSD <= 2000 }, minFound: 3},
		{q: ">2,000$ amd", check: func(h planner.Hardware) bool { return h.PriceUSD > 2000 }, minFound: 1},
		{q: "no-such-device-xyz", minFound: 0},
	}
	for _, tc := range cases {
		hq := ParseHardwareQuery(tc.q)
		found := map[string]bool{}
		for _, h := range c.Hardware {
			if hq.Matches(h, h.Name) {
				found[h.ID] = true
				if tc.check != nil && !tc.check(h) {
					t.Errorf("%q found %s (%s), which does not answer it", tc.q, h.ID, h.Name)
				}
			}
		}
		for _, id := range tc.must {
			if !found[id] {
				t.Errorf("%q (%+v) misses %s", tc.q, hq, id)
			}
		}
		for _, id := range tc.mustNot {
			if found[id] {
				t.Errorf("%q (%+v) finds %s", tc.q, hq, id)
			}
		}
		if len(found) < tc.minFound || tc.minFound == 0 && len(found) > 0 {
			t.Errorf("%q found %d devices, want at least %d (none when 0)", tc.q, len(found), tc.minFound)
		}
	}
}

// This machine, whose memory and price are unknown, is matched on the
// words of a search alone.
func TestHardwareQueryWordsOnly(t *testing.T) {
	hq := ParseHardwareQuery("nvidia >=80gb <$1000")
	if len(hq.Words) != 1 || hq.MinMem == 0 || hq.MaxPrice != 1000 || !hq.NeedPrice {
		t.Fatalf("parsed %+v", hq)
	}
	this := planner.Hardware{ID: "this-machine", Name: "This machine (NVIDIA)"}
	if hq.Matches(this, this.Name) {
		t.Error("a device without memory or price answers memory and price bounds")
	}
	if !hq.WordsOnly().Matches(this, this.Name) {
		t.Error("the words alone do not match this machine")
	}
}

// FuzzParseHardwareQuery: any search text parses without panicking into
// bounds that are not negative, and matching it against a device is safe.
func FuzzParseHardwareQuery(f *testing.F) {
	for _, q := range []string{"rtx 4090", ">=48gb", "<$2000", "=24GiB nvidia", ">2,000$ amd", "$", ">=", "1e309gb", "-5gb", "<=-$3"} {
		f.Add(q)
	}
	h := planner.Hardware{ID: "x", Name: "X", Memory: 24 * planner.GiB, PriceUSD: 1599}
	f.Fuzz(func(t *testing.T, q string) {
		hq := ParseHardwareQuery(q)
		if hq.MinMem < 0 || hq.MaxMem < 0 || hq.MinPrice < 0 || hq.MaxPrice < 0 {
			t.Fatalf("%q: negative bound %+v", q, hq)
		}
		_ = hq.Matches(h, h.Name+" "+q)
		_ = hq.WordsOnly().Matches(h, h.Name)
	})
}
