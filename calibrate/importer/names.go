package importer

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Units of the measurement schema.
const (
	unitTPS = "tokens/s"
	unitMS  = "ms"
	unitTok = "tokens"
	unitRPS = "requests/s"
)

// numberRE finds the first decimal number in a cell ("**871.62**",
// "~13500 t/s", "878.31 ± 4.11", "65.65 ms").
var numberRE = regexp.MustCompile(`[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?`)

// parseNumber reads the first number in s; ok is false when there is none,
// it is not finite, or words come before it: "NaN ± 1", "inf (±3)" and
// "n/a, 5" are not numbers, though a later part of them is.
func parseNumber(s string) (float64, bool) {
	loc := numberRE.FindStringIndex(s)
	if loc == nil || strings.IndexFunc(s[:loc[0]], unicode.IsLetter) >= 0 {
		return 0, false
	}
	m := s[loc[0]:loc[1]]
	v, err := strconv.ParseFloat(m, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// scaledRE reads "~100k", "1.2M" (token counts with a suffix).
var scaledRE = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*([km])?\b`)

// parseScaled reads a count with an optional k/M suffix.
func parseScaled(s string) (float64, bool) {
	m := scaledRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, false
	}
	switch strings.ToLower(m[2]) {
	case "k":
		v *= 1e3
	case "m":
		v *= 1e6
	}
	return v, true
}

// parseCount reads a non-negative integer ("512", "1.0", "16"); ok is false
// for anything else or absurd sizes.
func parseCount(s string) (int, bool) {
	v, ok := parseNumber(strings.TrimSpace(s))
	if !ok || v < 0 || v > 1e9 || v != math.Trunc(v) {
		return 0, false
	}
	return int(v), true
}

// usable says whether v can be a measurement value (the schema wants a
// positive finite number).
func usable(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) && v < 1e15 }

// roundDiv returns a/b rounded to the nearest integer (0 when b is 0).
func roundDiv(a, b float64) int {
	if b <= 0 || a < 0 || a/b > 1e9 {
		return 0
	}
	return int(math.Round(a / b))
}

// round4 rounds a derived value to 4 decimals, so that 15.28 × 100 reads
// 1528 and not 1527.9999999999998.
func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// fmtNum formats a value as the source printed it (no trailing zeros).
func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ggufTypeRE matches a GGUF type as it appears in a file name or
// llama-bench model type: Q4_K_M, IQ4_XS, Q8_0, TQ1_0, F16, BF16, MXFP4.
var ggufTypeRE = regexp.MustCompile(`(?i)^(?:i?q[1-8](?:_[a-z0-9]+)+|tq[12]_0|bf16|fp16|f16|fp32|f32|mxfp4)$`)

// normQuant maps a GGUF type or dtype spelling to the schema's id.
func normQuant(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "fp16", "float16", "half":
		return "f16"
	case "fp32", "float32", "float":
		return "f32"
	case "bfloat16":
		return "bf16"
	}
	return s
}

// quantFromModelType reads llama.cpp's file-type name as llama-bench prints
// it in the model column: "llama 7B Q4_K - Medium" is q4_k_m, "llama 7B
// mostly Q4_0" q4_0, "qwen2 7B all F32" f32, "gpt-oss 20B MXFP4 MoE" mxfp4,
// "IQ4_XS - 4.25 bpw" iq4_xs.
func quantFromModelType(s string) string {
	f := strings.Fields(s)
	for i, tok := range f {
		if !ggufTypeRE.MatchString(tok) {
			continue
		}
		q := normQuant(tok)
		if i+2 < len(f) && f[i+1] == "-" {
			switch strings.ToLower(f[i+2]) {
			case "small":
				q += "_s"
			case "medium":
				q += "_m"
			case "large":
				q += "_l"
			}
		}
		return q
	}
	return ""
}

// token is one separator-delimited piece of a name with its byte offset.
type token struct {
	text  string
	start int
}

// splitName splits a model name on '-', '.', ' ' and '+' (not '_', which
// GGUF types use inside: Q4_K_M).
func splitName(s string) []token {
	var out []token
	start := -1
	for i, r := range s {
		sep := r == '-' || r == '.' || r == ' ' || r == '+'
		if sep && start >= 0 {
			out = append(out, token{s[start:i], start})
			start = -1
		} else if !sep && start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, token{s[start:], start})
	}
	return out
}

// checkpointQuant maps name tokens of quantized checkpoints to formats.
var checkpointQuant = map[string]string{
	"gptq": "gptq-int4", "awq": "awq-int4", "w4a16": "gptq-int4",
	"w8a8": "w8a8-int8", "fp8": "fp8", "nvfp4": "nvfp4", "mxfp4": "mxfp4",
	"bnb": "4bit-unspecified", "4bit": "4bit-unspecified",
}

// suffixMarkers are tokens that start the format suffix of a checkpoint or
// file name; everything from the first one on is not the model's name.
var suffixMarkers = map[string]bool{
	"gptq": true, "awq": true, "w4a16": true, "w8a8": true, "w8a16": true, "fp8": true,
	"nvfp4": true, "mxfp4": true, "bnb": true, "4bit": true, "8bit": true, "int4": true,
	"int8": true, "quantized": true, "gguf": true, "ud": true, "dynamic": true,
}

// nameInfo is what a model name in a benchmark file says.
type nameInfo struct {
	full  string // as written, trimmed
	base  string // last path element, file extension removed
	clean string // base with the format suffix removed ("Llama-2-7b-chat")
	quant string // weight format the name states, "" if none
}

// parseModelName reads a model name as benchmark files write it: a Hugging
// Face repo id, a quantized checkpoint ("TheBloke/Llama-2-7B-Chat-GPTQ"), or
// a GGUF path ("/models/gguf/llama-2-7b.Q4_K_M.gguf").
func parseModelName(s string) nameInfo {
	s = strings.Trim(strings.TrimSpace(s), `"'`)
	info := nameInfo{full: s}
	base := s
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	for _, ext := range []string{".gguf", ".safetensors", ".bin"} {
		if len(base) > len(ext) && strings.EqualFold(base[len(base)-len(ext):], ext) {
			base = base[:len(base)-len(ext)]
		}
	}
	base = shardSuffixRE.ReplaceAllString(base, "")
	info.base = base
	info.clean = base
	toks := splitName(base)
	cut := -1
	for i, t := range toks {
		lt := strings.ToLower(t.text)
		if ggufTypeRE.MatchString(t.text) {
			if info.quant == "" {
				info.quant = normQuant(lt)
			}
			if cut < 0 {
				cut = i
			}
			continue
		}
		if q, ok := checkpointQuant[lt]; ok && info.quant == "" {
			info.quant = q
		}
		if suffixMarkers[lt] && cut < 0 && i > 0 {
			cut = i
		}
	}
	// "fp8" together with "w8a8" is an FP8 W8A8 checkpoint.
	if info.quant == "w8a8-int8" && hasToken(toks, "fp8") {
		info.quant = "fp8"
	}
	if cut > 0 {
		info.clean = strings.TrimRight(base[:toks[cut].start], "-._ +")
	}
	return info
}

var shardSuffixRE = regexp.MustCompile(`(?i)-\d{5}-of-\d{5}$`)

func hasToken(toks []token, s string) bool {
	for _, t := range toks {
		if strings.EqualFold(t.text, s) {
			return true
		}
	}
	return false
}

// isRepoID says whether s looks like a Hugging Face repo id (owner/name).
func isRepoID(s string) bool {
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "~") || strings.Contains(s, `\`) {
		return false
	}
	return strings.Count(s, "/") == 1 && !strings.HasSuffix(strings.ToLower(s), ".gguf")
}

// normName lowercases and drops separators, so "Llama-2-7B-Chat" matches
// "llama-2-7b-chat" and "RTX 4090" matches "rtx-4090".
func normName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch r {
		case ' ', '-', '_', '/', '.', '(', ')', ',':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// normEngine maps engine spellings to the schema's ids.
func normEngine(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return ""
	case "llama.cpp", "llamacpp", "llama-cpp", "llama_cpp", "llama-server", "llama-bench":
		return "llama.cpp"
	case "ik_llama.cpp", "ik-llama.cpp", "ik_llama":
		return "ik_llama.cpp"
	case "tgi", "text-generation-inference", "text_generation_inference":
		return "tgi"
	case "vllm":
		return "vllm"
	case "sglang":
		return "sglang"
	case "ollama":
		return "ollama"
	case "trtllm", "tensorrt-llm", "tensorrt_llm", "trt-llm":
		return "trtllm"
	case "transformers", "hf":
		return "transformers"
	}
	return strings.ToLower(strings.TrimSpace(s))
}

// isGGMLEngine says whether the engine runs GGUF files (KV cache f16 by
// default, formats named by GGUF types).
func isGGMLEngine(e string) bool {
	return e == "llama.cpp" || e == "ik_llama.cpp" || e == "ollama"
}

var tgiWordRE = regexp.MustCompile(`\btgi\b`)

// engineFromText finds an engine named in free text (a heading).
func engineFromText(s string) string {
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "ik_llama"):
		return "ik_llama.cpp"
	case strings.Contains(l, "llama.cpp") || strings.Contains(l, "llama-server") || strings.Contains(l, "llamacpp"):
		return "llama.cpp"
	case strings.Contains(l, "ollama"):
		return "ollama"
	case strings.Contains(l, "sglang"):
		return "sglang"
	case strings.Contains(l, "text-generation-inference") || tgiWordRE.MatchString(l):
		return "tgi"
	case strings.Contains(l, "tensorrt") || strings.Contains(l, "trtllm") || strings.Contains(l, "trt-llm"):
		return "trtllm"
	case strings.Contains(l, "vllm"):
		return "vllm"
	}
	return ""
}

// quantFromText finds a weight format named in free text ("(FP16 -
// 13.5GB)", "Q8_0 - c=1", "w8a8").
func quantFromText(s string) string {
	for _, t := range splitName(strings.NewReplacer("(", " ", ")", " ", ",", " ", ":", " ", "#", " ").Replace(s)) {
		lt := strings.ToLower(t.text)
		if ggufTypeRE.MatchString(t.text) {
			return normQuant(lt)
		}
		if q, ok := checkpointQuant[lt]; ok {
			return q
		}
	}
	return ""
}

// backendFromList maps llama-bench's backends column ("ROCm", "CUDA",
// "Metal,BLAS", "MTL,BLAS", "Vulkan", "CPU", "BLAS") to the schema's
// backend: the GPU API when there is one, else cpu. Builds of 2025-26 name
// Metal "MTL" (llama.cpp benches/mac-m2-ultra, build 7948), which had read
// as BLAS, so as cpu.
func backendFromList(s string) string {
	l := strings.ToLower(s)
	for _, b := range []struct{ key, id string }{
		{"cuda", "cuda"}, {"rocm", "rocm"}, {"hip", "rocm"}, {"vulkan", "vulkan"},
		{"metal", "metal"}, {"mtl", "metal"}, {"sycl", "sycl"}, {"cpu", "cpu"}, {"blas", "cpu"},
	} {
		if strings.Contains(l, b.key) {
			return b.id
		}
	}
	return ""
}

// dtypeQuant maps a checkpoint's native dtype (catalog spelling) to a
// weight-format id.
func dtypeQuant(dtype string) string {
	switch strings.ToLower(strings.TrimSpace(dtype)) {
	case "bfloat16", "bf16":
		return "bf16"
	case "float16", "fp16", "f16", "half":
		return "f16"
	case "float32", "fp32", "f32":
		return "f32"
	case "fp8", "float8", "float8_e4m3fn":
		return "fp8"
	case "mxfp4":
		return "mxfp4"
	}
	return ""
}
