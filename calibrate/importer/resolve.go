package importer

import (
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// gpuAlias maps device names that benchmark outputs use loosely to catalog
// ids, with the assumption made. Keys are normName forms.
var gpuAlias = map[string]struct{ id, assumption string }{
	"a10080g":      {"nvidia-a100-sxm4-80gb", "A100 80GB form factor not stated; SXM4 assumed"},
	"a10080gb":     {"nvidia-a100-sxm4-80gb", "A100 80GB form factor not stated; SXM4 assumed"},
	"a10040g":      {"nvidia-a100-sxm4-40gb", "A100 40GB form factor not stated; SXM4 assumed"},
	"a10040gb":     {"nvidia-a100-sxm4-40gb", "A100 40GB form factor not stated; SXM4 assumed"},
	"h100":         {"nvidia-h100-nvl-94gb", "H100 variant (SXM5, PCIe, NVL) not stated; mapped to nvidia-h100-nvl-94gb as the published rows of this source are; pass --hardware"},
	"h10080g":      {"nvidia-h100-sxm5-80gb", "H100 80GB form factor not stated; SXM5 assumed"},
	"h10080gb":     {"nvidia-h100-sxm5-80gb", "H100 80GB form factor not stated; SXM5 assumed"},
	"h100sxm":      {"nvidia-h100-sxm5-80gb", ""},
	"h100sxm5":     {"nvidia-h100-sxm5-80gb", ""},
	"h100pcie":     {"nvidia-h100-pcie-80gb", ""},
	"h100nvl":      {"nvidia-h100-nvl-94gb", ""},
	"a100sxm480gb": {"nvidia-a100-sxm4-80gb", ""},
}

// vendorWords are dropped before matching device names ("NVIDIA GeForce RTX
// 4090" matches nvidia-rtx-4090).
var vendorWords = []string{"nvidia", "geforce", "amd", "radeon", "intel", "apple", "tesla"}

func stripVendor(s string) string {
	n := normName(s)
	for _, w := range vendorWords {
		n = strings.ReplaceAll(n, w, "")
	}
	return n
}

// resolver applies Context and the catalog to drafts.
type resolver struct {
	ctx    Context
	p      *parse
	models map[string]planner.Model // normName of id, repo name, name → model
	hwByID map[string]planner.Hardware
	hwKey  map[string][]string // stripped name/id → ids
	quants map[string]bool
}

func newResolver(ctx Context, p *parse) *resolver {
	ctx.Engine = normEngine(ctx.Engine)
	ctx.Quant = normQuant(ctx.Quant)
	ctx.Backend = strings.ToLower(strings.TrimSpace(ctx.Backend))
	r := &resolver{ctx: ctx, p: p, models: map[string]planner.Model{}, hwByID: map[string]planner.Hardware{}, hwKey: map[string][]string{}, quants: map[string]bool{}}
	if ctx.Catalog == nil {
		return r
	}
	for _, m := range ctx.Catalog.Models {
		keys := []string{m.ID, m.Name}
		if i := strings.LastIndex(m.ID, "/"); i >= 0 {
			keys = append(keys, m.ID[i+1:])
		}
		for _, k := range keys {
			if n := normName(k); n != "" {
				if _, dup := r.models[n]; !dup {
					r.models[n] = m
				}
			}
		}
	}
	for _, h := range ctx.Catalog.Hardware {
		r.hwByID[h.ID] = h
		for _, k := range []string{h.ID, h.Name} {
			if n := stripVendor(k); n != "" && !contains(r.hwKey[n], h.ID) {
				r.hwKey[n] = append(r.hwKey[n], h.ID)
			}
		}
	}
	for _, q := range ctx.Catalog.Quants {
		r.quants[q.ID] = true
		for _, a := range q.Aliases {
			r.quants[normQuant(a)] = true
		}
	}
	return r
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// model finds the catalog model a file's name refers to.
func (r *resolver) model(info nameInfo) (planner.Model, bool) {
	if len(r.models) == 0 || info.full == "" {
		return planner.Model{}, false
	}
	for _, c := range []string{info.full, info.base, info.clean, info.clean + "-hf"} {
		if m, ok := r.models[normName(c)]; ok {
			return m, true
		}
	}
	return planner.Model{}, false
}

// catalogModel returns the catalog entry of a model id, if any.
func (r *resolver) catalogModel(id string) (planner.Model, bool) {
	m, ok := r.models[normName(id)]
	if ok && !strings.EqualFold(m.ID, id) && strings.Contains(id, "/") {
		return planner.Model{}, false
	}
	return m, ok
}

// hardware maps a device name from the file to a catalog id. assumption is
// non-empty when the name did not say enough and a guess was made.
func (r *resolver) hardware(name string) (id, assumption string, ok bool) {
	if strings.TrimSpace(name) == "" {
		return "", "", false
	}
	if _, exact := r.hwByID[name]; exact {
		return name, "", true
	}
	if a, found := gpuAlias[normName(name)]; found {
		return a.id, a.assumption, true
	}
	if ids := r.hwKey[stripVendor(name)]; len(ids) == 1 {
		return ids[0], "", true
	}
	return "", "", false
}

// finish turns a draft into a schema row, filling what the file did not
// state from Context and the catalog, and warning about every gap.
func (r *resolver) finish(d draft) planner.Measurement {
	m := d.m
	notes := d.notes
	m.Hardware = r.finishHardware(d)
	info := parseModelName(d.model)
	var cm planner.Model
	var haveModel bool
	m.Model, cm, haveModel, notes = r.finishModel(d, info, notes)
	m.Engine = r.finishEngine(d)
	if m.EngineVersion == "" {
		m.EngineVersion = r.ctx.EngineVersion
	}
	m.Quant = r.finishQuant(d, info, m.Engine, cm, haveModel)
	m.Backend = r.finishBackend(d, m.Hardware, m.Engine)
	if m.Devices == 0 {
		m.Devices = max(r.ctx.Devices, 1)
	} else if r.ctx.Devices > 0 && r.ctx.Devices != m.Devices {
		r.p.warn(d.line, "file says %d devices; --devices %d ignored", m.Devices, r.ctx.Devices)
	}
	m.KVType = r.finishKV(d, m.Engine, m.Quant, cm, haveModel)
	m.Source = r.ctx.Source
	if m.Source == "" {
		m.Source = defaultSource(r.p.name)
	}
	if m.Notes != "" {
		notes = append([]string{m.Notes}, notes...)
	}
	m.Notes = strings.Join(notes, "; ")
	return m
}

func (r *resolver) finishHardware(d draft) string {
	id, assumption, ok := r.hardware(d.hardware)
	if r.ctx.Hardware != "" {
		if ok && id != r.ctx.Hardware {
			r.p.warn(d.line, "file names device %q; --hardware %s used instead", d.hardware, r.ctx.Hardware)
		}
		if r.ctx.Catalog != nil && len(r.hwByID) > 0 {
			if _, known := r.hwByID[r.ctx.Hardware]; !known {
				r.p.warn(0, "hardware %q is not a catalog id", r.ctx.Hardware)
			}
		}
		return r.ctx.Hardware
	}
	switch {
	case ok && assumption != "":
		r.p.warn(d.line, "device %q: %s", d.hardware, assumption)
		return id
	case ok:
		return id
	case d.hardware != "":
		r.p.warn(d.line, "device %q is not a catalog id: pass --hardware", d.hardware)
	default:
		r.p.warn(d.line, "hardware not stated: pass --hardware")
	}
	return ""
}

func (r *resolver) finishModel(d draft, info nameInfo, notes []string) (string, planner.Model, bool, []string) {
	fileModel, found := r.model(info)
	if r.ctx.Model != "" {
		if found && !strings.EqualFold(fileModel.ID, r.ctx.Model) {
			r.p.warn(d.line, "file names model %q (%s); --model %s used instead", info.full, fileModel.ID, r.ctx.Model)
		}
		if info.full != "" && !strings.EqualFold(info.full, r.ctx.Model) {
			notes = append(notes, "file names model "+info.base)
		}
		cm, ok := r.catalogModel(r.ctx.Model)
		if r.ctx.Catalog != nil && len(r.models) > 0 && !ok {
			r.p.warn(0, "model %q is not a catalog id", r.ctx.Model)
		}
		return r.ctx.Model, cm, ok, notes
	}
	if found {
		return fileModel.ID, fileModel, true, append(notes, nameNote(info, fileModel.ID)...)
	}
	switch {
	case info.full == "" && d.modelDesc != "":
		r.p.warn(d.line, "model not named (the file says only %q): pass --model", d.modelDesc)
		return "", planner.Model{}, false, notes
	case info.full == "":
		r.p.warn(d.line, "model not stated: pass --model")
		return "", planner.Model{}, false, notes
	case len(r.models) == 0 && isRepoID(info.full):
		return info.full, planner.Model{}, false, notes
	}
	r.p.warn(d.line, "model %q is not a catalog id: pass --model", info.full)
	if isRepoID(info.full) {
		return info.full, planner.Model{}, false, notes
	}
	if pathExt(info.full) != "" {
		notes = append(notes, "file "+info.base+".gguf")
	}
	return info.clean, planner.Model{}, false, notes
}

// nameNote says how the file named a model that maps to catalog id, when
// that is more than the id or its last path element.
func nameNote(info nameInfo, id string) []string {
	last := id
	if i := strings.LastIndex(id, "/"); i >= 0 {
		last = id[i+1:]
	}
	switch {
	case strings.EqualFold(info.full, id):
		return nil
	case isRepoID(info.full):
		return []string{"checkpoint " + info.full}
	case pathExt(info.full) != "":
		return []string{"file " + info.base + ".gguf"}
	case normName(info.base) == normName(last):
		return nil
	}
	return []string{"named " + info.base}
}

// pathExt returns ".gguf" when the name was a GGUF file, for notes.
func pathExt(s string) string {
	if strings.HasSuffix(strings.ToLower(s), ".gguf") {
		return ".gguf"
	}
	return ""
}

func (r *resolver) finishEngine(d draft) string {
	e := normEngine(d.m.Engine)
	switch {
	case e == "" || (d.weakEngine && r.ctx.Engine != ""):
		if r.ctx.Engine != "" {
			return r.ctx.Engine
		}
		if e == "" {
			r.p.warn(d.line, "engine not stated: pass --engine")
		}
	case r.ctx.Engine != "" && r.ctx.Engine != e:
		r.p.warn(d.line, "file says engine %s; --engine %s ignored", e, r.ctx.Engine)
	}
	return e
}

func (r *resolver) finishQuant(d draft, info nameInfo, engine string, cm planner.Model, haveModel bool) string {
	q := info.quant
	if q == "" {
		q = normQuant(d.m.Quant)
	}
	if q == "" {
		q = d.quantHint
	}
	if q != "" {
		if r.ctx.Quant != "" && r.ctx.Quant != q {
			r.p.warn(d.line, "file says quantization %s; --quant %s ignored", q, r.ctx.Quant)
		}
		r.checkQuant(d.line, q)
		return q
	}
	if r.ctx.Quant != "" {
		r.checkQuant(0, r.ctx.Quant)
		return r.ctx.Quant
	}
	if (d.nativeQuant || !isGGMLEngine(engine)) && haveModel {
		if q := dtypeQuant(cm.NativeDType); q != "" {
			return q
		}
	}
	r.p.warn(d.line, "quantization not stated: pass --quant")
	return ""
}

func (r *resolver) checkQuant(line int, q string) {
	if len(r.quants) > 0 && !r.quants[q] {
		r.p.warn(line, "quantization %q is not in the catalog", q)
	}
}

func (r *resolver) finishBackend(d draft, hardware, engine string) string {
	if b := d.m.Backend; b != "" {
		if r.ctx.Backend != "" && r.ctx.Backend != b {
			r.p.warn(d.line, "file says backend %s; --backend %s ignored", b, r.ctx.Backend)
		}
		return b
	}
	if r.ctx.Backend != "" {
		return r.ctx.Backend
	}
	if b := r.inferBackend(hardware, engine); b != "" {
		return b
	}
	r.p.warn(d.line, "backend not stated: pass --backend")
	return ""
}

// inferBackend picks the backend when the device allows only one for the
// engine: CUDA or ROCm for the datacenter engines, or a device's single GPU
// API for llama.cpp.
func (r *resolver) inferBackend(hardware, engine string) string {
	h, ok := r.hwByID[hardware]
	if !ok {
		return ""
	}
	if !isGGMLEngine(engine) {
		for _, b := range []planner.Backend{planner.CUDA, planner.ROCm} {
			if h.HasBackend(b) {
				return string(b)
			}
		}
		return ""
	}
	var gpu []planner.Backend
	for _, b := range h.Backends {
		if b != planner.CPU {
			gpu = append(gpu, b)
		}
	}
	if len(gpu) == 1 {
		return string(gpu[0])
	}
	if len(h.Backends) == 1 {
		return string(h.Backends[0])
	}
	return ""
}

func (r *resolver) finishKV(d draft, engine, quant string, cm planner.Model, haveModel bool) string {
	if d.m.KVType != "" {
		return normQuant(d.m.KVType)
	}
	if r.ctx.KVType != "" {
		return normQuant(r.ctx.KVType)
	}
	if isGGMLEngine(engine) {
		return "f16"
	}
	switch quant {
	case "f16", "bf16", "f32":
		return quant
	}
	if haveModel {
		if q := dtypeQuant(cm.NativeDType); q == "f16" || q == "bf16" {
			return q
		}
	}
	return "f16"
}
