package planner

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Bytes is an amount of memory in bytes.
type Bytes int64

// Binary and decimal byte units.
const (
	KiB Bytes = 1 << 10
	MiB Bytes = 1 << 20
	GiB Bytes = 1 << 30
	TiB Bytes = 1 << 40
	KB  Bytes = 1000
	MB  Bytes = 1000 * KB
	GB  Bytes = 1000 * MB
	TB  Bytes = 1000 * GB
)

// GiBf returns b in GiB as a float.
func (b Bytes) GiBf() float64 { return float64(b) / float64(GiB) }

// String formats b with a binary unit, e.g. "13.5 GiB".
func (b Bytes) String() string {
	neg := ""
	v := float64(b)
	if v < 0 {
		neg, v = "-", -v
	}
	switch {
	case v >= float64(TiB):
		return fmt.Sprintf("%s%.2f TiB", neg, v/float64(TiB))
	case v >= float64(GiB):
		return fmt.Sprintf("%s%.2f GiB", neg, v/float64(GiB))
	case v >= float64(MiB):
		return fmt.Sprintf("%s%.1f MiB", neg, v/float64(MiB))
	case v >= float64(KiB):
		return fmt.Sprintf("%s%.1f KiB", neg, v/float64(KiB))
	}
	return fmt.Sprintf("%s%d B", neg, int64(v))
}

var byteUnits = map[string]Bytes{
	"": 1, "b": 1,
	"k": KiB, "kib": KiB, "kb": KB,
	"m": MiB, "mib": MiB, "mb": MB,
	"g": GiB, "gib": GiB, "gb": GB,
	"t": TiB, "tib": TiB, "tb": TB,
}

// ParseBytes parses "24GiB", "24 GB", "512MiB", "80g" or a plain number of
// bytes. Bare k/m/g/t suffixes are binary. Negative or non-finite sizes are
// rejected.
func ParseBytes(s string) (Bytes, error) {
	num, unit := splitNumber(s)
	mult, ok := byteUnits[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", s, unit)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("size %q: not a number", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("size %q: must not be negative", s)
	}
	if v*float64(mult) > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return Bytes(v * float64(mult)), nil
}

func splitNumber(s string) (num, unit string) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsLetter(r) && r != 'e' && r != 'E'
	})
	if i < 0 {
		return s, ""
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i:])
}

// Tokens is a count of tokens (context length, KV capacity, prompt length).
type Tokens int64

// String formats t compactly: 4096, "32k", "128k", "1.5M".
func (t Tokens) String() string {
	switch {
	case t >= 1_000_000 && t%1_000_000 == 0:
		return fmt.Sprintf("%dM", t/1_000_000)
	case t >= 1024 && t%1024 == 0:
		return fmt.Sprintf("%dk", t/1024)
	}
	return strconv.FormatInt(int64(t), 10)
}

// ParseTokens parses "4096", "32k" (×1024), "128K", "1M" (×1,000,000) or
// "100000". Negative counts are rejected.
func ParseTokens(s string) (Tokens, error) {
	num, unit := splitNumber(s)
	mult := int64(1)
	switch strings.ToLower(unit) {
	case "":
	case "k":
		mult = 1024
	case "m":
		mult = 1_000_000
	default:
		return 0, fmt.Errorf("token count %q: unknown suffix %q (use k or M)", s, unit)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("token count %q: not a number", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("token count %q: must not be negative", s)
	}
	if v*float64(mult) > 1e12 {
		return 0, fmt.Errorf("token count %q: absurdly large (over 10^12 tokens)", s)
	}
	return Tokens(math.Round(v * float64(mult))), nil
}

// TokensPerSecond is a throughput.
type TokensPerSecond float64

func (r TokensPerSecond) String() string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f tok/s", float64(r))
	case r >= 10:
		return fmt.Sprintf("%.1f tok/s", float64(r))
	}
	return fmt.Sprintf("%.2f tok/s", float64(r))
}

// Params is a count of model parameters.
type Params int64

// String formats p as "8.03B" or "350M".
func (p Params) String() string {
	if p >= 1_000_000_000 {
		return fmt.Sprintf("%.2fB", float64(p)/1e9)
	}
	return fmt.Sprintf("%.0fM", float64(p)/1e6)
}

// ParseParams parses "8.03B", "350M" or a plain count.
func ParseParams(s string) (Params, error) {
	num, unit := splitNumber(s)
	mult := 1.0
	switch strings.ToLower(unit) {
	case "":
	case "k":
		mult = 1e3
	case "m":
		mult = 1e6
	case "b":
		mult = 1e9
	case "t":
		mult = 1e12
	default:
		return 0, fmt.Errorf("parameter count %q: unknown suffix %q", s, unit)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v*mult > 1e15 {
		return 0, fmt.Errorf("parameter count %q: not a sane number", s)
	}
	return Params(v * mult), nil
}

// Milliseconds is a latency in milliseconds.
type Milliseconds float64

func (m Milliseconds) String() string {
	if m >= 10000 {
		return fmt.Sprintf("%.1f s", float64(m)/1000)
	}
	if m >= 100 {
		return fmt.Sprintf("%.0f ms", float64(m))
	}
	return fmt.Sprintf("%.1f ms", float64(m))
}
