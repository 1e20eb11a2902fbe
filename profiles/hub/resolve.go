package hub

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/hf"
)

// Result is a resolved reference: the model and where it came from.
type Result struct {
	Model planner.Model `json:"-"`
	Ref   Ref           `json:"ref"`
	// Repo is ORG/NAME on the Hub, or NS/NAME in the Ollama registry.
	Repo string `json:"repo"`
	// Commit is the Hub commit the files were read at, or the Ollama model
	// layer's digest.
	Commit string `json:"commit"`
	// Files are the files whose headers or contents were read (repository
	// paths; a digest for Ollama).
	Files []string `json:"files"`
	// Quant is the weight format as a catalog quant id
	// (profiles/catalog/quants.toml: awq-int4, fp8, q4_k_m ...), "" when
	// not recognised.
	Quant string `json:"quant"`
	// WeightBytes is the exact sum of the tensors' bytes (zero when the
	// repository has no readable weights; see Notes).
	WeightBytes planner.Bytes `json:"weight_bytes"`
	// BytesRead is what this resolution received over the network (zero
	// when everything came from the cache).
	BytesRead int64 `json:"bytes_read"`
	// FromCache is true when nothing was requested.
	FromCache bool `json:"from_cache"`
	// Generic is true when the architecture is not one Headroom knows and
	// the model is a generic decoder estimate.
	Generic bool `json:"generic,omitempty"`
	// Notes say what the user should know (a generic estimate, the cache
	// used because the network failed ...).
	Notes []string `json:"notes,omitempty"`
}

// Resolve parses ref (see ParseRef; quant is a -q value or "", and a bare
// NAME:TAG counts as an Ollama tag) and resolves it.
func Resolve(ctx context.Context, ref, quant string, opt Options) (Result, error) {
	r, err := ParseRef(ref, quant, true)
	if err != nil {
		return Result{}, err
	}
	return ResolveRef(ctx, r, opt)
}

// ResolveRef reads the model a parsed reference points to: Hub metadata,
// small files whole, weight files only as far as their headers, all
// within opt's byte caps, from the cache where it can.
func ResolveRef(ctx context.Context, r Ref, opt Options) (Result, error) {
	s, err := newSession(opt)
	if err != nil {
		return Result{}, err
	}
	var res Result
	switch r.Kind {
	case KindHub, KindHubGGUF:
		res, err = s.resolveHub(ctx, r)
	case KindOllama:
		res, err = s.resolveOllama(ctx, r)
	default:
		err = fmt.Errorf("resolve %v: unknown reference kind", r)
	}
	if err != nil {
		return Result{}, fmt.Errorf("resolve %s: %w", r, err)
	}
	if res.Ref.Kind == 0 {
		res.Ref = r
	}
	res.BytesRead = s.bytesRead()
	res.FromCache = res.BytesRead == 0
	res.WeightBytes = res.Model.FileBytes
	return res, nil
}

// resolveHub reads a Hub repository: safetensors, or GGUF when asked for
// a quant or when the repository holds only GGUF files.
func (s *session) resolveHub(ctx context.Context, r Ref) (Result, error) {
	info, notes, err := s.modelInfo(ctx, r)
	if err != nil {
		return Result{}, err
	}
	var res Result
	_, hasConfig := info.file("config.json")
	hasGGUF := len(ggufFiles(info)) > 0
	switch {
	case r.Kind == KindHubGGUF:
		res, err = s.resolveHubGGUF(ctx, r, info)
	case !hasConfig && hasGGUF:
		r.Kind, r.Quant = KindHubGGUF, "Q4_K_M"
		res, err = s.resolveHubGGUF(ctx, r, info)
		notes = append(notes, "the repository holds GGUF files only; read its Q4_K_M file (give a quant to pick another)")
	case !hasConfig:
		return Result{}, fmt.Errorf("%s@%s: %w: no config.json and no .gguf file", r.Repo, info.SHA[:12], ErrNoWeights)
	default:
		res, err = s.resolveSafetensors(ctx, r, info)
	}
	if err != nil {
		return Result{}, err
	}
	res.Ref, res.Repo, res.Commit = r, info.ID, info.SHA
	if res.Repo == "" {
		res.Repo = r.Repo
	}
	res.Notes = append(notes, res.Notes...)
	return res, nil
}

