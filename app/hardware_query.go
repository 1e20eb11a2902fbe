package app

import (
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// HardwareQuery is what a device search asks: words every device must
// contain (in its name, id or label), and bounds on memory and list
// price (0 = open). The GUI's device pickers and Compare screen search
// with it.
type HardwareQuery struct {
	Words              []string
	MinMem, MaxMem     planner.Bytes
	MinPrice, MaxPrice float64
	// NeedPrice: a price bound was asked, so a device without a list
	// price does not answer it.
	NeedPrice bool
}

// ParseHardwareQuery reads a search such as "nvidia 24gb", ">=48gb",
// "<$2000" or "amd >64g <3000$": a word with a comparison and a number is
// a bound on memory (with a unit g, gb, gib; a bare "24gb" asks for at
// least that much) or on price (with a $); other words must appear in the
// device's name or id. Anything it cannot read as a bound is a word.
func ParseHardwareQuery(q string) HardwareQuery {
	var hq HardwareQuery
	for _, w := range strings.Fields(strings.ToLower(q)) {
		if !hq.bound(w) {
			hq.Words = append(hq.Words, w)
		}
	}
	return hq
}

// bound reads one word as a memory or price bound; false when it is none.
func (hq *HardwareQuery) bound(w string) bool {
	op := ""
	for _, p := range []string{">=", "<=", ">", "<", "="} {
		if strings.HasPrefix(w, p) {
			op, w = p, w[len(p):]
			break
		}
	}
	price := strings.HasPrefix(w, "$") || strings.HasSuffix(w, "$")
	num := strings.Trim(w, "$")
	unit := ""
	if !price {
		for _, u := range []string{"gib", "gb", "g"} {
			if strings.HasSuffix(num, u) {
				unit, num = u, strings.TrimSuffix(num, u)
				break
			}
		}
		if unit == "" {
			return false // "4090" is a name, not a bound
		}
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
	if err != nil || v < 0 || v > 1e9 {
		return false
	}
	if price {
		hq.NeedPrice = true
		// A bare "$2000" asks for at most that much.
		hq.MinPrice, hq.MaxPrice = queryBounds(op, v, true, hq.MinPrice, hq.MaxPrice)
		return true
	}
	// A bare "24gb" asks for at least that much memory.
	lo, hi := queryBounds(op, v*float64(planner.GiB), false, float64(hq.MinMem), float64(hq.MaxMem))
	hq.MinMem, hq.MaxMem = planner.Bytes(lo), planner.Bytes(hi)
	return true
}

// queryBounds applies a comparison with v to the bounds lo..hi (0 = open): "<"
// and "<=" set hi, ">" and ">=" set lo, "=" both; no operator sets hi
// when bareIsMax, else lo.
func queryBounds(op string, v float64, bareIsMax bool, lo, hi float64) (float64, float64) {
	switch {
	case op == "<" || op == "<=" || op == "" && bareIsMax:
		return lo, v
	case op == "=":
		return v, v
	}
	return v, hi
}

// Matches reports whether device h (listed as label) answers the query.
// Memory compares with 3% slack, as catalogs round (a "24 GB" card has
// 23.99 GiB).
func (hq HardwareQuery) Matches(h planner.Hardware, label string) bool {
	hay := strings.ToLower(label + " " + h.ID)
	for _, w := range hq.Words {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	mem := float64(h.Memory)
	if hq.MinMem > 0 && mem < 0.97*float64(hq.MinMem) || hq.MaxMem > 0 && mem > 1.03*float64(hq.MaxMem) {
		return false
	}
	if hq.NeedPrice && h.PriceUSD <= 0 {
		return false
	}
	if hq.MinPrice > 0 && h.PriceUSD < hq.MinPrice || hq.MaxPrice > 0 && h.PriceUSD > hq.MaxPrice {
		return false
	}
	return true
}

// WordsOnly is the query without its memory and price bounds: what a
// device whose memory and price are unknown (this machine, before a
// probe) can be matched against.
func (hq HardwareQuery) WordsOnly() HardwareQuery { return HardwareQuery{Words: hq.Words} }
