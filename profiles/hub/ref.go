package hub

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Kind says where a reference points.
type Kind int

// Reference kinds.
const (
	// KindHub is a Hugging Face repository of safetensors weights (or a
	// GGUF repository, when it has no safetensors).
	KindHub Kind = iota + 1
	// KindHubGGUF is a GGUF file on the Hub picked by its quant.
	KindHubGGUF
	// KindOllama is an Ollama registry tag.
	KindOllama
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindHub:
		return "hugging face repository"
	case KindHubGGUF:
		return "gguf on hugging face"
	case KindOllama:
		return "ollama tag"
	}
	return "unknown"
}

// Ref is a parsed remote model reference.
type Ref struct {
	Kind Kind `json:"kind"`
	// Repo is ORG/NAME on the Hub, or NAMESPACE/NAME in the Ollama
	// registry (library/ for official models).
	Repo string `json:"repo"`
	// Revision is a branch, tag or commit on the Hub ("" = main); the tag
	// for Ollama ("" = latest).
	Revision string `json:"revision,omitempty"`
	// Quant selects a GGUF file on the Hub (Q4_K_M, UD-Q4_K_XL ...).
	Quant string `json:"quant,omitempty"`
}

// String gives the reference back in its canonical form.
func (r Ref) String() string {
	switch r.Kind {
	case KindOllama:
		name := strings.TrimPrefix(r.Repo, "library/")
		if r.Revision == "" {
			return "ollama:" + name
		}
		return "ollama:" + name + ":" + r.Revision
	case KindHubGGUF:
		return "hf.co/" + r.Repo + ":" + r.Quant
	}
	if r.Revision != "" {
		return r.Repo + "@" + r.Revision
	}
	return r.Repo
}

// tag is the Ollama tag, latest by default.
func (r Ref) tag() string {
	if r.Revision == "" {
		return "latest"
	}
	return r.Revision
}

// revision is the Hub revision, main by default.
func (r Ref) revision() string {
	if r.Revision == "" {
		return "main"
	}
	return r.Revision
}

// MarshalText writes the kind as "hub", "hub-gguf" or "ollama".
func (k Kind) MarshalText() ([]byte, error) {
	switch k {
	case KindHub:
		return []byte("hub"), nil
	case KindHubGGUF:
		return []byte("hub-gguf"), nil
	case KindOllama:
		return []byte("ollama"), nil
	}
	return nil, fmt.Errorf("reference kind %d is not one of hub, hub-gguf, ollama", int(k))
}