// modelInfo asks the Hub's model API for the revision's commit and files,
// falling back to the cache when offline or when the network fails.
func (s *session) modelInfo(ctx context.Context, r Ref) (ModelInfo, []string, error) {
	rev := r.revision()
	refKey := "hf/" + r.Repo + "/refs/" + url.PathEscape(rev)
	if s.opt.Offline || shaRE.MatchString(rev) {
		info, err := s.cachedInfo(r.Repo, refKey, rev)
		if err == nil || s.opt.Offline {
			if err != nil {
				return ModelInfo{}, nil, fmt.Errorf("%s@%s: %w (run once online, or without --offline / HF_HUB_OFFLINE)", r.Repo, rev, ErrOffline)
			}
			return info, nil, nil
		}
	}
	u := s.opt.Endpoint + "/api/models/" + r.Repo + "/revision/" + url.PathEscape(rev) + "?blobs=true"
	t := target{repo: r.Repo, what: "repository", name: r.Repo, hub: true}
	if rev != "main" {
		t.what, t.name = "revision", rev
	}
	rep, err := s.get(ctx, u, t, 0, 0, maxAPIBytes+1, s.newBudget("model API answer"))
	if err != nil {
		if networkFailure(ctx, err) {
			if info, cerr := s.cachedInfo(r.Repo, refKey, rev); cerr == nil {
				return info, []string{fmt.Sprintf("the Hub could not be reached (%v); used the cached metadata of commit %s", err, info.SHA[:12])}, nil
			}
		}
		return ModelInfo{}, nil, err
	}
	info, err := ParseModelInfo(rep.body)
	if err != nil {
		return ModelInfo{}, nil, err
	}
	_ = s.cache.Put("hf/"+r.Repo+"/"+info.SHA+"/api.json", rep.body)
	_ = s.cache.Put(refKey, []byte(info.SHA))
	return info, nil, nil
}

// cachedInfo reads the model API answer cached for a revision.
func (s *session) cachedInfo(repo, refKey, rev string) (ModelInfo, error) {
	sha := rev
	if !shaRE.MatchString(rev) {
		data, ok, err := s.cache.Get(refKey)
		if err != nil || !ok {
			return ModelInfo{}, fmt.Errorf("revision %s of %s is not cached: %w", rev, repo, errors.Join(err, ErrOffline))
		}
		sha = strings.TrimSpace(string(data))
		if !shaRE.MatchString(sha) {
			return ModelInfo{}, fmt.Errorf("cached revision %s of %s is damaged (run `headroom cache clear`)", rev, repo)
		}
	}
	data, ok, err := s.cache.Get("hf/" + repo + "/" + sha + "/api.json")
	if err != nil || !ok {
		return ModelInfo{}, fmt.Errorf("commit %s of %s is not cached: %w", sha, repo, errors.Join(err, ErrOffline))
	}
	return ParseModelInfo(data)
}

// networkFailure reports whether err is the network failing (no answer),
// as opposed to an answer refusing, a cap, or the caller cancelling.
func networkFailure(ctx context.Context, err error) bool {
	var nf *NotFoundError
	var ae *AuthError
	var he *HTTPError
	switch {
	case ctx.Err() != nil, errors.As(err, &nf), errors.As(err, &ae), errors.As(err, &he),
		errors.Is(err, ErrCapExceeded), errors.Is(err, ErrOffline):
		return false
	}
	return true
}

// maxSmallFile bounds config.json, quantization configs and shard indexes.
const maxSmallFile = 16 << 20

// fileURL is a file's resolve URL at a commit.
func (s *session) fileURL(repo, sha, path string) string {
	segs := strings.Split(path, "/")
	for i, p := range segs {
		segs[i] = url.PathEscape(p)
	}
	return s.opt.Endpoint + "/" + repo + "/resolve/" + sha + "/" + strings.Join(segs, "/")
}

// smallFile reads a whole small repository file, from the cache when it
// holds it.
func (s *session) smallFile(ctx context.Context, repo, sha, path string) ([]byte, error) {
	key := "hf/" + repo + "/" + sha + "/files/" + path
	if data, ok, err := s.cache.Get(key); err == nil && ok {
		return data, nil
	}
	t := target{repo: repo, what: "file", name: path, hub: true}
	rep, err := s.get(ctx, s.fileURL(repo, sha, path), t, 0, 0, maxSmallFile+1, s.newBudget(path))
	if err != nil {
		return nil, err
	}
	if len(rep.body) > maxSmallFile {
		return nil, fmt.Errorf("%s of %s is over %d bytes: not a config file", path, repo, maxSmallFile)
	}
	_ = s.cache.Put(key, rep.body)
	return rep.body, nil
}

