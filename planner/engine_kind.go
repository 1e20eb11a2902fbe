package planner

import (
	"errors"
	"fmt"
	"strings"
)

// Policy is the family of memory-sizing and scheduling rules an engine
// follows. It is a closed set: the catalog's engines.toml names one per
// engine, and every rule in the planner switches on these constants, never
// on free text.
type Policy string

// The engine policies Headroom models.
const (
	PolicyVLLM         Policy = "vllm"
	PolicyLlamaCpp     Policy = "llamacpp" // llama.cpp's llama-server and ik_llama.cpp
	PolicyOllama       Policy = "ollama"
	PolicySGLang       Policy = "sglang"
	PolicyTGI          Policy = "tgi"
	PolicyTransformers Policy = "transformers"
	PolicyTRTLLM       Policy = "trtllm"
)

// Policies lists every policy, in the order front ends show them.
var Policies = []Policy{PolicyLlamaCpp, PolicyOllama, PolicyVLLM, PolicySGLang, PolicyTGI, PolicyTRTLLM, PolicyTransformers}

// Valid reports whether p is one of the policies above.
func (p Policy) Valid() bool {
	for _, x := range Policies {
		if x == p {
			return true
		}
	}
	return false
}

// IsGGML reports whether the policy is llama.cpp-based (llama-server,
// ik_llama.cpp, Ollama): GGUF files, layer offload, KV cells.
func (p Policy) IsGGML() bool { return p == PolicyLlamaCpp || p == PolicyOllama }

// engineAliases is the one table of names users and files give engines
// (CLI -e, probe, calibration files, benchmark importers). Keys are
// lower-case.
var engineAliases = map[string]EngineID{
	"vllm": VLLM, "vllm-openai": VLLM,
	"llama.cpp": LlamaCpp, "llamacpp": LlamaCpp, "llama-cpp": LlamaCpp, "llama_cpp": LlamaCpp,
	"llama-server": LlamaCpp, "llama": LlamaCpp,
	"ik_llama.cpp": IKLlamaCpp, "ik_llama": IKLlamaCpp, "ik-llama.cpp": IKLlamaCpp, "ik_llamacpp": IKLlamaCpp,
	"ollama": Ollama,
	"sglang": SGLang,
	"tgi":    TGI, "text-generation-inference": TGI, "text-generation-launcher": TGI,
	"transformers": Transformers, "hf-transformers": Transformers,
	"trtllm": TRTLLM, "tensorrt-llm": TRTLLM, "tensorrt_llm": TRTLLM, "trtllm-serve": TRTLLM,
}

// engineDefaultPolicy is the policy of each engine id.
var engineDefaultPolicy = map[EngineID]Policy{
	VLLM: PolicyVLLM, LlamaCpp: PolicyLlamaCpp, IKLlamaCpp: PolicyLlamaCpp, Ollama: PolicyOllama,
	SGLang: PolicySGLang, TGI: PolicyTGI, Transformers: PolicyTransformers, TRTLLM: PolicyTRTLLM,
}

// ErrUnknownEngine marks an engine name ParseEngine does not know.
var ErrUnknownEngine = errors.New("unknown engine")

// ParseEngine maps a user's or a file's engine name ("llama-server",
// "text-generation-inference", "TensorRT-LLM", a policy name) to its id.
// Names are matched case-insensitively after trimming; anything else is an
// error wrapping ErrUnknownEngine that lists the accepted ids.
func ParseEngine(name string) (EngineID, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if id, ok := engineAliases[key]; ok {
		return id, nil
	}
	return "", fmt.Errorf("%w %q: use one of vllm, llama.cpp (llama-server), ik_llama.cpp, ollama, sglang, tgi, trtllm, transformers", ErrUnknownEngine, name)
}

// PolicyOf returns the policy of an engine id (ParseEngine's result).
func PolicyOf(id EngineID) (Policy, bool) {
	p, ok := engineDefaultPolicy[id]
	return p, ok
}
