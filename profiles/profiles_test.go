package profiles

import (
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

func TestEmbeddedCatalogLoads(t *testing.T) {
	c, probs, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	if want := factSheetDevices(t); len(c.Hardware) != want {
		t.Errorf("hardware: got %d, want all %d devices of the fact sheet", len(c.Hardware), want)
	}
	if len(c.Models) < 49 {
		t.Errorf("models: got %d, want the 48 of the fact sheet plus seed models", len(c.Models))
	}
	for _, id := range []string{"vllm", "llama.cpp", "tgi", "sglang", "ollama", "transformers", "trtllm"} {
		if _, err := c.FindEngine(id); err != nil {
			t.Errorf("engine %s: %v", id, err)
		}
	}
	h, err := c.FindHardware("amd-ryzen-ai-max-395")
	if err != nil {
		t.Fatal(err)
	}
	if h.MemoryModel != planner.MemAPU || h.UsableGPUMemory() != 120*planner.GiB {
		t.Errorf("strix halo: memory model %s, GPU memory %s", h.MemoryModel, h.UsableGPUMemory())
	}
	m, _ := c.FindModel("openai/gpt-oss-20b")
	if m.SlidingLayers != 12 || m.GatedMLP != true {
		t.Errorf("gpt-oss-20b: sliding layers %d gated %v", m.SlidingLayers, m.GatedMLP)
	}
	for _, h := range c.Hardware {
		if h.Arch == "" {
			t.Errorf("%s has no architecture", h.ID)
		}
	}
}

// factSheetDevices counts the devices of sources/hardware.csv, the fact
// sheet every embedded hardware entry comes from.
func factSheetDevices(t *testing.T) int {
	t.Helper()
	f, err := os.Open("sources/hardware.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return len(recs) - 1 // header
}

func TestUserOverrideAndBadFile(t *testing.T) {
	dir := t.TempDir()
	good := `[[hardware]]
id = "my-box"
name = "My Box"
vendor = "NVIDIA"
kind = "gpu"
memory = "48 GiB"
bandwidth_gb_s = 960
backends = ["cuda"]
arch = "ada"
[hardware.tflops]
fp16 = 180

[[hardware]]
id = "nvidia-rtx-4090"
name = "RTX 4090 (my price)"
vendor = "NVIDIA"
kind = "gpu"
memory = "24 GiB"
bandwidth_gb_s = 1008
price_usd = 1500
backends = ["cuda"]
arch = "ada"
`
	bad := "[[hardware]]\nid = \"x\"\nmemory = \"lots\"\n"
	typo := "[[model]]\nid = \"m\"\nlayers = 2\nhidden = 8\nheads = 2\nparams = \"1M\"\nhiden = 3\n"
	for n, s := range map[string]string{"a.toml": good, "b.toml": bad, "c.toml": typo} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, probs, err := Load(Options{Dirs: []string{dir, filepath.Join(dir, "missing")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.FindHardware("my-box"); err != nil {
		t.Error("user hardware not added:", err)
	}
	h, _ := c.FindHardware("nvidia-rtx-4090")
	if h.PriceUSD != 1500 || len(c.Hardware) != factSheetDevices(t)+1 {
		t.Errorf("override failed: price %v, %d devices", h.PriceUSD, len(c.Hardware))
	}
	if len(probs) != 2 {
		t.Fatalf("want 2 problems (bad value, typo key), got %v", probs)
	}
	var fe *FileError
	if !errors.As(probs[0], &fe) || !strings.Contains(probs[0].Error(), "b.toml:3") || !strings.Contains(probs[0].Error(), "memory") {
		t.Errorf("bad file error should name file, line and key: %v", probs[0])
	}
	if !strings.Contains(probs[1].Error(), "hiden") {
		t.Errorf("typo should be reported: %v", probs[1])
	}
}

func FuzzLoadFile(f *testing.F) {
	data, _ := embedded.ReadFile("catalog/engines.toml")
	f.Add(string(data))
	f.Add("[[hardware]]\nid=1\n")
	f.Fuzz(func(t *testing.T, s string) {
		c := &planner.Catalog{}
		_ = LoadFile(c, "fuzz.toml", []byte(s))
	})
}
