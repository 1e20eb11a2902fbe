package planner

import (
	"fmt"
	"sort"
	"strings"
)

// Catalog is the set of known devices, models, formats and engines. It is
// filled by package profiles (embedded TOML plus user overrides).
type Catalog struct {
	Hardware []Hardware
	Models   []Model
	Quants   []Quant
	KVTypes  []KVType
	Engines  []Engine
	// Memory and Perf are the fitted constants (nil = defaults).
	Memory *MemoryParams
	Perf   *PerfParams
}

// NotFoundError says an id matched nothing; Suggestions holds the closest ids.
type NotFoundError struct {
	Kind        string // "hardware", "model", "quant", "kv type", "engine"
	Query       string
	Suggestions []string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("unknown %s %q", e.Kind, e.Query)
	if len(e.Suggestions) > 0 {
		msg += "; did you mean " + strings.Join(e.Suggestions, ", ") + "?"
	}
	return msg
}

// AmbiguousError says a name fragment matched several entries.
type AmbiguousError struct {
	Kind    string
	Query   string
	Matches []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s %q matches %d entries: %s; give one id", e.Kind, e.Query, len(e.Matches), strings.Join(e.Matches, ", "))
}

// normalize lowercases and drops separators so "RTX 4090" matches
// "nvidia-rtx-4090".
func normalize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r == ' ' || r == '-' || r == '_' || r == '/' || r == '.' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// resolve finds one id among ids/names: exact id, exact name or alias,
// then a unique fragment match (on normalized id, name or aliases). With
// no match the error suggests the closest ids (by id, name or alias);
// with several it lists them.
func resolve(kind, q string, ids, names []string, aliases [][]string) (int, error) {
	if strings.TrimSpace(q) == "" {
		return -1, fmt.Errorf("empty %s name", kind)
	}
	for i, id := range ids {
		if strings.EqualFold(id, q) {
			return i, nil
		}
	}
	nq := normalize(q)
	var exact []int
	for i := range ids {
		if wholeOf(nq, ids[i], names[i], aliases[i]) {
			exact = append(exact, i)
		}
	}
	switch len(exact) {
	case 0:
	case 1:
		return exact[0], nil
	default: // an alias two devices share ("Mac Studio M3 Ultra")
		return -1, ambiguous(kind, q, ids, exact)
	}
	var hits []int
	for i := range ids {
		if fragmentOf(nq, ids[i], names[i], aliases[i]) {
			hits = append(hits, i)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return -1, &NotFoundError{Kind: kind, Query: q, Suggestions: closestNamed(q, ids, names, aliases, 3)}
	}
	return -1, ambiguous(kind, q, ids, hits)
}

// ambiguous is the error for several matching entries.
func ambiguous(kind, q string, ids []string, hits []int) error {
	m := make([]string, len(hits))
	for j, i := range hits {
		m[j] = ids[i]
	}
	return &AmbiguousError{Kind: kind, Query: q, Matches: m}
}

// wholeOf reports whether the normalized query nq is the whole id, name
// or one alias.
func wholeOf(nq, id, name string, aliases []string) bool {
	if normalize(id) == nq || normalize(name) == nq {
		return true
	}
	for _, a := range aliases {
		if normalize(a) == nq {
			return true
		}
	}
	return false
}

// fragmentOf reports whether the normalized query nq is part of the id,
// the name or one of the aliases.
func fragmentOf(nq, id, name string, aliases []string) bool {
	if strings.Contains(normalize(id), nq) || strings.Contains(normalize(name), nq) {
		return true
	}
	for _, a := range aliases {
		if strings.Contains(normalize(a), nq) {
			return true
		}
	}
	return false
}

// closestNamed is closest over ids, but an entry's distance is the least
// of its id's, its name's and its aliases' (names and aliases may be nil),
// so a misspelt "mac stuido m3 ultra" finds the device whose alias is
// "Mac Studio M3 Ultra".
func closestNamed(q string, ids, names []string, aliases [][]string, n int) []string {
	nq := normalize(q)
	type cand struct {
		id string
		d  int
	}
	cs := make([]cand, 0, len(ids))
	for i, id := range ids {
		d := idDistance(nq, id)
		var others []string
		if i < len(names) && names[i] != "" {
			others = append(others, names[i])
		}
		if i < len(aliases) {
			others = append(others, aliases[i]...)
		}
		for _, s := range others {
			d = min(d, levenshtein(nq, normalize(s)))
		}
		cs = append(cs, cand{id, d})
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		if cs[i].d <= len(nq)/2+3 {
			out = append(out, cs[i].id)
		}
	}
	return out
}

// idDistance is the edit distance from nq to an id or to its last path
// element (the name part of a repo id).
func idDistance(nq, id string) int {
	d := levenshtein(nq, normalize(id))
	if k := strings.LastIndex(id, "/"); k >= 0 {
		d = min(d, levenshtein(nq, normalize(id[k+1:])))
	}
	return d
}

// closest returns up to n ids nearest to q by edit distance on normalized
// strings (suffix of a repo id counts too).
func closest(q string, ids []string, n int) []string {
	return closestNamed(q, ids, nil, nil, n)
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// FindHardware resolves an id or name fragment ("4090", "strix halo").
func (c *Catalog) FindHardware(q string) (Hardware, error) {
	ids, names := make([]string, len(c.Hardware)), make([]string, len(c.Hardware))
	al := make([][]string, len(c.Hardware))
	for i, h := range c.Hardware {
		ids[i], names[i], al[i] = h.ID, h.Name, h.Aliases
	}
	i, err := resolve("hardware", q, ids, names, al)
	if err != nil {
		return Hardware{}, err
	}
	return c.Hardware[i], nil
}

// FindModel resolves a Hugging Face id, its last path element or a fragment.
func (c *Catalog) FindModel(q string) (Model, error) {
	ids, names := make([]string, len(c.Models)), make([]string, len(c.Models))
	al := make([][]string, len(c.Models))
	for i, m := range c.Models {
		ids[i], names[i] = m.ID, m.Name
		if k := strings.LastIndex(m.ID, "/"); k >= 0 {
			al[i] = []string{m.ID[k+1:]}
		}
	}
	i, err := resolve("model", q, ids, names, al)
	if err != nil {
		return Model{}, err
	}
	return c.Models[i], nil
}

// FindQuant resolves a quantization id or alias (q4_k_m, Q4_K_M, awq, int4).
func (c *Catalog) FindQuant(q string) (Quant, error) {
	for _, x := range c.Quants {
		if x.ID == q { // a catalog id as the planner passes it: no normalizing
			return x, nil
		}
	}
	ids, names := make([]string, len(c.Quants)), make([]string, len(c.Quants))
	al := make([][]string, len(c.Quants))
	for i, x := range c.Quants {
		ids[i], names[i], al[i] = x.ID, x.Name, x.Aliases
	}
	i, err := resolveExact("quantization", q, ids, al)
	if err != nil {
		return Quant{}, err
	}
	return c.Quants[i], nil
}

// FindKVType resolves a KV-cache type id or alias (f16, fp8, q8_0).
func (c *Catalog) FindKVType(q string) (KVType, error) {
	for _, x := range c.KVTypes {
		if x.ID == q { // a catalog id as the planner passes it: no normalizing
			return x, nil
		}
	}
	ids := make([]string, len(c.KVTypes))
	al := make([][]string, len(c.KVTypes))
	for i, x := range c.KVTypes {
		ids[i], al[i] = x.ID, x.Aliases
	}
	i, err := resolveExact("KV-cache type", q, ids, al)
	if err != nil {
		return KVType{}, err
	}
	return c.KVTypes[i], nil
}

// FindEngine resolves an engine id or alias (vllm, llama-server, llamacpp,
// text-generation-launcher: ParseEngine's table), or a catalog engine's
// name.
func (c *Catalog) FindEngine(q string) (Engine, error) {
	if id, err := ParseEngine(q); err == nil {
		for _, e := range c.Engines {
			if e.ID == id {
				return e, nil
			}
		}
	}
	ids := make([]string, len(c.Engines))
	al := make([][]string, len(c.Engines))
	for i, x := range c.Engines {
		ids[i] = string(x.ID)
		al[i] = []string{x.Name}
	}
	i, err := resolveExact("engine", q, ids, al)
	if err != nil {
		return Engine{}, err
	}
	return c.Engines[i], nil
}

// resolveExact matches ids and aliases after normalization only (no
// fragments: "q4" must not silently pick one of several 4-bit formats).
func resolveExact(kind, q string, ids []string, aliases [][]string) (int, error) {
	nq := normalize(q)
	if nq == "" {
		return -1, fmt.Errorf("empty %s name", kind)
	}
	for i, id := range ids {
		if normalize(id) == nq {
			return i, nil
		}
		for _, a := range aliases[i] {
			if normalize(a) == nq {
				return i, nil
			}
		}
	}
	return -1, &NotFoundError{Kind: kind, Query: q, Suggestions: closest(q, ids, 3)}
}
