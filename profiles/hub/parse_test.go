package hub

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	cases := []struct {
		name, in, quant string
		bare            bool
		want            Ref
		wantErr         string
	}{
		{"repo", "Qwen/Qwen2.5-72B-Instruct-AWQ", "", false, Ref{Kind: KindHub, Repo: "Qwen/Qwen2.5-72B-Instruct-AWQ"}, ""},
		{"repo at revision", "Qwen/Qwen3-8B@refs/pr/3", "", false, Ref{Kind: KindHub, Repo: "Qwen/Qwen3-8B", Revision: "refs/pr/3"}, ""},
		{"page url", "https://huggingface.co/google/gemma-3-27b-it", "", false, Ref{Kind: KindHub, Repo: "google/gemma-3-27b-it"}, ""},
		{"tree url", "https://huggingface.co/google/gemma-3-27b-it/tree/v1.0", "", false, Ref{Kind: KindHub, Repo: "google/gemma-3-27b-it", Revision: "v1.0"}, ""},
		{"hf.co quant", "hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M", "", false, Ref{Kind: KindHubGGUF, Repo: "unsloth/Qwen3-32B-GGUF", Quant: "Q4_K_M"}, ""},
		{"gguf repo with -q", "bartowski/Qwen3-32B-GGUF", "q5_k_m", false, Ref{Kind: KindHubGGUF, Repo: "bartowski/Qwen3-32B-GGUF", Quant: "q5_k_m"}, ""},
		{"gguf repo without quant", "bartowski/Qwen3-32B-GGUF", "", false, Ref{Kind: KindHubGGUF, Repo: "bartowski/Qwen3-32B-GGUF", Quant: "Q4_K_M"}, ""},
		{"gguf repo with a checkpoint quant", "bartowski/Qwen3-32B-GGUF", "awq-int4", false, Ref{Kind: KindHubGGUF, Repo: "bartowski/Qwen3-32B-GGUF", Quant: "Q4_K_M"}, ""},
		{"checkpoint repo with -q", "Qwen/Qwen2.5-72B-Instruct-AWQ", "awq-int4", false, Ref{Kind: KindHub, Repo: "Qwen/Qwen2.5-72B-Instruct-AWQ"}, ""},
		{"checkpoint repo with a gguf -q", "Qwen/Qwen3-32B", "q4_k_m", false, Ref{Kind: KindHub, Repo: "Qwen/Qwen3-32B"}, ""},
		{"ollama", "ollama:qwen3:32b", "", false, Ref{Kind: KindOllama, Repo: "library/qwen3", Revision: "32b"}, ""},
		{"ollama namespace latest", "ollama:someone/model", "", false, Ref{Kind: KindOllama, Repo: "someone/model"}, ""},
		{"bare tag allowed", "qwen3:32b", "", true, Ref{Kind: KindOllama, Repo: "library/qwen3", Revision: "32b"}, ""},
		{"bare tag not allowed", "qwen3:32b", "", false, Ref{}, "ORG/NAME"},
		{"no org", "llama", "", false, Ref{}, "ORG/NAME"},
		{"traversal", "a/../b", "", false, Ref{}, "ORG/NAME"},
		{"bad revision", "a/b@..", "", false, Ref{}, "revision"},
		{"bad quant", "hf.co/a/b:Q4 K", "", false, Ref{}, "quant"},
		{"bad ollama tag", "ollama:qwen3:a b", "", false, Ref{}, "tag"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseRef(c.in, c.quant, c.bare)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("ParseRef(%q) = %+v, %v; want an error about %q", c.in, got, err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseRef(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			}
			again, err := ParseRef(got.String(), "", c.bare || got.Kind == KindOllama)
			if err != nil || again != got {
				t.Errorf("String() %q parses back to %+v, %v", got.String(), again, err)
			}
		})
	}
}

