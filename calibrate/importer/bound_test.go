package importer_test

import (
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/calibrate/importer"
	"github.com/headroom-planner/headroom/profiles"
)

// A benchmark imported onto the wrong device is caught by the physical
// bound of its rows: the RTX 4080's llama-bench output of a 4.4 GiB
// Qwen2.5-7B Q4_K_M (104 tok/s decode) is fine on the 4080 and far beyond
// a Raspberry Pi 5's memory bandwidth. The rows are kept either way.
func TestImportWarnsBeyondPhysicalBound(t *testing.T) {
	c, probs, err := profiles.Load(profiles.Options{})
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	for hw, beyond := range map[string]bool{"nvidia-rtx-4080": false, "cpu-raspberry-pi-5-16gb": true} {
		res, err := importer.ImportFile("testdata/llama-bench-cuda-depth.md", importer.Context{Hardware: hw, Model: "Qwen/Qwen2.5-Coder-7B", Catalog: c})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range res.Warnings {
			if strings.Contains(w.Msg, "beyond what these columns allow physically") {
				got = append(got, w.String())
			}
		}
		if beyond != (len(got) > 0) {
			t.Errorf("%s: bound warnings %q, want some: %v", hw, got, beyond)
		}
		if beyond && !strings.Contains(strings.Join(got, "\n"), "tg_tps 104.4 on cpu-raspberry-pi-5-16gb") {
			t.Errorf("%s: the decode row is not named: %q", hw, got)
		}
		if len(res.Rows) == 0 {
			t.Errorf("%s: rows dropped", hw)
		}
	}
}
