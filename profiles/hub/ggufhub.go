package hub

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/profiles/gguf"
)

// ggufFirst is the first range asked of a GGUF file; the range doubles
// while the header parser needs more (a 150k-token vocabulary makes a
// header of about 6 MB).
const ggufFirst = 1 << 20

// splitRE matches llama.cpp's split names, "%s-%05d-of-%05d.gguf".
var splitRE = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// ggufFiles lists the repository's model GGUF files (not mmproj
// projectors), sorted.
func ggufFiles(info ModelInfo) []File {
	var out []File
	for _, f := range info.Files {
		base := strings.ToLower(path.Base(f.Path))
		if strings.HasSuffix(base, ".gguf") && !strings.HasPrefix(base, "mmproj") {
			out = append(out, f)
		}
	}
	return out
}

// hasQuant reports whether p carries quant as a whole token: preceded by
// the start or a non-alphanumeric character, followed by the end or one of
// '.', '-', '/' (so Q4_K matches neither Q4_K_M nor IQ4_K).
func hasQuant(p, quant string) bool {
	p, quant = strings.ToLower(p), strings.ToLower(quant)
	if quant == "" {
		return false
	}
	for from := 0; from < len(p); {
		i := strings.Index(p[from:], quant)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(quant)
		before := i == 0 || !isAlnum(p[i-1])
		after := end == len(p) || strings.ContainsRune(".-/", rune(p[end]))
		if before && after {
			return true
		}
		from = i + 1
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z'
}

// ggufGroup is one GGUF model in a repository: a single file or every
// shard of a split.
type ggufGroup struct {
	key   string
	files []File
	want  int // shards named by the split suffix; 1 for a single file
}

// pickGGUF returns the files of the GGUF model whose name carries quant:
// split shards (-00001-of-0000N.gguf) together, in order. Among several
// matches a plain name is preferred to an Unsloth "UD-" one (unless the
// quant asks for UD-), then the shortest path.
func pickGGUF(info ModelInfo, repo, quant string) ([]File, error) {
	groups := map[string]*ggufGroup{}
	for _, f := range ggufFiles(info) {
		if !hasQuant(f.Path, quant) {
			continue
		}
		key, want := f.Path, 1
		if m := splitRE.FindStringSubmatch(path.Base(f.Path)); m != nil {
			key = path.Join(path.Dir(f.Path), m[1])
			want, _ = strconv.Atoi(m[3])
		}
		g := groups[key]
		if g == nil {
			g = &ggufGroup{key: key, want: want}
			groups[key] = g
		}
		g.files = append(g.files, f)
	}
	if len(groups) == 0 {
		return nil, &NotFoundError{What: "quant", Name: quant, Repo: repo, Hint: availableQuants(info)}
	}
	list := make([]*ggufGroup, 0, len(groups))
	for _, g := range groups {
		list = append(list, g)
	}
	ud := strings.HasPrefix(strings.ToLower(quant), "ud-")
	sort.Slice(list, func(i, j int) bool {
		ui := strings.Contains(strings.ToLower(list[i].key), "ud-") != ud
		uj := strings.Contains(strings.ToLower(list[j].key), "ud-") != ud
		if ui != uj {
			return !ui
		}
		if len(list[i].key) != len(list[j].key) {
			return len(list[i].key) < len(list[j].key)
		}
		return list[i].key < list[j].key
	})
	g := list[0]
	sort.Slice(g.files, func(i, j int) bool { return g.files[i].Path < g.files[j].Path })
	if len(g.files) != g.want {
		return nil, fmt.Errorf("%s: %s is split into %d files, the repository lists %d of them", repo, g.key, g.want, len(g.files))
	}
	return g.files, nil
}

// availableQuants names the repository's GGUF files, for a not-found hint.
func availableQuants(info ModelInfo) string {
	files := ggufFiles(info)
	if len(files) == 0 {
		return "the repository has no .gguf files"
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		if m := splitRE.FindStringSubmatch(path.Base(f.Path)); m != nil && m[2] != "00001" {
			continue
		}
		names = append(names, f.Path)
		if len(names) == 12 {
			names = append(names, "…")
			break
		}
	}
	return "the repository has " + strings.Join(names, ", ")
}

// resolveHubGGUF reads the GGUF headers of the file(s) carrying r.Quant.
func (s *session) resolveHubGGUF(ctx context.Context, r Ref, info ModelInfo) (Result, error) {
	files, err := pickGGUF(info, r.Repo, r.Quant)
	if err != nil {
		return Result{}, err
	}
	parts := make([]gguf.Part, 0, len(files))
	opened := make([]*remoteFile, 0, len(files))
	keys := make([]string, 0, len(files))
	cached := make([]bool, 0, len(files))
	res := Result{}
	for _, f := range files {
		key := "hf/" + r.Repo + "/" + info.SHA + "/headers/" + f.Path
		t := target{repo: r.Repo, what: "file", name: f.Path, hub: true}
		rf, c, err := s.openHeader(ctx, key, s.fileURL(r.Repo, info.SHA, f.Path), t, f.Size, ggufFirst)
		if err != nil {
			return Result{}, err
		}
		parts = append(parts, gguf.Part{Name: f.Path, R: rf, Size: rf.size})
		opened, keys, cached = append(opened, rf), append(keys, key), append(cached, c)
		res.Files = append(res.Files, f.Path)
	}
	m, err := gguf.ReadParts(parts, path.Base(files[0].Path))
	if err != nil {
		return Result{}, err
	}
	for i, rf := range opened {
		if !cached[i] {
			_ = s.cache.Put(keys[i], encodeHeader(rf.prefix(), rf.size))
		}
	}
	m.ID = "hf.co/" + r.Repo + ":" + r.Quant
	m.Source = fmt.Sprintf("Hugging Face %s@%s: %s", r.Repo, info.SHA[:12], m.Source)
	res.Model, res.Quant = m, ggufQuantID(r.Quant, m.FileQuant)
	return res, nil
}

// ggufQuantID names a GGUF file's format with a catalog quant id: the
// Unsloth dynamic formats by the name asked for (their file type is the
// base k-quant), else the file's general.file_type.
func ggufQuantID(asked, fileQuant string) string {
	switch q := strings.TrimPrefix(strings.ToLower(asked), "ud-"); q {
	case "q4_k_xl", "q3_k_xl":
		return q
	}
	return fileQuant
}
