package ui

import (
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/headroom-planner/headroom/planner"
)

func TestMemBar(t *testing.T) {
	test.NewTempApp(t)
	b := newMemBar(20, true)
	b.set(24*planner.GiB, []memSegment{
		{"Weights", 15 * planner.GiB, palette.weights},
		{"KV cache", 4 * planner.GiB, palette.kv},
		{"Empty", 0, palette.host},
		{"Overhead", 2 * planner.GiB, palette.overhead},
	})
	if len(b.segs) != 3 {
		t.Errorf("zero-byte segments should be dropped: %d left", len(b.segs))
	}
	if b.free() != 3*planner.GiB {
		t.Errorf("free %v, want 3 GiB", b.free())
	}
	b.Resize(b.MinSize().Max(fyne.NewSize(600, 0)))
	test.AssertObjectRendersToMarkup(t, "membar.xml", b)

	b.set(10*planner.GiB, []memSegment{{"Weights", 12 * planner.GiB, palette.weights}})
	if b.free() != 0 {
		t.Errorf("an overfull bar has free %v", b.free())
	}
}

func TestJobLatestWins(t *testing.T) {
	test.NewTempApp(t)
	j := newJob(20*time.Millisecond, nil, nil)
	var mu sync.Mutex
	var applied []int
	for i := range 5 {
		j.run(func() func() {
			return func() {
				mu.Lock()
				applied = append(applied, i)
				mu.Unlock()
			}
		})
	}
	j.wait()
	if len(applied) != 1 || applied[0] != 4 {
		t.Errorf("debounced runs applied %v, want only the last (4)", applied)
	}

	// A run superseded while working is not applied.
	applied = nil
	release := make(chan struct{})
	j.now(func() func() {
		<-release
		return func() { applied = append(applied, 1) }
	})
	j.now(func() func() { return func() { applied = append(applied, 2) } })
	close(release)
	j.wait()
	if len(applied) != 1 || applied[0] != 2 {
		t.Errorf("applied %v, want only the newer run (2)", applied)
	}

	// cancel drops a pending run.
	applied = nil
	j.run(func() func() { return func() { applied = append(applied, 3) } })
	j.cancel()
	j.wait()
	if len(applied) != 0 {
		t.Errorf("cancelled run applied: %v", applied)
	}
}

func TestFormat(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct{ got, want string }{
		{gib(24 * planner.GiB), "24.0 GiB"},
		{gib(512 * planner.MiB), "512 MiB"},
		{tps(1234.4), "1,234"},
		{tps(456.7), "457"},
		{tps(45.67), "45.7"},
		{tps(4.567), "4.57"},
		{tps(0), "–"},
		{ms(1420), "1.42 s"},
		{ms(250), "250 ms"},
		{ms(12.34), "12.3 ms"},
		{tokens(8192), "8k"},
		{tokens(1280), "1,280"},
		{tokens(0), "–"},
		{age(now, now.Add(-30*time.Second)), "just now"},
		{age(now, now.Add(-5*time.Minute)), "5 minutes ago"},
		{age(now, now.Add(-time.Hour)), "1 hour ago"},
		{age(now, now.Add(-72*time.Hour)), "3 days ago"},
		{age(now, time.Time{}), "never"},
		{usersText(1), "1 user"},
		{usersText(8), "8 users"},
		{thousands(-1234567), "-1,234,567"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestParseInputs(t *testing.T) {
	if n, err := parseTokens(" 32k "); err != nil || n != 32768 {
		t.Errorf("parseTokens(32k) = %v, %v", n, err)
	}
	if n, err := parseTokens("auto"); err != nil || n != 0 {
		t.Errorf("parseTokens(auto) = %v, %v", n, err)
	}
	if _, err := parseTokens("-3"); err == nil {
		t.Error("negative context accepted")
	}
	if n, err := parseCount("", 7, 10, "users"); err != nil || n != 7 {
		t.Errorf("empty count = %v, %v, want the default", n, err)
	}
	for _, bad := range []string{"0", "11", "2.5", "many"} {
		if _, err := parseCount(bad, 1, 10, "users"); err == nil {
			t.Errorf("count %q accepted", bad)
		}
	}
	// The same latency syntax as the CLI's --slo: "2s" was refused here.
	for in, want := range map[string]planner.Milliseconds{"500 ms": 500, "500": 500, "2s": 2000, "1.5 s": 1500, "": 0, "0": 0} {
		if v, err := parseMillis(in, "TTFT"); err != nil || v != want {
			t.Errorf("parseMillis(%q) = %v, %v; want %v", in, v, err, want)
		}
	}
	for _, bad := range []string{"NaN", "-5", "inf", "1e12"} {
		if _, err := parseMillis(bad, "TTFT"); err == nil {
			t.Errorf("parseMillis(%q) accepted", bad)
		}
	}
	if _, err := parseMillis("soon", "TTFT"); err == nil {
		t.Error("a word accepted as milliseconds")
	}
}
