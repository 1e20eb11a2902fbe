package hub

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// ModelInfo is the part of the Hub's model API answer
// (GET /api/models/{repo}/revision/{rev}?blobs=true) that resolution uses.
type ModelInfo struct {
	// ID is ORG/NAME as the Hub spells it.
	ID string
	// SHA is the revision's commit (40 hex digits).
	SHA string
	// Gated is "", "auto" or "manual".
	Gated string
	// Files are the repository's files at that commit, sorted by path.
	Files []File
}

// File is one repository file; Size is -1 when the API did not say.
type File struct {
	Path string
	Size int64
}

// apiModel is the JSON as the Hub sends it.
type apiModel struct {
	ID       string          `json:"id"`
	ModelID  string          `json:"modelId"`
	SHA      string          `json:"sha"`
	Gated    json.RawMessage `json:"gated"`
	Siblings []struct {
		RFilename string `json:"rfilename"`
		Size      *int64 `json:"size"`
		LFS       *struct {
			Size int64 `json:"size"`
		} `json:"lfs"`
	} `json:"siblings"`
}

// Limits on a model API answer.
const (
	maxAPIBytes = 16 << 20
	maxSiblings = 200000
)

var shaRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ParseModelInfo reads a Hub model API answer. It checks what later steps
// rely on: a 40-hex commit, file paths that stay inside the repository,
// sizes that are not negative. Unknown fields are ignored.
func ParseModelInfo(data []byte) (ModelInfo, error) {
	if len(data) > maxAPIBytes {
		return ModelInfo{}, fmt.Errorf("model API answer is %d bytes, more than %d", len(data), maxAPIBytes)
	}
	var a apiModel
	if err := json.Unmarshal(data, &a); err != nil {
		return ModelInfo{}, fmt.Errorf("model API answer: %w", err)
	}
	id := a.ID
	if id == "" {
		id = a.ModelID
	}
	if !shaRE.MatchString(a.SHA) {
		return ModelInfo{}, fmt.Errorf("model API answer for %q: sha %q is not a 40-hex commit", id, a.SHA)
	}
	if len(a.Siblings) > maxSiblings {
		return ModelInfo{}, fmt.Errorf("model API answer for %q lists %d files, more than %d", id, len(a.Siblings), maxSiblings)
	}
	info := ModelInfo{ID: id, SHA: a.SHA, Gated: gatedValue(a.Gated), Files: make([]File, 0, len(a.Siblings))}
	for _, s := range a.Siblings {
		if !safeRepoPath(s.RFilename) {
			return ModelInfo{}, fmt.Errorf("model API answer for %q: file name %q leaves the repository", id, s.RFilename)
		}
		f := File{Path: s.RFilename, Size: -1}
		switch {
		case s.LFS != nil && s.LFS.Size >= 0:
			f.Size = s.LFS.Size
		case s.Size != nil && *s.Size >= 0:
			f.Size = *s.Size
		}
		info.Files = append(info.Files, f)
	}
	sort.Slice(info.Files, func(i, j int) bool { return info.Files[i].Path < info.Files[j].Path })
	return info, nil
}

// gatedValue reads "gated": false, "auto" or "manual".
func gatedValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

// safeRepoPath accepts a relative '/'-separated path without empty, "."
// or ".." segments.
func safeRepoPath(p string) bool {
	if p == "" || len(p) > 1024 || strings.ContainsAny(p, "\\\x00") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// file returns the named file and whether the repository has it.
func (m ModelInfo) file(path string) (File, bool) {
	i := sort.Search(len(m.Files), func(i int) bool { return m.Files[i].Path >= path })
	if i < len(m.Files) && m.Files[i].Path == path {
		return m.Files[i], true
	}
	return File{}, false
}