// Hub repository names: ORG/NAME with letters, digits, '-', '_', '.'
// (huggingface_hub validate_repo_id: up to 96 characters, no "--" or "..").
var (
	repoPart   = `[A-Za-z0-9][A-Za-z0-9._-]{0,95}`
	repoRE     = regexp.MustCompile(`^` + repoPart + `/` + repoPart + `$`)
	ollamaName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,79}(/[a-z0-9][a-z0-9._-]{0,79})?$`)
	ollamaTag  = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)
	revisionRE = regexp.MustCompile(`^[A-Za-z0-9._/-]{1,200}$`)
	quantRE    = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	// ggufQuantRE matches ggml quant names (Q4_K_M, IQ4_XS, UD-Q4_K_XL,
	// TQ1_0, BF16, F16, MXFP4), not checkpoint formats such as awq-int4.
	ggufQuantRE = regexp.MustCompile(`(?i)^(ud-)?(i?q[1-8]_?[a-z0-9_]*|tq[12]_0|bf16|f16|f32|mxfp4[a-z0-9_]*)$`)
)

// IsRemote reports whether s has the form of a remote reference (a Hub
// URL, hf.co/…, ollama:…, or ORG/NAME), so that the application can try
// the catalog and local paths first and come here only for the rest.
// NAME:TAG forms (qwen3:32b) are Ollama tags only when the application
// found no catalog id; see ParseRef's bareOllama.
func IsRemote(s string) bool {
	s = strings.TrimSpace(s)
	for _, p := range []string{"ollama:", "hf.co/", "huggingface.co/", "http://", "https://"} {
		if strings.HasPrefix(strings.ToLower(s), p) {
			return true
		}
	}
	base, _, _ := strings.Cut(s, "@")
	return repoRE.MatchString(base)
}

// ParseRef parses a remote reference:
//
//	ORG/NAME, ORG/NAME@REVISION            a Hub repository (KindHub)
//	https://huggingface.co/ORG/NAME[/tree/REV]   the same, from its page
//	hf.co/ORG/NAME:QUANT, huggingface.co/ORG/NAME:QUANT   GGUF on the Hub
//	ORG/NAME-GGUF with quant               GGUF on the Hub
//	ollama:NAME[:TAG], ollama:NS/NAME[:TAG]   an Ollama tag
//	NAME:TAG                               an Ollama tag, only with bareOllama
//
// quant (from a -q flag; may be "") selects the GGUF file of a repository
// whose name contains "GGUF" when it is a ggml quant name (Q4_K_M,
// IQ4_XS ...); without one, Q4_K_M is used (llama.cpp's -hf default).
// Other repositories stay KindHub whatever quant says (a checkpoint
// format such as awq-int4 is the caller's concern). URLs are read by
// their path, so a mirror's URLs work as well as huggingface.co's.
func ParseRef(s, quant string, bareOllama bool) (Ref, error) {
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "ollama:"):
		return parseOllama(s[len("ollama:"):])
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return parseURL(s, quant)
	case strings.HasPrefix(lower, "hf.co/"):
		return parseHubPath(s[len("hf.co/"):], quant)
	case strings.HasPrefix(lower, "huggingface.co/"):
		return parseHubPath(s[len("huggingface.co/"):], quant)
	}
	if bareOllama && !strings.Contains(s, "/") && strings.Count(s, ":") == 1 {
		return parseOllama(s)
	}
	return parseHubPath(s, quant)
}

// parseURL reads https://huggingface.co/ORG/NAME, optionally followed by
// /tree/REV or /blob/REV/..., or an hf.co URL with :QUANT.
func parseURL(s, quant string) (Ref, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Ref{}, fmt.Errorf("model reference %q: %w", s, err)
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 {
		return Ref{}, fmt.Errorf("model reference %q: want https://huggingface.co/ORG/NAME", s)
	}
	path := parts[0] + "/" + parts[1]
	if len(parts) >= 4 && (parts[2] == "tree" || parts[2] == "blob" || parts[2] == "resolve") {
		path += "@" + parts[3]
	}
	return parseHubPath(path, quant)
}

// parseHubPath reads ORG/NAME[@REV][:QUANT].
func parseHubPath(s, quant string) (Ref, error) {
	r := Ref{Kind: KindHub}
	if base, q, ok := strings.Cut(s, ":"); ok {
		s, r.Quant, r.Kind = base, q, KindHubGGUF
	}
	if base, rev, ok := strings.Cut(s, "@"); ok {
		s, r.Revision = base, rev
		if !revisionRE.MatchString(rev) || strings.Contains(rev, "..") {
			return Ref{}, fmt.Errorf("model reference %q: revision %q is not a branch, tag or commit", s, rev)
		}
	}
	if !repoRE.MatchString(s) || strings.Contains(s, "--") || strings.Contains(s, "..") {
		return Ref{}, fmt.Errorf("model reference %q: want ORG/NAME (letters, digits, '-', '_', '.')", s)
	}
	r.Repo = s
	if r.Kind == KindHub && strings.Contains(strings.ToLower(s), "gguf") {
		r.Kind, r.Quant = KindHubGGUF, "Q4_K_M"
		if ggufQuantRE.MatchString(quant) {
			r.Quant = quant
		}
	}
	if r.Kind == KindHubGGUF && !quantRE.MatchString(r.Quant) {
		return Ref{}, fmt.Errorf("model reference %q: quant %q is not a GGUF quant name such as Q4_K_M", s, r.Quant)
	}
	return r, nil
}

// parseOllama reads NAME[:TAG] or NS/NAME[:TAG].
func parseOllama(s string) (Ref, error) {
	name, tag, _ := strings.Cut(s, ":")
	name = strings.ToLower(name)
	if !ollamaName.MatchString(name) || strings.Contains(name, "..") {
		return Ref{}, fmt.Errorf("ollama reference %q: want NAME:TAG such as qwen3:32b", s)
	}
	if tag != "" && !ollamaTag.MatchString(tag) {
		return Ref{}, fmt.Errorf("ollama reference %q: tag %q has characters a tag cannot have", s, tag)
	}
	if !strings.Contains(name, "/") {
		name = "library/" + name
	}
	return Ref{Kind: KindOllama, Repo: name, Revision: tag}, nil
}
