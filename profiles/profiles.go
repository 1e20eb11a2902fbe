// Package profiles is Headroom's catalog: devices, models, weight formats,
// KV-cache types, engines and the fitted constants of the planner, as TOML
// files embedded in the binary (catalog/*.toml) plus whatever the user adds
// in their own directories.
//
// The embedded TOML is the source of truth; every entry keeps its facts'
// provenance in its notes and source fields ([spec], [V], [D], [U], [seed]).
// User files add entries or override embedded ones by id. A bad user file
// is reported with its path, line and key, and the rest of the catalog
// still loads.
package profiles

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/headroom-planner/headroom/internal/safefile"
	"github.com/headroom-planner/headroom/internal/textsafe"
	"github.com/headroom-planner/headroom/planner"
)

//go:embed catalog/*.toml
var embedded embed.FS

// Options says where to look for user profiles besides the embedded ones.
type Options struct {
	// Dirs are read in order after the embedded catalog; later entries
	// override earlier ones with the same id. Missing directories are
	// skipped silently.
	Dirs []string
}

// file is the shape of one TOML profile file; any section may be absent.
type file struct {
	Hardware []planner.Hardware    `toml:"hardware"`
	Model    []planner.Model       `toml:"model"`
	Quant    []planner.Quant       `toml:"quant"`
	KVType   []planner.KVType      `toml:"kv_type"`
	Engine   []planner.Engine      `toml:"engine"`
	Memory   *planner.MemoryParams `toml:"memory"`
	Perf     *planner.PerfParams   `toml:"perf"`
}

// FileError is a problem with one profile file, naming where.
type FileError struct {
	Path string
	Line int
	Key  string
	Err  error
}

// Error is "path:line: key K: problem", made printable: keys and parser
// messages quote the file, which may hold escape sequences.
func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": key %s", e.Key)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return textsafe.Printable(b.String(), maxErrorText)
}

// maxErrorText caps one problem's message.
const maxErrorText = 1024

func (e *FileError) Unwrap() error { return e.Err }

// Load reads the embedded catalog and then every *.toml in opt.Dirs. It
// returns the catalog, the problems found in user files (each a
// *FileError; those files or entries were skipped), and an error only when
// the embedded catalog itself is broken.
func Load(opt Options) (*planner.Catalog, []error, error) {
	c := &planner.Catalog{}
	mem := planner.DefaultMemoryParams
	perf := planner.DefaultPerfParams()
	c.Memory, c.Perf = &mem, &perf
	names, err := fs.Glob(embedded, "catalog/*.toml")
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(names)
	idx := newIndex(c)
	for _, n := range names {
		data, _ := embedded.ReadFile(n)
		errs := idx.merge("embedded:"+n, data)
		if len(errs) > 0 {
			return nil, nil, fmt.Errorf("embedded catalog is broken: %w", errors.Join(errs...))
		}
	}
	var problems []error
	for _, d := range opt.Dirs {
		files, err := filepath.Glob(filepath.Join(d, "*.toml"))
		if err != nil {
			problems = append(problems, &FileError{Path: d, Err: err})
			continue
		}
		sort.Strings(files)
		for _, p := range files {
			data, err := safefile.ReadFile(p, MaxFileBytes)
			if err != nil {
				problems = append(problems, &FileError{Path: p, Err: err})
				continue
			}
			problems = append(problems, idx.merge(p, data)...)
		}
	}
	return c, problems, nil
}

// MaxFileBytes bounds one user profile file. The whole embedded catalog is
// well under a MiB; a larger file is refused with its size, as are FIFOs
// and devices (read without blocking).
const MaxFileBytes = 16 << 20

// LoadFile merges one extra profile file into c (for tests and tools).
func LoadFile(c *planner.Catalog, path string, data []byte) []error {
	return newIndex(c).merge(path, data)
}

// index finds catalog entries by id, so merging n entries into a catalog
// of m costs O(n + m), not O(n·m) (an import had taken 61 s).
type index struct {
	c        *planner.Catalog
	hardware table[planner.Hardware]
	models   table[planner.Model]
	quants   table[planner.Quant]
	kvTypes  table[planner.KVType]
	engines  table[planner.Engine]
}

