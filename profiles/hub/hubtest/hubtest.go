// Package hubtest runs a fake Hugging Face Hub, a CDN and a fake Ollama
// registry on 127.0.0.1, for tests of package hub and of front ends that
// resolve remote references (point HF_ENDPOINT and
// HEADROOM_OLLAMA_REGISTRY at Server.HubURL and Server.OllamaURL).
//
// The Hub answers GET /api/models/ORG/NAME/revision/REV (the file list
// with sizes and the commit) and GET /ORG/NAME/resolve/REV/PATH: small
// files directly, LFS files (weights) by a 302 redirect to the CDN, which
// answers Range requests with 206. Missing repositories get 401 (anonymous)
// or 404 with X-Error-Code RepoNotFound, gated ones 401/403 with
// X-Error-Code GatedRepo, as huggingface.co does. The registry answers
// /v2/NS/NAME/manifests/TAG and redirects /v2/NS/NAME/blobs/DIGEST to the
// CDN.
//
// Weight files are virtual: a header the package builds followed by zeros
// up to the file's real size, generated as they are sent, so a 20 GB GGUF
// costs only its header in memory. Counters record every byte sent and
// how many of them lay past a file's header (weight bytes), and whether
// an Authorization header reached the CDN. Faults (ignore Range, stall,
// truncate) are switched per server.
package hubtest

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed fixtures
var fixtures embed.FS

// Fixture reads fixtures/ORG--NAME/FILE.
func Fixture(repo, file string) ([]byte, error) {
	return fixtures.ReadFile("fixtures/" + strings.ReplaceAll(repo, "/", "--") + "/" + file)
}

// File is one file of a fake repository: Head, then zeros up to Size.
type File struct {
	Head []byte
	Size int64
	// LFS files are redirected to the CDN, like weights on the Hub.
	LFS bool
}

// Repo is a fake Hub repository at one commit.
type Repo struct {
	ID    string
	SHA   string
	Gated bool
	// Downloads orders search results.
	Downloads int
	// Token is the one token that has accepted a gated repository's
	// licence.
	Token string
	Files map[string]File
}

// Faults change how the servers answer, for error-path tests.
type Faults struct {
	// IgnoreRange answers Range requests with 200 and the whole body.
	IgnoreRange bool
	// Stall sends headers and a few bytes of any file, then nothing until
	// the client gives up.
	Stall bool
	// Truncate declares a file's full length but closes the connection
	// after a few bytes.
	Truncate bool
	// Down answers every request with a closed connection.
	Down bool
	// Busy answers this many requests with 503 and Retry-After: 0 before
	// serving again.
	Busy int
}

// Server is the fake Hub, CDN and registry.
type Server struct {
	Hub    *httptest.Server
	CDN    *httptest.Server
	Ollama *httptest.Server

	mu          sync.Mutex
	repos       map[string]*Repo
	manifests   map[string][]byte // NS/NAME:TAG
	blobs       map[string]File   // digest
	faults      Faults
	sent        int64
	weightBytes int64
	requests    int
	cdnAuth     bool
}

// New starts the three servers, empty; Close stops them.
func New() *Server {
	s := &Server{repos: map[string]*Repo{}, manifests: map[string][]byte{}, blobs: map[string]File{}}
	s.CDN = httptest.NewServer(http.HandlerFunc(s.serveCDN))
	s.Hub = httptest.NewServer(http.HandlerFunc(s.serveHub))
	s.Ollama = httptest.NewServer(http.HandlerFunc(s.serveOllama))
	return s
}

// Close stops the servers.
func (s *Server) Close() {
	s.Hub.Close()
	s.CDN.Close()
	s.Ollama.Close()
}

// HubURL is the fake Hub's endpoint (for HF_ENDPOINT).
func (s *Server) HubURL() string { return s.Hub.URL }

// OllamaURL is the fake registry (for HEADROOM_OLLAMA_REGISTRY).
func (s *Server) OllamaURL() string { return s.Ollama.URL }

// AddRepo serves a repository.
func (s *Server) AddRepo(r *Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[r.ID] = r
}