func TestIsRemote(t *testing.T) {
	cases := []struct {
		in   string
		want bool
	}{
		{"Qwen/Qwen3-8B", true}, {"ollama:qwen3", true}, {"hf.co/a/b:Q4_K_M", true},
		{"https://huggingface.co/a/b", true}, {"qwen3-8b", false}, {"llama-3.1-8b-instruct", false},
		{"./models/x.gguf", false}, {"/abs/path", false}, {"qwen3:32b", false},
	}
	for _, c := range cases {
		if got := IsRemote(c.in); got != c.want {
			t.Errorf("IsRemote(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestPickGGUF(t *testing.T) {
	info := ModelInfo{ID: "o/m-GGUF", SHA: strings.Repeat("a", 40), Files: []File{
		{"BF16/m-BF16-00001-of-00002.gguf", 10}, {"BF16/m-BF16-00002-of-00002.gguf", 10},
		{"Q3_K_M/m-Q3_K_M-00001-of-00002.gguf", 10},
		{"m-IQ4_XS.gguf", 1}, {"m-Q4_K.gguf", 1}, {"m-Q4_K_M.gguf", 1}, {"m-UD-Q4_K_M.gguf", 1},
		{"mmproj-BF16.gguf", 1}, {"README.md", 1},
	}}
	cases := []struct {
		quant string
		want  []string
		err   string
	}{
		{"Q4_K_M", []string{"m-Q4_K_M.gguf"}, ""},
		{"ud-q4_k_m", []string{"m-UD-Q4_K_M.gguf"}, ""},
		{"Q4_K", []string{"m-Q4_K.gguf"}, ""},
		{"Q4_XS", nil, "no such quant"},
		{"bf16", []string{"BF16/m-BF16-00001-of-00002.gguf", "BF16/m-BF16-00002-of-00002.gguf"}, ""},
		{"Q3_K_M", nil, "lists 1 of them"},
	}
	for _, c := range cases {
		t.Run(c.quant, func(t *testing.T) {
			files, err := pickGGUF(info, info.ID, c.quant)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("pickGGUF(%s) = %v, %v; want error %q", c.quant, files, err, c.err)
				}
				return
			}
			var got []string
			for _, f := range files {
				got = append(got, f.Path)
			}
			if err != nil || strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("pickGGUF(%s) = %v, %v; want %v", c.quant, got, err, c.want)
			}
		})
	}
}