// resolveSafetensors reads config.json, the quantization configs, the
// shard index and every shard's header.
func (s *session) resolveSafetensors(ctx context.Context, r Ref, info ModelInfo) (Result, error) {
	cfg, err := s.smallFile(ctx, r.Repo, info.SHA, "config.json")
	if err != nil {
		return Result{}, err
	}
	parts := hf.Parts{Config: cfg}
	res := Result{Files: []string{"config.json"}}
	if _, ok := info.file("hf_quant_config.json"); ok {
		if parts.QuantConfig, err = s.smallFile(ctx, r.Repo, info.SHA, "hf_quant_config.json"); err != nil {
			return Result{}, err
		}
		res.Files = append(res.Files, "hf_quant_config.json")
	}
	shards, err := s.shardList(ctx, r.Repo, info)
	if err != nil {
		return Result{}, err
	}
	headers := make([][]planner.Tensor, len(shards))
	err = parallel(ctx, len(shards), func(ctx context.Context, i int) error {
		ts, err := s.safetensorsHeader(ctx, r.Repo, info.SHA, shards[i])
		headers[i] = ts
		return err
	})
	if err != nil {
		return Result{}, err
	}
	for i, sh := range shards {
		parts.Tensors = append(parts.Tensors, headers[i]...)
		res.Files = append(res.Files, sh.Path)
	}
	if len(shards) > 0 {
		parts.WeightsSource = fmt.Sprintf("%d safetensors header(s) read by HTTP range", len(shards))
	} else {
		res.Notes = append(res.Notes, "the repository has no safetensors weights: parameters are estimated from config.json")
	}
	m, err := hf.FromParts(parts, r.Repo+"/config.json")
	if err != nil {
		return Result{}, err
	}
	m.ID, m.Name = r.Repo, r.Repo
	m.Source = strings.Replace(m.Source, "config.json "+r.Repo+"/config.json",
		fmt.Sprintf("Hugging Face %s@%s: config.json", r.Repo, info.SHA[:12]), 1)
	res.Model, res.Quant = m, m.FileQuant
	switch {
	case m.Notes == hf.GenericNote:
		res.Generic = true
		res.Notes = append(res.Notes, fmt.Sprintf("architecture %q: %s", m.Arch, hf.GenericNote))
	case !hf.KnownArch(m.Arch):
		res.Generic = true
		res.Notes = append(res.Notes, fmt.Sprintf("architecture %q is not one Headroom models specifically: a generic decoder reading of config.json, weights exact from the headers", m.Arch))
	}
	return res, nil
}

// shardList is the index's shards, else the repository's top-level
// *.safetensors files (consolidated*.safetensors only when there are no
// others: Mistral repositories ship both layouts).
func (s *session) shardList(ctx context.Context, repo string, info ModelInfo) ([]File, error) {
	if _, ok := info.file(hf.IndexName); ok {
		data, err := s.smallFile(ctx, repo, info.SHA, hf.IndexName)
		if err != nil {
			return nil, err
		}
		names, _, err := hf.ParseIndex(data)
		if err != nil {
			return nil, err
		}
		out := make([]File, 0, len(names))
		for _, n := range names {
			f, ok := info.file(n)
			if !ok {
				return nil, &NotFoundError{What: "file", Name: n, Repo: repo, Hint: hf.IndexName + " names a shard the repository does not have"}
			}
			out = append(out, f)
		}
		return out, nil
	}
	var plain, consolidated []File
	for _, f := range info.Files {
		if strings.Contains(f.Path, "/") || !strings.HasSuffix(f.Path, ".safetensors") {
			continue
		}
		if strings.HasPrefix(f.Path, "consolidated") {
			consolidated = append(consolidated, f)
			continue
		}
		plain = append(plain, f)
	}
	if len(plain) == 0 {
		return consolidated, nil
	}
	return plain, nil
}

// safetensorsHeader reads one shard's header by ranges (64 KiB first: most
// shard headers fit), from the cache when it holds it.
func (s *session) safetensorsHeader(ctx context.Context, repo, sha string, f File) ([]planner.Tensor, error) {
	key := "hf/" + repo + "/" + sha + "/headers/" + f.Path
	t := target{repo: repo, what: "file", name: f.Path, hub: true}
	rf, cached, err := s.openHeader(ctx, key, s.fileURL(repo, sha, f.Path), t, f.Size, 64<<10)
	if err != nil {
		return nil, err
	}
	ts, err := hf.ReadSafetensorsHeader(rf, rf.size)
	if err != nil {
		return nil, fmt.Errorf("%s of %s: %w", f.Path, repo, err)
	}
	if !cached {
		_ = s.cache.Put(key, encodeHeader(rf.prefix(), rf.size))
	}
	return ts, nil
}

// openHeader returns a reader over a weight file's head: the cached
// prefix when there is one, else a remote file whose first first bytes
// have been requested (which also tells its size).
func (s *session) openHeader(ctx context.Context, key, u string, t target, size, first int64) (*remoteFile, bool, error) {
	if data, ok, err := s.cache.Get(key); err == nil && ok {
		prefix, sz, derr := decodeHeader(data)
		if derr == nil {
			return cachedFile(prefix, sz, t.name), true, nil
		}
	}
	rf := s.newRemoteFile(ctx, u, t, size, first)
	want := first
	if size >= 0 {
		want = min(want, size)
	}
	if err := rf.grow(want); err != nil {
		return nil, false, err
	}
	if rf.size < 0 {
		return nil, false, fmt.Errorf("%s of %s: the server did not say the file's size", t.name, t.repo)
	}
	return rf, false, nil
}

// workers bounds the headers read at once: enough to hide round trips on
// checkpoints of 100+ shards, few enough to be polite to the Hub.
const workers = 6

// parallel runs f for 0..n-1 on up to workers goroutines and returns the
// first error; after one, the others are cancelled and no new ones start.
func parallel(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		first    error
		next     int
		nWorkers = min(workers, n)
	)
	for w := 0; w < nWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil || i >= n
				mu.Unlock()
				if stop {
					return
				}
				if err := f(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
