package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Artifact is a real checkpoint or GGUF file of a model in one format.
type Artifact struct {
	// Repo is ORG/NAME of the checkpoint or GGUF repository.
	Repo string
	// Files are the GGUF file(s) for a GGUF format; empty for checkpoints.
	Files []string
	// Quant is the catalog quant id looked for.
	Quant string
	// Launch is the reference engines take: ORG/NAME:QUANT for
	// `llama-server -hf` and `ollama run hf.co/...`, ORG/NAME for
	// `vllm serve` and SGLang.
	Launch string
}

// quantizers are the organisations searched after the model's own, in
// order: the ones that publish GGUF and quantized checkpoints of most
// current models.
var quantizers = []string{"unsloth", "bartowski", "lmstudio-community", "Qwen", "RedHatAI", "neuralmagic", "casperhansen", "TheBloke"}

// formatTokens are the name fragments that mark a repository of each
// format family (catalog quant ids, profiles/catalog/quants.toml).
func formatTokens(quant string) (tokens []string, gguf bool) {
	switch q := strings.ToLower(quant); {
	case q == "awq-int4":
		return []string{"awq"}, false
	case q == "gptq-int4":
		return []string{"gptq", "int4"}, false
	case q == "fp8":
		return []string{"fp8"}, false
	case q == "nvfp4":
		return []string{"nvfp4", "fp4"}, false
	case q == "w8a8-int8":
		return []string{"w8a8", "int8"}, false
	case q == "bnb-nf4":
		return []string{"bnb-4bit", "bnb"}, false
	case q == "bf16", q == "f16", q == "f32", q == "mxfp4":
		return nil, false // the original checkpoint
	}
	return []string{"gguf"}, true
}

// ggufQuantName is the file-name form of a GGUF quant id: Q4_K_M, and the
// Unsloth dynamic formats with their UD- prefix.
func ggufQuantName(quant string) string {
	q := strings.ToUpper(quant)
	if q == "Q4_K_XL" || q == "Q3_K_XL" || q == "Q2_K_XL" {
		return "UD-" + q
	}
	return q
}

// Advice says which repository to look for when the Hub cannot be asked
// (offline), for a model (ORG/NAME or NAME) in a catalog quant format.
func Advice(base, quant string) string {
	name := base[strings.LastIndex(base, "/")+1:]
	tokens, isGGUF := formatTokens(quant)
	switch {
	case isGGUF:
		return fmt.Sprintf("look for a %s-GGUF repository (unsloth, bartowski, or the model's own org) with a file named *%s*.gguf; run it with llama-server -hf ORG/%s-GGUF:%s",
			name, ggufQuantName(quant), name, ggufQuantName(quant))
	case tokens == nil:
		return fmt.Sprintf("use the original checkpoint %s", base)
	}
	return fmt.Sprintf("look for a %s checkpoint of %s (a repository named like %s-%s, from the model's own org, RedHatAI, or another quantizer); serve it with vllm serve ORG/NAME",
		strings.ToUpper(tokens[0]), name, name, strings.ToUpper(tokens[0]))
}

// searchHit is one entry of GET /api/models?search=...
type searchHit struct {
	ID string `json:"id"`
}

// maxSearchBytes bounds one search answer.
const maxSearchBytes = 4 << 20

// FindArtifact searches the Hub for a real repository of base (ORG/NAME
// or NAME) in the catalog quant format quant: the original checkpoint for
// bf16/f16/mxfp4; else repositories whose names contain the model's name
// and the format's token (AWQ, GPTQ, FP8, GGUF ...), searching the
// model's own org first, then the quantizers list. For a GGUF format the
// repository must hold a file of that quant, which is returned with it.
// Offline, or when nothing is found, the error carries Advice.
func FindArtifact(ctx context.Context, base, quant string, opt Options) (Artifact, error) {
	s, err := newSession(opt)
	if err != nil {
		return Artifact{}, err
	}
	org, name := "", base
	if i := strings.LastIndex(base, "/"); i >= 0 {
		org, name = base[:i], base[i+1:]
	}
	if quant == "" || name == "" {
		return Artifact{}, fmt.Errorf("find a checkpoint: want a model name and a quant id, got %q and %q", base, quant)
	}
	tokens, isGGUF := formatTokens(quant)
	if tokens == nil && org != "" {
		return Artifact{Repo: base, Quant: quant, Launch: base}, nil
	}
	if s.opt.Offline {
		return Artifact{}, fmt.Errorf("find a %s checkpoint of %s: %w; %s", quant, base, ErrOffline, Advice(base, quant))
	}
	orgs := quantizers
	if org != "" {
		orgs = append([]string{org}, quantizers...)
	}
	seen := map[string]bool{}
	for _, o := range orgs {
		if seen[o] {
			continue
		}
		seen[o] = true
		hits, err := s.search(ctx, name, o)
		if err != nil {
			return Artifact{}, err
		}
		for _, repo := range matching(hits, name, tokens) {
			if !isGGUF {
				return Artifact{Repo: repo, Quant: quant, Launch: repo}, nil
			}
			if a, ok := s.ggufArtifact(ctx, repo, quant); ok {
				return a, nil
			}
		}
	}
	return Artifact{}, &NotFoundError{What: "checkpoint", Name: quant + " of " + base, Hint: Advice(base, quant)}
}

// search asks the Hub for an author's models whose names contain name.
func (s *session) search(ctx context.Context, name, author string) ([]searchHit, error) {
	q := url.Values{"search": {name}, "author": {author}, "sort": {"downloads"}, "direction": {"-1"}, "limit": {"50"}}
	u := s.opt.Endpoint + "/api/models?" + q.Encode()
	rep, err := s.get(ctx, u, target{repo: author, what: "author", name: author, hub: true}, 0, 0, maxSearchBytes+1, s.newBudget("model search"))
	if err != nil {
		return nil, fmt.Errorf("search the Hub for %s by %s: %w", name, author, err)
	}
	var hits []searchHit
	if err := json.Unmarshal(rep.body, &hits); err != nil {
		return nil, fmt.Errorf("search the Hub for %s by %s: %w", name, author, err)
	}
	return hits, nil
}

// matching keeps the hits whose repository name contains name and one of
// tokens (case-insensitive), shortest name first (the plain conversion
// before fine-tunes of it), then in the Hub's order (downloads).
func matching(hits []searchHit, name string, tokens []string) []string {
	var out []string
	lname := strings.ToLower(name)
	for _, h := range hits {
		if !repoRE.MatchString(h.ID) {
			continue
		}
		n := strings.ToLower(h.ID[strings.Index(h.ID, "/")+1:])
		if !strings.Contains(n, lname) {
			continue
		}
		for _, t := range tokens {
			if strings.Contains(n, t) {
				out = append(out, h.ID)
				break
			}
		}
	}
	for i := 1; i < len(out); i++ { // stable insertion sort by length
		for j := i; j > 0 && len(out[j]) < len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// ggufArtifact checks that a GGUF repository holds the quant's file.
func (s *session) ggufArtifact(ctx context.Context, repo, quant string) (Artifact, bool) {
	info, _, err := s.modelInfo(ctx, Ref{Kind: KindHubGGUF, Repo: repo})
	if err != nil {
		return Artifact{}, false
	}
	qname := ggufQuantName(quant)
	files, err := pickGGUF(info, repo, qname)
	if err != nil {
		return Artifact{}, false
	}
	a := Artifact{Repo: repo, Quant: quant, Launch: repo + ":" + qname}
	for _, f := range files {
		a.Files = append(a.Files, f.Path)
	}
	return a, true
}