func TestFindToken(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, ".cache", "huggingface"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".cache", "huggingface", "token"), []byte("hf_fromFile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"HF_TOKEN first", map[string]string{"HF_TOKEN": "hf_env", "HOME": home}, "hf_env"},
		{"legacy variable", map[string]string{"HUGGING_FACE_HUB_TOKEN": "hf_old", "HOME": home}, "hf_old"},
		{"CLI token file", map[string]string{"HOME": home}, "hf_fromFile"},
		{"HF_HOME without a file", map[string]string{"HF_HOME": filepath.Join(dir, "nothing")}, ""},
		{"nothing at all", map[string]string{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := FindToken(func(k string) string { return c.env[k] })
			if err != nil || got != c.want {
				t.Errorf("FindToken = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"HF_ENDPOINT": "https://hf-mirror.example", "HF_HUB_OFFLINE": "1",
		"HEADROOM_OLLAMA_REGISTRY": "http://127.0.0.1:9", "HEADROOM_HUB_CACHE": "/tmp/x", "HF_TOKEN": "hf_t"}
	o := FromEnv(func(k string) string { return env[k] })
	if o.Endpoint != env["HF_ENDPOINT"] || !o.Offline || o.OllamaRegistry != env["HEADROOM_OLLAMA_REGISTRY"] || o.CacheDir != "/tmp/x" || o.Token != "hf_t" {
		t.Errorf("FromEnv = %+v", o)
	}
	if _, err := (Options{Endpoint: "ftp://x"}).withDefaults(); err == nil {
		t.Error("an ftp endpoint was accepted")
	}
}

func TestContentRange(t *testing.T) {
	cases := []struct {
		in           string
		start, total int64
		ok           bool
	}{
		{"bytes 0-99/1000", 0, 1000, true}, {"bytes 100-199/*", 100, -1, true}, {"bytes */1000", 0, 1000, true},
		{"bytes 5-4/x", 0, -1, false}, {"items 0-1/2", 0, -1, false}, {"bytes -1-2/3", 0, -1, false},
	}
	for _, c := range cases {
		s, tot, ok := contentRange(c.in)
		if s != c.start || tot != c.total || ok != c.ok {
			t.Errorf("contentRange(%q) = %d, %d, %v; want %d, %d, %v", c.in, s, tot, ok, c.start, c.total, c.ok)
		}
	}
}

func FuzzParseModelInfo(f *testing.F) {
	f.Add([]byte(`{"id":"a/b","sha":"0123456789012345678901234567890123456789","siblings":[{"rfilename":"config.json","size":3}]}`))
	f.Add([]byte(`{"id":"a/b","sha":"0123456789012345678901234567890123456789","gated":"manual","siblings":[{"rfilename":"x/../y"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := ParseModelInfo(data)
		if err != nil {
			return
		}
		for _, fl := range info.Files {
			if !safeRepoPath(fl.Path) || fl.Size < -1 {
				t.Fatalf("accepted file %+v", fl)
			}
		}
		if !shaRE.MatchString(info.SHA) {
			t.Fatalf("accepted sha %q", info.SHA)
		}
	})
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:` + strings.Repeat("a", 64) + `","size":5}]}`))
	f.Add([]byte(`{"schemaVersion":2,"layers":[{"digest":"sha256:../x","size":-1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			return
		}
		for _, l := range m.Layers {
			if !digestRE.MatchString(l.Digest) || l.Size < 0 {
				t.Fatalf("accepted layer %+v", l)
			}
		}
	})
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"Qwen/Qwen3-8B@main", "hf.co/a/b:Q4_K_M", "ollama:qwen3:32b", "https://huggingface.co/a/b/tree/x"} {
		f.Add(s, "", true)
	}
	f.Fuzz(func(t *testing.T, s, quant string, bare bool) {
		r, err := ParseRef(s, quant, bare)
		if err != nil {
			return
		}
		if strings.Contains(r.Repo, "..") || strings.HasPrefix(r.Repo, "/") || strings.Contains(r.Revision, "..") {
			t.Fatalf("ParseRef(%q) accepted an unsafe %+v", s, r)
		}
	})
}

func TestResultJSON(t *testing.T) {
	r := Result{Ref: Ref{Kind: KindHubGGUF, Repo: "a/b-GGUF", Quant: "Q4_K_M"}, Repo: "a/b-GGUF", Quant: "q4_k_m", WeightBytes: 42}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"hub-gguf"`, `"weight_bytes":42`, `"quant":"q4_k_m"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("JSON %s lacks %s", data, want)
		}
	}
	if _, err := json.Marshal(Ref{Kind: Kind(9)}); err == nil {
		t.Error("an unknown kind marshalled")
	}
}

func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-99/1000", "bytes */5", "bytes 7-/x", "bytes 9223372036854775807-1/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		start, total, ok := contentRange(v)
		if ok && (start < 0 || total < -1) {
			t.Fatalf("contentRange(%q) = %d, %d", v, start, total)
		}
	})
}

func FuzzPickGGUF(f *testing.F) {
	f.Add("m-Q4_K_M.gguf", "Q4_K_M")
	f.Add("Q8_0/m-Q8_0-00001-of-00002.gguf", "q8_0")
	f.Add("m-UD-Q4_K_XL-00001-of-00001.gguf", "UD-Q4_K_XL")
	f.Fuzz(func(t *testing.T, name, quant string) {
		info := ModelInfo{ID: "o/m", SHA: strings.Repeat("a", 40), Files: []File{{Path: name, Size: 1}}}
		files, err := pickGGUF(info, "o/m", quant)
		if err == nil && (len(files) != 1 || !hasQuant(files[0].Path, quant)) {
			t.Fatalf("pickGGUF(%q, %q) = %v", name, quant, files)
		}
	})
}
