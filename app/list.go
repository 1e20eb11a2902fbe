package app

import (
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// ListFilter narrows a catalog listing. Zero values match everything.
type ListFilter struct {
	// Text is a case-insensitive substring of an id, name, alias, family
	// or architecture.
	Text string
	// Vendor and Kind filter hardware (nvidia, amd, apple, intel; gpu,
	// apu, soc, cpu); MinMemory keeps devices with at least that much.
	Vendor, Kind string
	MinMemory    planner.Bytes
}

// ListKinds are what List lists.
var ListKinds = []string{"hardware", "models", "engines", "quants"}

// matches reports whether any of s contains the filter text.
func (f ListFilter) matches(s ...string) bool {
	if f.Text == "" {
		return true
	}
	t := strings.ToLower(f.Text)
	for _, x := range s {
		if strings.Contains(strings.ToLower(x), t) {
			return true
		}
	}
	return false
}

// Hardware lists the catalog's devices that pass f, in catalog order.
func (a *App) Hardware(f ListFilter) []planner.Hardware {
	var out []planner.Hardware
	for _, h := range a.Catalog().Hardware {
		names := append([]string{h.ID, h.Name}, h.Aliases...)
		if !f.matches(names...) || (f.Vendor != "" && !h.IsVendor(f.Vendor)) || (f.Kind != "" && string(h.Kind) != f.Kind) || h.Memory < f.MinMemory {
			continue
		}
		out = append(out, h)
	}
	return out
}

// Models lists the catalog's models that pass f.
func (a *App) Models(f ListFilter) []planner.Model {
	var out []planner.Model
	for _, m := range a.Catalog().Models {
		if f.matches(m.ID, m.Name, m.Arch) {
			out = append(out, m)
		}
	}
	return out
}

// Engines lists the catalog's engines that pass f.
func (a *App) Engines(f ListFilter) []planner.Engine {
	var out []planner.Engine
	for _, e := range a.Catalog().Engines {
		if f.matches(string(e.ID), e.Name) {
			out = append(out, e)
		}
	}
	return out
}

// Quants lists the catalog's weight formats that pass f.
func (a *App) Quants(f ListFilter) []planner.Quant {
	var out []planner.Quant
	for _, q := range a.Catalog().Quants {
		if f.matches(q.ID, q.Name, string(q.Family)) {
			out = append(out, q)
		}
	}
	return out
}
