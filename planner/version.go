package planner

import (
	"strconv"
	"strings"
)

// VersionAtLeast reports whether version v (e.g. "0.6.3.post1", "v0.21.0",
// "b6327") is at least want ("0.6.0"). Unparsable or empty versions count as
// recent (engines are assumed current unless told otherwise).
func VersionAtLeast(v, want string) bool {
	a, ok := parseVersion(v)
	if !ok {
		return true
	}
	b, _ := parseVersion(want)
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return x > y
		}
	}
	return true
}

func parseVersion(v string) ([]int, bool) {
	v = strings.TrimPrefix(strings.TrimSpace(strings.ToLower(v)), "v")
	v = strings.TrimPrefix(v, "~")
	if v == "" {
		return nil, false
	}
	var out []int
	for _, p := range strings.Split(v, ".") {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		if end == 0 {
			break
		}
		n, err := strconv.Atoi(p[:end])
		if err != nil {
			return nil, false
		}
		out = append(out, n)
		if end < len(p) {
			break
		}
	}
	return out, len(out) > 0
}

// mlperfHarness reports whether an engine_version names an MLPerf
// submission ("MLPerf v4.1 submission") rather than a release: the
// submitter's own harness drives the engine's executor from LoadGen in
// one process, with no HTTP server and no streaming to clients.
func mlperfHarness(v string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "mlperf")
}
