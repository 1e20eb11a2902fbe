package planner

// EngineID names an inference engine.
type EngineID string

// Engines Headroom models.
const (
	VLLM         EngineID = "vllm"
	LlamaCpp     EngineID = "llama.cpp"
	IKLlamaCpp   EngineID = "ik_llama.cpp"
	TGI          EngineID = "tgi"
	SGLang       EngineID = "sglang"
	Ollama       EngineID = "ollama"
	Transformers EngineID = "transformers"
	TRTLLM       EngineID = "trtllm"
)

// Engine describes an inference engine: what it runs on, which weight
// formats each backend loads, and the knobs of its memory policy. Its
// flags, container images and kernel gates per release are in the
// engine's rules (rules_*.go: Releases, Supported, LaunchFor).
type Engine struct {
	ID   EngineID `toml:"id" json:"id"`
	Name string   `toml:"name" json:"name"`
	// Short is the name a table column shows ("TGI"); Name when empty.
	Short   string `toml:"short" json:"short,omitempty"`
	Version string `toml:"version" json:"version"` // release the rules were read at
	// Policy selects the memory-sizing and scheduling rules (PolicyVLLM,
	// PolicyLlamaCpp …); ik_llama.cpp follows llama.cpp's.
	Policy   Policy    `toml:"policy" json:"policy"`
	Backends []Backend `toml:"backends" json:"backends"`
	// Formats maps a backend to the weight families it loads there.
	Formats map[Backend][]QuantFamily `toml:"formats" json:"formats"`
	KVTypes []string                  `toml:"kv_types" json:"kv_types"`
	// GPUMemoryUtilization is vLLM's default share of total device memory.
	GPUMemoryUtilization float64 `toml:"gpu_memory_utilization" json:"gpu_memory_utilization,omitempty"`
	// WiggleRoom is TGI's TGI_WIGGLE_ROOM (share of memory it may use).
	WiggleRoom float64 `toml:"wiggle_room" json:"wiggle_room,omitempty"`
	// BlockSize is the paged-KV block in tokens (vLLM 16 on CUDA).
	BlockSize int `toml:"block_size" json:"block_size,omitempty"`
	// DefaultContext is the context an engine allocates when none is given
	// (llama-server -c, Ollama num_ctx); 0 = the model's maximum.
	DefaultContext Tokens `toml:"default_context" json:"default_context,omitempty"`
	// MaxSeqs is the default concurrency cap (vLLM --max-num-seqs, TGI
	// --max-concurrent-requests, llama-server -np).
	MaxSeqs int    `toml:"max_seqs" json:"max_seqs,omitempty"`
	Notes   string `toml:"notes" json:"notes,omitempty"`
	Source  string `toml:"source" json:"source,omitempty"`
}

// Loads reports whether the engine loads family f on backend b.
func (e Engine) Loads(b Backend, f QuantFamily) bool {
	for _, x := range e.Formats[b] {
		if x == f {
			return true
		}
	}
	return false
}

// HasBackend reports whether the engine runs on b.
func (e Engine) HasBackend(b Backend) bool {
	for _, x := range e.Backends {
		if x == b {
			return true
		}
	}
	return false
}

// HasKVType reports whether the engine accepts the KV-cache type id.
func (e Engine) HasKVType(id string) bool {
	for _, x := range e.KVTypes {
		if x == id {
			return true
		}
	}
	return false
}

// IsGGML reports whether the engine is llama.cpp-based (llama.cpp,
// ik_llama.cpp, Ollama).
func (e Engine) IsGGML() bool {
	return e.Policy.IsGGML()
}

// Label is the engine's name for a table column: Short, else Name.
func (e Engine) Label() string {
	if e.Short != "" {
		return e.Short
	}
	return e.Name
}
