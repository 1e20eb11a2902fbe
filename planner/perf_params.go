package planner

// PerfParams are the fitted efficiencies of the performance model, keyed by
// hardware class × engine × backend and by quant kernel. They are fitted on
// published measurements (profiles/catalog/fitted.toml, `headroom refit`)
// and may be replaced by a machine's calibration.
type PerfParams struct {
	// Fitted records provenance: data, date, fit quality.
	Fitted string `toml:"fitted" json:"fitted"`
	// Groups maps "hwclass/engine/backend" (and coarser fallbacks
	// "hwclass/*/*", "*/engine/*") to efficiency terms.
	Groups map[string]PerfGroup `toml:"groups" json:"groups"`
	// QuantDecode and QuantPrefill are per-weight-format multipliers of
	// decode bandwidth efficiency and prefill compute efficiency.
	QuantDecode  map[string]float64 `toml:"quant_decode" json:"quant_decode"`
	QuantPrefill map[string]float64 `toml:"quant_prefill" json:"quant_prefill"`
}

// PerfGroup holds efficiency factors for one group.
type PerfGroup struct {
	// DecodeBW is achieved ÷ peak memory bandwidth for batch-1 decode.
	DecodeBW float64 `toml:"decode_bw" json:"decode_bw"`
	// PrefillCompute is achieved ÷ peak FLOP/s for prefill.
	PrefillCompute float64 `toml:"prefill_compute" json:"prefill_compute"`
	// StepOverheadMs is the fixed per-step cost (scheduling, launches).
	StepOverheadMs float64 `toml:"step_overhead_ms" json:"step_overhead_ms"`
	// Rows is how many measurements informed this group.
	Rows int `toml:"rows" json:"rows"`
}

// DefaultPerfParams are priors used when nothing is fitted: 70% of peak
// bandwidth for decode (consumer/APU llama.cpp decode reaches 60-80% MBU,
// modeling.md §3.5) and 40% of peak FLOP/s for prefill.
func DefaultPerfParams() PerfParams {
	return PerfParams{
		Fitted: "prior (no fit)",
		Groups: map[string]PerfGroup{
			"*/*/*": {DecodeBW: 0.7, PrefillCompute: 0.4, StepOverheadMs: 2},
		},
		QuantDecode:  map[string]float64{},
		QuantPrefill: map[string]float64{},
	}
}