// AddOllama serves NS/NAME:TAG with a manifest whose model layer is blob.
func (s *Server) AddOllama(name, tag, digest string, blob File) error {
	m := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.docker.distribution.manifest.v2+json",
		"config": map[string]any{"mediaType": "application/vnd.docker.container.image.v1+json",
			"digest": "sha256:" + strings.Repeat("c", 64), "size": 487},
		"layers": []map[string]any{
			{"mediaType": "application/vnd.ollama.image.model", "digest": digest, "size": blob.Size},
			{"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + strings.Repeat("d", 64), "size": 1723},
			{"mediaType": "application/vnd.ollama.image.params", "digest": "sha256:" + strings.Repeat("e", 64), "size": 120},
		},
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.manifests[name+":"+tag] = data
	s.blobs[digest] = blob
	return nil
}

// SetFaults switches faults for later requests.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// Counters are what the servers have sent.
type Counters struct {
	Requests int
	// Sent is every body byte written; WeightBytes those past a file's
	// header.
	Sent        int64
	WeightBytes int64
	// CDNSawAuth is true if an Authorization header reached the CDN.
	CDNSawAuth bool
}

// Counters returns the counts so far.
func (s *Server) Counters() Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Counters{Requests: s.requests, Sent: s.sent, WeightBytes: s.weightBytes, CDNSawAuth: s.cdnAuth}
}

// ResetCounters zeroes the counters.
func (s *Server) ResetCounters() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests, s.sent, s.weightBytes, s.cdnAuth = 0, 0, 0, false
}

// begin counts a request and returns the faults in force; Down hijacks
// and closes the connection.
func (s *Server) begin(w http.ResponseWriter) (Faults, bool) {
	s.mu.Lock()
	s.requests++
	f := s.faults
	busy := s.faults.Busy > 0
	if busy {
		s.faults.Busy--
	}
	s.mu.Unlock()
	if busy {
		w.Header().Set("Retry-After", "0")
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return f, false
	}
	if f.Down {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return f, false
			}
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return f, false
	}
	return f, true
}

