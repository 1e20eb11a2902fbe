package probe

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

func setting(a Advice, name string) string {
	for _, s := range a.Settings {
		if s.Name == name {
			return s.Value
		}
	}
	return ""
}

// TestAdvise checks the setup advice on the fixture machines with exact
// values.
func TestAdvise(t *testing.T) {
	gib := func(n float64) planner.Bytes { return planner.Bytes(n * float64(planner.GiB)) }
	tests := []struct {
		name     string
		fixture  string
		policy   string
		need     planner.Bytes
		fits     bool
		possible bool
		settings map[string]string
	}{
		// 32 GiB M2 Max: Metal's default 21.33 GiB; 24 GiB needs the wired
		// limit at 24576 MiB (whole 256 MiB steps), within 32 − 4 GiB.
		{"mac fits", "mac-m2-max-32gb", "llamacpp", gib(20), true, true, nil},
		{"mac raise wired limit", "mac-m2-max-32gb", "llama.cpp", gib(24), false, true, map[string]string{"iogpu.wired_limit_mb": "24576"}},
		{"mac rounds up to 256 MiB", "mac-m2-max-32gb", "ollama", gib(24) + 1, false, true, map[string]string{"iogpu.wired_limit_mb": "24832"}},
		{"mac too small", "mac-m2-max-32gb", "llamacpp", gib(29), false, false, nil},
		{"mac raised limit already fits", "mac-m1-max-32gb-wired", "mlx", gib(25), true, true, nil},
		{"mac vllm", "mac-m3-max-64gb", "vllm", gib(10), false, false, nil},
		// Strix Halo, 96 GiB carve-out, ~31 GiB for Linux: 100 GiB for vLLM
		// needs the carve-out at 512 MiB and the GTT raised to all RAM but
		// 4 GiB; vLLM then takes 100 GiB of it.
		{"apu shrink carve-out", "strix-halo-96-carveout", "vllm", gib(100), false, true,
			map[string]string{"UMA frame buffer (BIOS)": "512.0 MiB", "--gpu-memory-utilization": ""}},
		{"apu fits", "strix-halo-128-gtt", "llamacpp", gib(100), true, true, nil},
		{"apu too big", "strix-halo-128-gtt", "llamacpp", gib(130), false, false, nil},
		{"discrete", "rx-7900-xtx", "llamacpp", gib(30), false, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Root: filepath.Join("testdata", tt.fixture)}
			if !strings.HasPrefix(tt.fixture, "mac-") {
				opts = fixtureOpts(tt.fixture)
			}
			m := mustProbe(t, opts)
			d := m.Devices[0]
			for _, dd := range m.Devices {
				if !dd.Integrated || dd.Vendor == "Apple" {
					d = dd
					break
				}
			}
			a := Advise(d, m, tt.policy, tt.need)
			if a.Fits != tt.fits || a.Possible != tt.possible {
				t.Fatalf("fits %v possible %v, want %v %v: %+v", a.Fits, a.Possible, tt.fits, tt.possible, a)
			}
			if a.Note == "" {
				t.Error("no note")
			}
			for k, v := range tt.settings {
				got := setting(a, k)
				if got == "" || (v != "" && got != v) {
					t.Errorf("%s = %q, want %q (settings %+v)", k, got, v, a.Settings)
				}
			}
			if a.Possible && !a.Fits {
				checkSettingsFit(t, a, d, m)
			}
		})
	}
}

// checkSettingsFit applies the advice's values and checks the model fits
// with the OS reserve kept.
func checkSettingsFit(t *testing.T, a Advice, d Device, m Machine) {
	t.Helper()
	if v := setting(a, wiredLimitSysctl); v != "" {
		var mib int64
		if _, err := fmtSscan(v, &mib); err != nil {
			t.Fatal(err)
		}
		got := planner.Bytes(mib) * planner.MiB
		if got < a.Need || got > m.Memory.Total-reserveOf(m.Memory.Total) {
			t.Errorf("wired limit %s for need %s on %s", got, a.Need, m.Memory.Total)
		}
		return
	}
	var pages int64
	if _, err := fmtSscan(setting(a, "ttm.pages_limit"), &pages); err != nil {
		t.Fatal(err)
	}
	gtt := planner.Bytes(pages) * ttmPageSize
	carve := d.VRAMTotal
	if setting(a, "UMA frame buffer (BIOS)") != "" {
		carve = smallCarveOut
	}
	kernelRAM := m.Memory.Total + d.VRAMTotal - carve
	if gtt+reserveOf(m.Memory.Total+d.VRAMTotal) > kernelRAM {
		t.Errorf("GTT %s leaves the OS less than its reserve of %s", gtt, kernelRAM)
	}
	if capacity(carve, gtt, defaultBackend(d, a.Policy) == planner.Vulkan) < a.Need {
		t.Errorf("GTT %s + carve-out %s does not hold %s", gtt, carve, a.Need)
	}
	if u := setting(a, "--gpu-memory-utilization"); u != "" {
		var f float64
		if _, err := fmtSscan(u, &f); err != nil || f <= 0 || f > 1 || planner.Bytes(f*float64(max(carve, gtt))) < a.Need {
			t.Errorf("--gpu-memory-utilization %s of %s does not hold %s", u, max(carve, gtt), a.Need)
		}
	}
}

// TestFreeNow checks what other processes hold on the fixtures.
func TestFreeNow(t *testing.T) {
	mib := func(n float64) planner.Bytes { return planner.Bytes(n * float64(planner.MiB)) }
	gib := func(n float64) planner.Bytes { return planner.Bytes(n * float64(planner.GiB)) }
	tests := []struct {
		name, fixture, policy string
		idle, free            planner.Bytes
		known                 bool
	}{
		// nvidia-smi: 8192 MiB, 1104 MiB used.
		{"nvidia on windows", "win-rtx2070s", "vllm", mib(8192), mib(8192 - 1104), true},
		// Mac: working set 26000 MiB, 28.50 GiB available: all of it free.
		{"mac wired", "mac-m1-max-32gb-wired", "llamacpp", mib(26000), mib(26000), true},
		// Mac: 2/3 of 8 GiB, 2.80 GiB available now.
		{"mac busy", "mac-m1-8gb", "ollama", gib(8) / 3 * 2, gib(2.8), true},
		{"windows igpu", "win-780m-uma8g", "llamacpp", mib(20645), mib(20645), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustProbe(t, Options{Root: filepath.Join("testdata", tt.fixture)})
			o := FreeNow(m.Devices[0], m, tt.policy)
			if !near(o.Idle, tt.idle, 1e-4) || !near(o.Free, tt.free, 1e-3) || o.Known != tt.known || o.Held != o.Idle-o.Free || o.Source == "" {
				t.Errorf("%+v, want idle %s free %s known %v", o, tt.idle, tt.free, tt.known)
			}
		})
	}
	host := FreeNowHost(Machine{OS: "linux", Memory: Memory{Total: 64 * planner.GiB, Available: 40 * planner.GiB}})
	if host.Held != 24*planner.GiB || !host.Known || host.Source != "MemAvailable" {
		t.Errorf("host %+v", host)
	}
}

func fmtSscan(s string, v any) (int, error) { return fmt.Sscan(s, v) }