func newIndex(c *planner.Catalog) *index {
	return &index{c: c,
		hardware: newTable(c.Hardware, func(x planner.Hardware) string { return x.ID }),
		models:   newTable(c.Models, func(x planner.Model) string { return x.ID }),
		quants:   newTable(c.Quants, func(x planner.Quant) string { return x.ID }),
		kvTypes:  newTable(c.KVTypes, func(x planner.KVType) string { return x.ID }),
		engines:  newTable(c.Engines, func(x planner.Engine) string { return string(x.ID) }),
	}
}

// table is a slice with an index from id to position.
type table[T any] struct {
	pos map[string]int
	id  func(T) string
}

func newTable[T any](xs []T, id func(T) string) table[T] {
	t := table[T]{pos: make(map[string]int, len(xs)), id: id}
	for i, x := range xs {
		t.pos[id(x)] = i
	}
	return t
}

// upsert replaces the entry of xs with x's id, or appends x: later files
// override earlier ones, and the catalog keeps its first-seen order.
func (t table[T]) upsert(xs []T, x T) []T {
	k := t.id(x)
	if i, ok := t.pos[k]; ok {
		xs[i] = x
		return xs
	}
	t.pos[k] = len(xs)
	return append(xs, x)
}

func (ix *index) merge(path string, data []byte) []error {
	c := ix.c
	var f file
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return []error{tomlError(path, err)}
	}
	var errs []error
	for _, k := range md.Undecoded() {
		errs = append(errs, &FileError{Path: path, Key: k.String(), Err: errors.New("unknown key (typo?); ignored")})
	}
	for i, h := range f.Hardware {
		if err := checkHardware(h); err != nil {
			errs = append(errs, &FileError{Path: path, Key: fmt.Sprintf("hardware[%d] (id %q)", i, h.ID), Err: err})
			continue
		}
		c.Hardware = ix.hardware.upsert(c.Hardware, h)
	}
	for i, m := range f.Model {
		if err := checkModel(m); err != nil {
			errs = append(errs, &FileError{Path: path, Key: fmt.Sprintf("model[%d] (id %q)", i, m.ID), Err: err})
			continue
		}
		c.Models = ix.models.upsert(c.Models, m)
	}
	for i, q := range f.Quant {
		if q.ID == "" || q.LinearBPW <= 0 || q.LinearBPW > 32 || q.EmbedBPW <= 0 || q.HeadBPW <= 0 {
			errs = append(errs, &FileError{Path: path, Key: fmt.Sprintf("quant[%d] (id %q)", i, q.ID), Err: errors.New("needs id and linear_bpw, embed_bpw, head_bpw in (0, 32]")})
			continue
		}
		c.Quants = ix.quants.upsert(c.Quants, q)
	}
	for i, k := range f.KVType {
		if k.ID == "" || k.BytesPerElement <= 0 || k.BytesPerElement > 4 {
			errs = append(errs, &FileError{Path: path, Key: fmt.Sprintf("kv_type[%d] (id %q)", i, k.ID), Err: errors.New("needs id and bytes_per_element in (0, 4]")})
			continue
		}
		c.KVTypes = ix.kvTypes.upsert(c.KVTypes, k)
	}
	for i, e := range f.Engine {
		if e.ID == "" || e.Policy == "" || len(e.Backends) == 0 {
			errs = append(errs, &FileError{Path: path, Key: fmt.Sprintf("engine[%d] (id %q)", i, e.ID), Err: errors.New("needs id, policy and backends")})
			continue
		}
		c.Engines = ix.engines.upsert(c.Engines, e)
	}
	if f.Memory != nil {
		m := *f.Memory
		c.Memory = &m
	}
	if f.Perf != nil {
		p := *f.Perf
		errs = append(errs, checkBands(path, &p)...)
		if key := nonFinite(reflect.ValueOf(p), "perf"); key != "" {
			// A NaN or infinite term would reach every prediction.
			return append(errs, &FileError{Path: path, Key: key, Err: errors.New("not a finite number; the file's [perf] is ignored")})
		}
		if !strings.HasPrefix(path, "embedded:") && c.Perf != nil {
			p = overlayPerf(*c.Perf, p, md)
		}
		c.Perf = &p
	}
	return errs
}