// serveHub answers the model API and resolve URLs.
func (s *Server) serveHub(w http.ResponseWriter, r *http.Request) {
	f, ok := s.begin(w)
	if !ok {
		return
	}
	p := strings.Trim(r.URL.Path, "/")
	if p == "api/models" {
		s.serveSearch(w, r)
		return
	}
	if rest, ok := strings.CutPrefix(p, "api/models/"); ok {
		s.serveAPI(w, r, rest)
		return
	}
	parts := strings.SplitN(p, "/", 5) // ORG NAME resolve REV PATH
	if len(parts) < 5 || parts[2] != "resolve" {
		http.NotFound(w, r)
		return
	}
	repo, ok := s.repo(w, r, parts[0]+"/"+parts[1], parts[3])
	if !ok {
		return
	}
	if !s.authorised(w, r, repo) {
		return
	}
	file, ok := repo.Files[parts[4]]
	if !ok {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	if file.LFS {
		http.Redirect(w, r, s.CDN.URL+"/repos/"+repo.ID+"/"+repo.SHA+"/"+parts[4]+"?X-Amz-Signature=fake", http.StatusFound)
		return
	}
	s.serveFile(w, r, file, f)
}

// repo finds a repository at a revision, answering the Hub's errors.
func (s *Server) repo(w http.ResponseWriter, r *http.Request, id, rev string) (*Repo, bool) {
	s.mu.Lock()
	repo := s.repos[id]
	s.mu.Unlock()
	if repo == nil {
		w.Header().Set("X-Error-Code", "RepoNotFound")
		status := http.StatusNotFound
		if r.Header.Get("Authorization") == "" {
			status = http.StatusUnauthorized // the Hub hides private repositories from anonymous callers
		}
		http.Error(w, `{"error":"Repository not found"}`, status)
		return nil, false
	}
	if rev != "main" && rev != repo.SHA {
		w.Header().Set("X-Error-Code", "RevisionNotFound")
		http.Error(w, `{"error":"Invalid rev id"}`, http.StatusNotFound)
		return nil, false
	}
	return repo, true
}

// authorised answers 401/403 for a gated repository without its token.
func (s *Server) authorised(w http.ResponseWriter, r *http.Request, repo *Repo) bool {
	if !repo.Gated {
		return true
	}
	auth := r.Header.Get("Authorization")
	if auth == "Bearer "+repo.Token && repo.Token != "" {
		return true
	}
	w.Header().Set("X-Error-Code", "GatedRepo")
	status := http.StatusUnauthorized
	if auth != "" {
		status = http.StatusForbidden
	}
	http.Error(w, "Access to model "+repo.ID+" is restricted.", status)
	return false
}

// serveAPI answers /api/models/ORG/NAME[/revision/REV].
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, rest string) {
	segs := strings.Split(rest, "/")
	rev := "main"
	switch {
	case len(segs) == 4 && segs[2] == "revision":
		rev = segs[3]
	case len(segs) == 2:
	default:
		http.NotFound(w, r)
		return
	}
	repo, ok := s.repo(w, r, segs[0]+"/"+segs[1], rev)
	if !ok {
		return
	}
	type lfs struct {
		Size int64 `json:"size"`
	}
	type sibling struct {
		RFilename string `json:"rfilename"`
		Size      int64  `json:"size"`
		LFS       *lfs   `json:"lfs,omitempty"`
	}
	names := make([]string, 0, len(repo.Files))
	for n := range repo.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	sib := make([]sibling, 0, len(names))
	for _, n := range names {
		f := repo.Files[n]
		e := sibling{RFilename: n, Size: f.Size}
		if f.LFS {
			e.LFS = &lfs{Size: f.Size}
		}
		sib = append(sib, e)
	}
	var gated any = false
	if repo.Gated {
		gated = "manual"
	}
	body, _ := json.Marshal(map[string]any{
		"_id": "66a0c0ffee", "id": repo.ID, "modelId": repo.ID, "sha": repo.SHA, "private": false,
		"gated": gated, "disabled": false, "library_name": "transformers", "siblings": sib,
	})
	w.Header().Set("Content-Type", "application/json")
	s.write(w, body)
}

// serveSearch answers GET /api/models?search=S&author=A: the
// repositories of author A (any author when absent) whose names contain S
// (case-insensitive), most downloaded first, at most limit.
func (s *Server) serveSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	search, author := strings.ToLower(q.Get("search")), q.Get("author")
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit <= 0 {
		limit = 1000
	}
	s.mu.Lock()
	var found []*Repo
	for _, repo := range s.repos {
		org, name, _ := strings.Cut(repo.ID, "/")
		if (author == "" || author == org) && strings.Contains(strings.ToLower(name), search) {
			found = append(found, repo)
		}
	}
	s.mu.Unlock()
	sort.Slice(found, func(i, j int) bool {
		if found[i].Downloads != found[j].Downloads {
			return found[i].Downloads > found[j].Downloads
		}
		return found[i].ID < found[j].ID
	})
	type hit struct {
		ID        string `json:"id"`
		ModelID   string `json:"modelId"`
		Downloads int    `json:"downloads"`
	}
	out := []hit{}
	for _, repo := range found[:min(len(found), limit)] {
		out = append(out, hit{repo.ID, repo.ID, repo.Downloads})
	}
	body, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	s.write(w, body)
}

// serveCDN answers redirected LFS files and Ollama blobs.
func (s *Server) serveCDN(w http.ResponseWriter, r *http.Request) {
	f, ok := s.begin(w)
	if !ok {
		return
	}
	if r.Header.Get("Authorization") != "" {
		s.mu.Lock()
		s.cdnAuth = true
		s.mu.Unlock()
	}
	p := strings.Trim(r.URL.Path, "/")
	var file File
	found := false
	s.mu.Lock()
	if digest, ok := strings.CutPrefix(p, "blobs/"); ok {
		file, found = s.blobs[digest]
	} else if rest, ok := strings.CutPrefix(p, "repos/"); ok {
		segs := strings.SplitN(rest, "/", 4) // ORG NAME SHA PATH
		if len(segs) == 4 {
			if repo := s.repos[segs[0]+"/"+segs[1]]; repo != nil && repo.SHA == segs[2] {
				file, found = repo.Files[segs[3]]
			}
		}
	}
	s.mu.Unlock()
	if !found {
		http.NotFound(w, r)
		return
	}
	s.serveFile(w, r, file, f)
}

