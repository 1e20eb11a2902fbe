package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

// gib formats bytes as GiB with one decimal ("23.6 GiB"), or MiB below one
// GiB.
func gib(b planner.Bytes) string {
	if b < 0 {
		return "-" + gib(-b)
	}
	if b < planner.GiB {
		return fmt.Sprintf("%.0f MiB", float64(b)/float64(planner.MiB))
	}
	return fmt.Sprintf("%.1f GiB", b.GiBf())
}

// tps formats a throughput without unit: "1,234", "56.7", "3.21".
func tps(r planner.TokensPerSecond) string {
	v := float64(r)
	switch {
	case v <= 0 || math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case v >= 1000:
		return thousands(int64(math.Round(v)))
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// ms formats a latency: "850 ms", "12.3 ms", "1.42 s".
func ms(m planner.Milliseconds) string {
	v := float64(m)
	switch {
	case v <= 0 || math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case v >= 1000:
		return fmt.Sprintf("%.2f s", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// thousands groups digits with commas: 12345 → "12,345".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteRune(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// tokens formats a token count: "8k", "131k", "4,000".
func tokens(t planner.Tokens) string {
	if t <= 0 {
		return "–"
	}
	if t >= 1024 && t%1024 == 0 {
		return fmt.Sprintf("%dk", t/1024)
	}
	return thousands(int64(t))
}

// age says how long ago t was, coarsely: "just now", "5 minutes ago",
// "3 days ago".
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "never"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return planner.Plural(int(d/time.Minute), "minute") + " ago"
	case d < 48*time.Hour:
		return planner.Plural(int(d/time.Hour), "hour") + " ago"
	}
	return planner.Plural(int(d/(24*time.Hour)), "day") + " ago"
}

// usersText is "1 user" or "n users".
func usersText(n int) string { return planner.Plural(n, "user") }

// parseTokens reads a context entry: "" means automatic (0).
func parseTokens(s string) (planner.Tokens, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "auto") {
		return 0, nil
	}
	return planner.ParseTokens(s)
}

// parseCount reads a positive whole number ("" = def).
func parseCount(s string, def, limit int, what string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > limit {
		return 0, fmt.Errorf("%s %q: use a whole number from 1 to %d", what, s, limit)
	}
	return n, nil
}

// parseMillis reads a latency target as the CLI's --slo does
// (app.ParseDuration: "500", "500ms", "2s"); "" or "0" = none.
func parseMillis(s, what string) (planner.Milliseconds, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return 0, nil
	}
	ms, err := app.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", what, s, err)
	}
	return ms, nil
}
