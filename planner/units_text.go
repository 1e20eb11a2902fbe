package planner

import (
	"fmt"
	"strconv"
	"strings"
)

// MarshalText writes b exactly ("80 GiB", "512 MiB", "123456").
func (b Bytes) MarshalText() ([]byte, error) {
	switch {
	case b != 0 && b%GiB == 0:
		return []byte(fmt.Sprintf("%d GiB", b/GiB)), nil
	case b != 0 && b%MiB == 0:
		return []byte(fmt.Sprintf("%d MiB", b/MiB)), nil
	}
	return []byte(strconv.FormatInt(int64(b), 10)), nil
}

// UnmarshalText accepts anything ParseBytes does.
func (b *Bytes) UnmarshalText(t []byte) error {
	v, err := ParseBytes(string(t))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// MarshalJSON writes b as a plain number of bytes for machines.
func (b Bytes) MarshalJSON() ([]byte, error) { return []byte(strconv.FormatInt(int64(b), 10)), nil }

// UnmarshalJSON accepts a number of bytes or a size string.
func (b *Bytes) UnmarshalJSON(d []byte) error {
	s := strings.Trim(string(d), `"`)
	return b.UnmarshalText([]byte(s))
}

// MarshalText writes p exactly in billions ("8.03B").
func (p Params) MarshalText() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(p)/1e9, 'f', -1, 64) + "B"), nil
}

// UnmarshalText accepts anything ParseParams does.
func (p *Params) UnmarshalText(t []byte) error {
	v, err := ParseParams(string(t))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// MarshalJSON writes p as a plain count.
func (p Params) MarshalJSON() ([]byte, error) { return []byte(strconv.FormatInt(int64(p), 10)), nil }

// UnmarshalJSON accepts a count or a string like "8B".
func (p *Params) UnmarshalJSON(d []byte) error {
	return p.UnmarshalText([]byte(strings.Trim(string(d), `"`)))
}

// ParseRate reads an arrival rate in requests/s: "2.5", "2.5/s" or
// "90/min" (spaces allowed around the parts).
func ParseRate(v string) (float64, error) {
	v = strings.TrimSpace(v)
	per := 1.0
	switch {
	case strings.HasSuffix(v, "/min"):
		v, per = strings.TrimSuffix(v, "/min"), 60
	case strings.HasSuffix(v, "/s"):
		v = strings.TrimSuffix(v, "/s")
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(f > 0) || f > 1e6 {
		return 0, fmt.Errorf("want requests per second above 0 and at most 1e6, like 2.5, 2.5/s or 90/min")
	}
	return f / per, nil
}

// Plural counts a unit in English: "1 user", "8 users".
func Plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