// serveOllama answers manifests and redirects blobs to the CDN.
func (s *Server) serveOllama(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.begin(w); !ok {
		return
	}
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // v2 NS NAME manifests TAG
	if len(segs) != 5 || segs[0] != "v2" {
		http.NotFound(w, r)
		return
	}
	name := segs[1] + "/" + segs[2]
	switch segs[3] {
	case "manifests":
		s.mu.Lock()
		m, ok := s.manifests[name+":"+segs[4]]
		s.mu.Unlock()
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.docker.distribution.manifest.v2+json")
		s.write(w, m)
	case "blobs":
		http.Redirect(w, r, s.CDN.URL+"/blobs/"+segs[4], http.StatusTemporaryRedirect)
	default:
		http.NotFound(w, r)
	}
}

// serveFile sends a virtual file, honouring a single Range unless a fault
// says otherwise.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, file File, f Faults) {
	start, end := int64(0), file.Size // [start, end)
	status := http.StatusOK
	if rng := r.Header.Get("Range"); rng != "" && !f.IgnoreRange {
		a, b, ok := parseRange(rng, file.Size)
		if !ok {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", file.Size))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		start, end, status = a, b, http.StatusPartialContent
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b-1, file.Size))
	}
	w.Header().Set("Accept-Ranges", "bytes")
	w.Header().Set("Content-Length", strconv.FormatInt(end-start, 10))
	w.WriteHeader(status)
	switch {
	case f.Stall:
		s.send(w, file, start, min(end, start+16))
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	case f.Truncate:
		s.send(w, file, start, min(end, start+(end-start)/2))
	default:
		s.send(w, file, start, end)
	}
}

// send writes bytes [a, b) of a virtual file in 64 KiB pieces, counting
// them, until the client goes away.
func (s *Server) send(w io.Writer, file File, a, b int64) {
	buf := make([]byte, 64<<10)
	for off := a; off < b; {
		n := min(int64(len(buf)), b-off)
		chunk := buf[:n]
		clear(chunk)
		if off < int64(len(file.Head)) {
			copy(chunk, file.Head[off:])
		}
		// Count before writing, so that a client never holds bytes the
		// counters do not show yet; take back what was not written.
		s.count(off, off+n, file, 1)
		wrote, err := w.Write(chunk)
		if int64(wrote) < n {
			s.count(off+int64(wrote), off+n, file, -1)
		}
		if err != nil {
			return
		}
		off += int64(wrote)
	}
}

// count adds (sign +1) or takes back (sign -1) the bytes [from, to) of
// file to the counters.
func (s *Server) count(from, to int64, file File, sign int64) {
	past := to - max(from, int64(len(file.Head)))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent += sign * (to - from)
	if past > 0 {
		s.weightBytes += sign * past
	}
}

// write sends a small body with its length.
func (s *Server) write(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	s.mu.Lock()
	s.sent += int64(len(body))
	s.mu.Unlock()
	_, _ = w.Write(body)
}

// parseRange reads "bytes=A-B" or "bytes=A-" into [A, B+1) within size.
func parseRange(v string, size int64) (int64, int64, bool) {
	spec, ok := strings.CutPrefix(v, "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return 0, 0, false
	}
	as, bs, ok := strings.Cut(spec, "-")
	if !ok {
		return 0, 0, false
	}
	a, err := strconv.ParseInt(as, 10, 64)
	if err != nil || a < 0 || a >= size {
		return 0, 0, false
	}
	b := size - 1
	if bs != "" {
		if b, err = strconv.ParseInt(bs, 10, 64); err != nil || b < a {
			return 0, 0, false
		}
	}
	return a, min(b, size-1) + 1, true
}
