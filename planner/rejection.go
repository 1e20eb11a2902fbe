package planner

// DropReason says, as a typed value, why Plan dropped a configuration;
// Rejection.Why says it in words. Front ends and Compare's "closest miss"
// branch on the reason, never on the words.
type DropReason string

// Why configurations are dropped.
const (
	// DropFormat: the engine does not load the weight format on this
	// backend (GGUF outside llama.cpp and Ollama, AWQ in llama.cpp).
	DropFormat DropReason = "format"
	// DropNoKernel: the engine loads the format but has no kernel for it
	// on this device (FP8 without FP8 hardware, INT8 emulated).
	DropNoKernel DropReason = "no-kernel"
	// DropUnsupported: the engine's rules refuse the configuration
	// (planner.Supported: a release without the feature, a GPU target the
	// image lacks).
	DropUnsupported DropReason = "unsupported"
	// DropInvalid: the scenario is not valid (tensor parallel that does
	// not divide the heads, a context past the model's).
	DropInvalid DropReason = "invalid"
	// DropMemory: it does not fit in memory.
	DropMemory DropReason = "memory"
	// DropKVSavesNothing: a quantized KV cache where the 16-bit one
	// already holds every user (it would cost quality for nothing).
	DropKVSavesNothing DropReason = "kv-saves-nothing"
)

// Rejection is a configuration Plan dropped: what it was, the typed
// reason, the words, and the memory answer when it got that far. Ranked
// configurations are Candidates; a Rejection has no scenario, prediction
// or launch command.
type Rejection struct {
	Engine  EngineID   `json:"engine"`
	Backend Backend    `json:"backend"`
	Quant   string     `json:"quant"`
	KVType  string     `json:"kv_type"`
	Devices int        `json:"tensor_parallel"`
	Reason  DropReason `json:"reason"`
	Why     string     `json:"why"`
	// Fit is the memory answer (zero unless Reason is DropMemory or
	// DropKVSavesNothing).
	Fit FitResult `json:"fit"`
}

// rejection records why candidate c was dropped.
func rejection(c Candidate, r DropReason) Rejection {
	return Rejection{Engine: c.Engine, Backend: c.Backend, Quant: c.Quant, KVType: c.KVType, Devices: c.Devices,
		Reason: r, Why: c.Why, Fit: c.Fit}
}

// Label is the configuration's short name, as Candidate.Label writes it.
func (r Rejection) Label() string {
	return Candidate{Engine: r.Engine, Quant: r.Quant, KVType: r.KVType, Devices: r.Devices}.Label()
}
