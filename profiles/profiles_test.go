package profiles

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/internal/safefile"
	"github.com/headroom-planner/headroom/internal/textsafe"
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
	f.Add("[perf]\n  [perf.error_band]\n    tg_tps = nan\n  [perf.seq_overhead_us]\n    vllm = 90.0\n")
	f.Fuzz(func(t *testing.T, s string) {
		c := &planner.Catalog{}
		if len(s)%2 == 0 {
			// Half the inputs merge over a profile, as user files do.
			p := planner.DefaultPerfParams()
			c.Perf = &p
		}
		for _, err := range LoadFile(c, "fuzz.toml", []byte(s)) {
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != "fuzz.toml" {
				t.Fatalf("problem %v is not a *FileError naming the file", err)
			}
			if !textsafe.Clean(err.Error()) {
				t.Fatalf("problem %q is not printable", err)
			}
		}
		seen := map[string]bool{}
		for _, h := range c.Hardware {
			if h.ID == "" || seen[h.ID] || h.Memory <= 0 {
				t.Fatalf("hardware %q merged twice, without id or memory", h.ID)
			}
			seen[h.ID] = true
		}
	})
}

// TestMergeIsLinear: merging n entries looks each id up once, however
// many the catalog holds (the merge compared every entry with every other:
// 61 s for one import; issue 15 item 10).
func TestMergeIsLinear(t *testing.T) {
	calls := 0
	id := func(h planner.Hardware) string { calls++; return h.ID }
	const n = 20000
	var xs []planner.Hardware
	tbl := newTable(xs, id)
	for i := range 2 * n { // n new ids, then the same n again (overrides)
		xs = tbl.upsert(xs, planner.Hardware{ID: "dev-" + strconv.Itoa(i%n), PriceUSD: float64(i)})
	}
	if len(xs) != n || xs[0].PriceUSD != n || xs[n-1].PriceUSD != 2*n-1 {
		t.Fatalf("%d entries, first price %v, last %v: overrides lost", len(xs), xs[0].PriceUSD, xs[n-1].PriceUSD)
	}
	if calls > 2*n {
		t.Errorf("%d id lookups for %d upserts, want one each", calls, 2*n)
	}
}

