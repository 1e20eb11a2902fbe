package planner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Release is an engine release as users name it: a semantic version
// ("0.11.0", "v0.6.5", "3.3.5", "0.6.3.post1") or a llama.cpp build
// number ("b6500"). The zero Release means "the newest release Headroom
// has rules for".
type Release struct {
	// Build is a llama.cpp build number (b6500 → 6500); zero for
	// semantic versions.
	Build int
	// Major, Minor and Patch of a semantic version.
	Major, Minor, Patch int
}

// ErrBadRelease marks an engine version ParseRelease cannot read.
var ErrBadRelease = errors.New("bad engine version")

// ParseRelease reads "0.11.0", "v0.6.5", "0.5", "0.6.3.post1", "3.3.5-rocm"
// or "b6500". Empty input, "latest" and "current" give the zero Release
// (newest). Anything else is an error wrapping ErrBadRelease.
func ParseRelease(s string) (Release, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch t {
	case "", "latest", "current", "newest", "main", "master":
		return Release{}, nil
	}
	if len(t) > 1 && t[0] == 'b' && isDigits(t[1:]) {
		n, err := strconv.Atoi(t[1:])
		if err != nil || n <= 0 {
			return Release{}, fmt.Errorf("%w %q: a llama.cpp build is b<number>, e.g. b6500", ErrBadRelease, s)
		}
		return Release{Build: n}, nil
	}
	t = strings.TrimPrefix(t, "v")
	parts := strings.SplitN(t, ".", 4)
	if len(parts) < 2 {
		return Release{}, fmt.Errorf("%w %q: use a version such as 0.11.0 or a llama.cpp build such as b6500", ErrBadRelease, s)
	}
	var nums [3]int
	for i := 0; i < 3 && i < len(parts); i++ {
		p := parts[i]
		if i == len(parts)-1 || i == 2 {
			p = leadingDigits(p) // 0.6.3.post1, 3.3.5-rocm, 0.5.4rc1
		}
		if p == "" || !isDigits(p) || len(p) > 6 {
			return Release{}, fmt.Errorf("%w %q: part %d is not a number", ErrBadRelease, s, i+1)
		}
		nums[i], _ = strconv.Atoi(p)
	}
	return Release{Major: nums[0], Minor: nums[1], Patch: nums[2]}, nil
}

// MustRelease is ParseRelease for constants in the rule tables; it panics
// on a typo there, never on user input.
func MustRelease(s string) Release {
	r, err := ParseRelease(s)
	if err != nil {
		panic(err)
	}
	return r
}

// IsNewest reports whether r is the zero Release (the newest rules).
func (r Release) IsNewest() bool { return r == Release{} }

// Compare orders two releases of the same engine: -1, 0 or 1. The zero
// Release (newest) sorts after every other.
func (r Release) Compare(o Release) int {
	switch {
	case r == o:
		return 0
	case r.IsNewest():
		return 1
	case o.IsNewest():
		return -1
	}
	for _, d := range [...]int{r.Build - o.Build, r.Major - o.Major, r.Minor - o.Minor, r.Patch - o.Patch} {
		if d != 0 {
			if d < 0 {
				return -1
			}
			return 1
		}
	}
	return 0
}

// AtLeast reports whether r is o or newer.
func (r Release) AtLeast(o Release) bool { return r.Compare(o) >= 0 }

// String prints b6500 or 0.11.0; "newest" for the zero Release.
func (r Release) String() string {
	switch {
	case r.IsNewest():
		return "newest"
	case r.Build > 0:
		return fmt.Sprintf("b%d", r.Build)
	}
	return fmt.Sprintf("%d.%d.%d", r.Major, r.Minor, r.Patch)
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