// nonFinite names the first NaN or infinite float64 in v (a struct,
// map, slice or number, walked in key order), prefix being v's own
// name; "" when there is none.
func nonFinite(v reflect.Value, prefix string) string {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return prefix
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return nonFinite(v.Elem(), prefix)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
			if !t.Field(i).IsExported() || name == "-" {
				continue // no file sets it
			}
			if name == "" {
				name = t.Field(i).Name
			}
			if k := nonFinite(v.Field(i), prefix+"."+name); k != "" {
				return k
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			if r := nonFinite(v.MapIndex(k), fmt.Sprintf("%s.%v", prefix, k)); r != "" {
				return r
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if r := nonFinite(v.Index(i), fmt.Sprintf("%s[%d]", prefix, i)); r != "" {
				return r
			}
		}
	}
	return ""
}

// overlayPerf is a user file's [perf] over the profile loaded before it:
// each key the file sets under [perf] (error_band, decode, …) replaces
// that key's value whole, and the keys it does not set keep theirs. A
// file that names one band no longer drops the fitted efficiencies, and a
// whole refit (`refit --out`) still replaces every key it writes, maps
// included, so no term of the older fit survives beside it.
func overlayPerf(base, file planner.PerfParams, md toml.MetaData) planner.PerfParams {
	set := map[string]bool{}
	for _, k := range md.Keys() {
		if len(k) >= 2 && k[0] == "perf" {
			set[k[1]] = true
		}
	}
	out := base
	bv, fv := reflect.ValueOf(&out).Elem(), reflect.ValueOf(file)
	t := bv.Type()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if name != "" && name != "-" && set[name] {
			bv.Field(i).Set(fv.Field(i))
		}
	}
	return out
}

// maxBandPct bounds an error band: a median error past 1000% is no band.
const maxBandPct = 1000

// checkBands drops the error bands a file gives that are not a
// percentage (NaN, infinite, negative, past maxBandPct), each named: they
// are printed in every plan and a NaN cannot be written as JSON.
func checkBands(path string, p *planner.PerfParams) []error {
	var errs []error
	clean := func(key string, m map[string]float64) map[string]float64 {
		var out map[string]float64
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := m[k]
			if !(v >= 0 && v <= maxBandPct) {
				errs = append(errs, &FileError{Path: path, Key: key + "." + k, Err: fmt.Errorf("%v is not a percentage from 0 to %d; dropped", v, maxBandPct)})
				continue
			}
			if out == nil {
				out = make(map[string]float64, len(m))
			}
			out[k] = v
		}
		return out
	}
	p.ErrorBand = clean("perf.error_band", p.ErrorBand)
	p.CalibratedErrorBand = clean("perf.calibrated_error_band", p.CalibratedErrorBand)
	if p.ScenarioErrorBand != nil {
		sc := make(map[string]map[string]float64, len(p.ScenarioErrorBand))
		for _, kind := range slices.Sorted(maps.Keys(p.ScenarioErrorBand)) {
			if b := clean("perf.scenario_error_band."+kind, p.ScenarioErrorBand[kind]); b != nil {
				sc[kind] = b
			}
		}
		p.ScenarioErrorBand = sc
	}
	return errs
}

func tomlError(path string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return &FileError{Path: path, Line: pe.Position.Line, Key: pe.LastKey, Err: errors.New(pe.Message)}
	}
	return &FileError{Path: path, Err: err}
}

func checkHardware(h planner.Hardware) error {
	switch {
	case h.ID == "":
		return errors.New("missing id")
	case h.Memory <= 0:
		return errors.New("memory must be positive (e.g. memory = \"24 GiB\")")
	case h.BandwidthGBs <= 0 || h.BandwidthGBs > 100000:
		return errors.New("bandwidth_gb_s must be in (0, 100000]")
	case len(h.Backends) == 0:
		return errors.New("backends must list at least one of cuda, rocm, vulkan, metal, sycl, cpu")
	}
	for p, v := range h.TFLOPS {
		if v < 0 || v > 1e5 {
			return fmt.Errorf("tflops.%s = %g is not a sane rate", p, v)
		}
	}
	return nil
}

func checkModel(m planner.Model) error {
	switch {
	case m.ID == "":
		return errors.New("missing id")
	case m.Layers <= 0 || m.Layers > 1000:
		return errors.New("layers must be in 1..1000")
	case m.Hidden <= 0 || m.Heads <= 0:
		return errors.New("hidden and heads must be positive")
	case m.Params <= 0:
		return errors.New("params must be positive (e.g. params = \"8B\")")
	case m.KVHeads < 0 || m.KVHeads > m.Heads && m.MLA == nil:
		return errors.New("kv_heads must be between 1 and heads")
	}
	return nil
}