// TestUserFilesAreReadSafely: a FIFO, a device and an oversized file in a
// profile directory are reported and skipped, not read (a FIFO hung Load
// forever; issue 15 item 9).
func TestUserFilesAreReadSafely(t *testing.T) {
	dir := t.TempDir()
	if err := mkfifo(filepath.Join(dir, "fifo.toml"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.toml")); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("# padding\n"), MaxFileBytes/10+1)
	if err := os.WriteFile(filepath.Join(dir, "huge.toml"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan []error, 1)
	go func() {
		_, probs, err := Load(Options{Dirs: []string{dir}})
		if err != nil {
			probs = append(probs, err)
		}
		done <- probs
	}()
	var probs []error
	select {
	case probs = <-done:
	case <-time.After(time.Minute): // a hang, not a slow machine
		t.Fatal("Load blocked on a FIFO or device")
	}
	want := map[string]error{"fifo.toml": safefile.ErrNotRegular, "zero.toml": safefile.ErrNotRegular, "huge.toml": safefile.ErrTooLarge}
	if len(probs) != len(want) {
		t.Fatalf("problems %v, want one per file", probs)
	}
	for _, p := range probs {
		var fe *FileError
		if !errors.As(p, &fe) || !errors.Is(p, want[filepath.Base(fe.Path)]) {
			t.Errorf("problem %v, want %v for its file", p, want[filepath.Base(fe.Path)])
		}
	}
}

// A user file's error bands that are not percentages (NaN, infinite,
// negative, huge) are dropped, each named, and the rest kept: they are
// printed in every plan, and a NaN cannot be written as JSON.
func TestUserFileErrorBandsChecked(t *testing.T) {
	dir := t.TempDir()
	data := `[perf]
  [perf.error_band]
    tg_tps = 14.6
    tpot_ms = nan
  [perf.scenario_error_band.closed]
    tpot_ms = 11.4
    ttft_ms = -3
  [perf.scenario_error_band.rate]
    tpot_ms = inf
  [perf.calibrated_error_band]
    tpot_ms = 1e9
`
	if err := os.WriteFile(filepath.Join(dir, "bands.toml"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	c, probs, err := Load(Options{Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, p := range probs {
		var fe *FileError
		if !errors.As(p, &fe) || !strings.Contains(p.Error(), "bands.toml") || !strings.Contains(p.Error(), "not a percentage") {
			t.Errorf("problem %v", p)
			continue
		}
		keys = append(keys, fe.Key)
	}
	want := []string{"perf.error_band.tpot_ms", "perf.calibrated_error_band.tpot_ms", "perf.scenario_error_band.closed.ttft_ms", "perf.scenario_error_band.rate.tpot_ms"}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("problems at %v, want %v", keys, want)
	}
	p := c.Perf
	if p.ErrorBand["tg_tps"] != 14.6 || len(p.ErrorBand) != 1 || p.ScenarioErrorBand["closed"]["tpot_ms"] != 11.4 || len(p.ScenarioErrorBand["closed"]) != 1 ||
		p.ScenarioErrorBand["rate"] != nil || len(p.CalibratedErrorBand) != 0 {
		t.Errorf("kept %v %v %v", p.ErrorBand, p.ScenarioErrorBand, p.CalibratedErrorBand)
	}
}

// A user file's [perf] overlays the fitted profile key by key: a file
// that sets one overhead map keeps every fitted efficiency (it used to
// replace the whole profile, and plans fell back to priors unannounced),
// the map it sets replaces the fitted one whole, and the embedded
// fitted.toml given as a user file changes nothing.
func TestUserPerfOverlaysTheFit(t *testing.T) {
	base, probs, err := Load(Options{})
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "overheads.toml"), []byte("[perf]\n  [perf.seq_overhead_us]\n    vllm = 90.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, probs, err := Load(Options{Dirs: []string{dir}})
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	p, b := c.Perf, base.Perf
	if p.Source != "fitted" || !reflect.DeepEqual(p.Decode, b.Decode) || !reflect.DeepEqual(p.ErrorBand, b.ErrorBand) || !reflect.DeepEqual(p.RequestOverheadMs, b.RequestOverheadMs) {
		t.Errorf("the fitted profile did not survive a file setting one map: source %q", p.Source)
	}
	if len(p.SeqOverheadUs) != 1 || p.SeqOverheadUs["vllm"] != 90 {
		t.Errorf("seq_overhead_us %v, want the file's map alone", p.SeqOverheadUs)
	}
	fitted, err := embedded.ReadFile("catalog/fitted.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "overheads.toml"), fitted, 0o644); err != nil {
		t.Fatal(err)
	}
	c, probs, err = Load(Options{Dirs: []string{dir}})
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	if !reflect.DeepEqual(*c.Perf, *base.Perf) {
		t.Error("the embedded fitted.toml as a user file changed the profile")
	}
}

// A user [perf] with a NaN or infinite term is ignored whole, named: the
// term would reach every prediction.
func TestUserPerfNonFiniteIgnored(t *testing.T) {
	base, _, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data := "[perf]\n  [perf.seq_overhead_us]\n    vllm = 90.0\n  [perf.request_overhead_ms]\n    sglang = inf\n"
	if err := os.WriteFile(filepath.Join(dir, "bad.toml"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	c, probs, err := Load(Options{Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	var fe *FileError
	if len(probs) != 1 || !errors.As(probs[0], &fe) || fe.Key != "perf.request_overhead_ms.sglang" || !strings.Contains(probs[0].Error(), "bad.toml") {
		t.Errorf("problems %v, want one naming bad.toml's perf.request_overhead_ms.sglang", probs)
	}
	if !reflect.DeepEqual(*c.Perf, *base.Perf) {
		t.Error("a [perf] with an infinite term changed the profile")
	}
}
