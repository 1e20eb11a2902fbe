package endpoint

import (
	"fmt"

	"github.com/headroom-planner/headroom/planner"
)

// API names the streaming endpoint a run uses.
type API string

// The APIs a run can use.
const (
	// APIAuto picks the engine's native API when it reports server
	// timings, else APICompletions (falling back to APIChat on 404).
	APIAuto API = ""
	// APICompletions is OpenAI's POST /v1/completions with stream:true
	// and stream_options.include_usage (vLLM, SGLang, TGI, llama-server,
	// Ollama).
	APICompletions API = "completions"
	// APIChat is OpenAI's POST /v1/chat/completions, streamed likewise.
	APIChat API = "chat"
	// APIOllama is Ollama's POST /api/generate NDJSON stream, whose last
	// line carries prompt_eval_count/prompt_eval_duration and
	// eval_count/eval_duration.
	APIOllama API = "ollama"
	// APILlamaCpp is llama-server's POST /completion SSE stream, whose last
	// event carries timings {prompt_n, prompt_ms, predicted_n,
	// predicted_ms}.
	APILlamaCpp API = "llama.cpp"
	// APITGI is TGI's POST /generate_stream SSE stream, whose last event
	// carries details {generated_tokens, input_length}.
	APITGI API = "tgi"
)

// APIs lists the values of API a user may name, for flag help.
var APIs = []API{APICompletions, APIChat, APIOllama, APILlamaCpp, APITGI}

func (a API) valid() (API, error) {
	if a == APIAuto {
		return a, nil
	}
	for _, x := range APIs {
		if a == x {
			return a, nil
		}
	}
	return a, fmt.Errorf("api %q: want one of completions, chat, ollama, llama.cpp, tgi", string(a))
}

// nativeAPI is the engine's own streaming API with server timings, or
// APICompletions when it has none.
func nativeAPI(e planner.EngineID) API {
	switch e {
	case planner.Ollama:
		return APIOllama
	case planner.LlamaCpp, planner.IKLlamaCpp:
		return APILlamaCpp
	case planner.TGI:
		return APITGI
	}
	return APICompletions
}

// path is the request path of the API.
func (a API) path() string {
	switch a {
	case APIChat:
		return "/v1/chat/completions"
	case APIOllama:
		return "/api/generate"
	case APILlamaCpp:
		return "/completion"
	case APITGI:
		return "/generate_stream"
	}
	return "/v1/completions"
}

// ndjson reports whether the API streams NDJSON rather than SSE.
func (a API) ndjson() bool { return a == APIOllama }

// body is the JSON request for one streamed generation of maxGen tokens.
// Engines that accept ignore_eos get it, so decode requests generate the
// tokens asked for; prompts are sent raw (no chat template) where the API
// allows, so the prompt token count is the server's count of our words.
func (a API) body(e planner.EngineID, model, prompt string, maxGen int) any {
	ignoreEOS := e == planner.VLLM || e == planner.SGLang || e == planner.LlamaCpp || e == planner.IKLlamaCpp
	switch a {
	case APIOllama:
		return map[string]any{
			"model": model, "prompt": prompt, "raw": true, "stream": true,
			"options": map[string]any{"num_predict": maxGen},
		}
	case APILlamaCpp:
		return map[string]any{
			"prompt": prompt, "n_predict": maxGen, "stream": true,
			"cache_prompt": false, "ignore_eos": true,
		}
	case APITGI:
		return map[string]any{
			"inputs": prompt, "stream": true,
			"parameters": map[string]any{"max_new_tokens": maxGen, "details": true},
		}
	}
	b := map[string]any{
		"model": model, "max_tokens": maxGen, "stream": true,
		"stream_options": map[string]any{"include_usage": true},
	}
	if a == APIChat {
		b["messages"] = []map[string]string{{"role": "user", "content": prompt}}
	} else {
		b["prompt"] = prompt
	}
	if ignoreEOS {
		b["ignore_eos"] = true
	}
	return b
}
