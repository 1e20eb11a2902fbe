package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/headroom-planner/headroom/profiles/gguf"
)

// Media types of an Ollama manifest's layers (ollama server/images.go).
const (
	mediaModel     = "application/vnd.ollama.image.model"
	manifestAccept = "application/vnd.docker.distribution.manifest.v2+json"
)

// Manifest is an Ollama registry manifest (Docker manifest v2 shape).
type Manifest struct {
	SchemaVersion int     `json:"schemaVersion"`
	MediaType     string  `json:"mediaType"`
	Config        Layer   `json:"config"`
	Layers        []Layer `json:"layers"`
}

// Layer is one blob a manifest names.
type Layer struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
}

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// maxManifest bounds a manifest; real ones are under 2 KB.
const maxManifest = 1 << 20

// ParseManifest reads a registry manifest and checks its layers: sha256
// digests, sizes that are not negative, at most 1000 layers.
func ParseManifest(data []byte) (Manifest, error) {
	if len(data) > maxManifest {
		return Manifest{}, fmt.Errorf("manifest is %d bytes, more than %d", len(data), maxManifest)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("manifest: %w", err)
	}
	if m.SchemaVersion != 2 {
		return Manifest{}, fmt.Errorf("manifest schemaVersion %d: want 2", m.SchemaVersion)
	}
	if len(m.Layers) > 1000 {
		return Manifest{}, fmt.Errorf("manifest has %d layers, more than 1000", len(m.Layers))
	}
	for _, l := range m.Layers {
		if !digestRE.MatchString(l.Digest) || l.Size < 0 {
			return Manifest{}, fmt.Errorf("manifest layer %s: digest %q or size %d is malformed", l.MediaType, l.Digest, l.Size)
		}
	}
	return m, nil
}

// ModelLayer returns the layer holding the GGUF model.
func (m Manifest) ModelLayer() (Layer, bool) {
	for _, l := range m.Layers {
		if l.MediaType == mediaModel {
			return l, true
		}
	}
	return Layer{}, false
}

// ollamaHost is the registry's host as a cache key segment.
func (s *session) ollamaHost() string {
	u, _ := url.Parse(s.opt.OllamaRegistry)
	return strings.NewReplacer(":", "_", "/", "_").Replace(u.Host)
}

// resolveOllama reads the tag's manifest, then the GGUF header of its
// model layer by ranges.
func (s *session) resolveOllama(ctx context.Context, r Ref) (Result, error) {
	man, notes, err := s.manifest(ctx, r)
	if err != nil {
		return Result{}, err
	}
	layer, ok := man.ModelLayer()
	if !ok {
		return Result{}, fmt.Errorf("%s: %w: the manifest has no %s layer", r, ErrNoWeights, mediaModel)
	}
	key := "ollama/" + s.ollamaHost() + "/" + r.Repo + "/blobs/" + strings.Replace(layer.Digest, ":", "-", 1)
	u := s.opt.OllamaRegistry + "/v2/" + r.Repo + "/blobs/" + layer.Digest
	t := target{repo: r.Repo, what: "blob", name: layer.Digest}
	rf, cached, err := s.openHeader(ctx, key, u, t, layer.Size, ggufFirst)
	if err != nil {
		return Result{}, err
	}
	name := strings.TrimPrefix(r.Repo, "library/") + ":" + r.tag()
	m, err := gguf.ReadParts([]gguf.Part{{Name: layer.Digest, R: rf, Size: rf.size}}, name)
	if err != nil {
		return Result{}, err
	}
	if !cached {
		_ = s.cache.Put(key, encodeHeader(rf.prefix(), rf.size))
	}
	m.ID = "ollama:" + name
	m.Source = fmt.Sprintf("Ollama %s (%s): %s", name, layer.Digest[:19], m.Source)
	return Result{Model: m, Repo: r.Repo, Commit: layer.Digest, Files: []string{layer.Digest},
		Quant: m.FileQuant, Notes: notes}, nil
}

// manifest fetches the tag's manifest, from the cache when offline or
// when the registry cannot be reached.
func (s *session) manifest(ctx context.Context, r Ref) (Manifest, []string, error) {
	key := "ollama/" + s.ollamaHost() + "/" + r.Repo + "/manifests/" + r.tag()
	cached := func() (Manifest, bool) {
		data, ok, err := s.cache.Get(key)
		if err != nil || !ok {
			return Manifest{}, false
		}
		m, err := ParseManifest(data)
		return m, err == nil
	}
	if s.opt.Offline {
		if m, ok := cached(); ok {
			return m, nil, nil
		}
		return Manifest{}, nil, fmt.Errorf("%s: %w (run once online, or without --offline / HF_HUB_OFFLINE)", r, ErrOffline)
	}
	u := s.opt.OllamaRegistry + "/v2/" + r.Repo + "/manifests/" + url.PathEscape(r.tag())
	t := target{repo: r.Repo, what: "tag", name: strings.TrimPrefix(r.Repo, "library/") + ":" + r.tag(), accept: manifestAccept}
	rep, err := s.get(ctx, u, t, 0, 0, maxManifest+1, s.newBudget("manifest "+t.name))
	if err != nil {
		if networkFailure(ctx, err) {
			if m, ok := cached(); ok {
				return m, []string{fmt.Sprintf("the registry could not be reached (%v); used the cached manifest", err)}, nil
			}
		}
		return Manifest{}, nil, err
	}
	m, err := ParseManifest(rep.body)
	if err != nil {
		return Manifest{}, nil, fmt.Errorf("%s: %w", r, err)
	}
	_ = s.cache.Put(key, rep.body)
	return m, nil, nil
}
