package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/ui"
)

// cli runs one headroom command line in-process with a fresh config
// directory and returns its stdout and exit code.
func cli(t *testing.T, args ...string) ([]byte, int) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	root := newRootCmd(&out, &errOut)
	root.SetArgs(args)
	code := exitCode(root.Execute())
	return out.Bytes(), code
}

// guiService is the desktop app's service over a fresh application layer,
// as `headroom gui` builds it.
func guiService(t *testing.T) (ui.Service, *app.App) {
	t.Helper()
	a, err := app.Open(app.Options{NoUserDirs: true, CalibrationDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return ui.NewService(a), a
}

// TestCLIAndGUIAnswerAlike runs the same fit, plan, compare and export
// through the CLI and through the desktop app's service: the same results,
// and byte-identical exports. Measured on commit 1802729 the exports
// differed (649.85… vs 649.9 ms, a one-line vs multi-line launch command,
// 7 error-band metrics vs 1) and "automatic" weights differed by screen.
func TestCLIAndGUIAnswerAlike(t *testing.T) {
	const model, hw = "meta-llama/Llama-3.1-8B-Instruct", "nvidia-rtx-4090"
	svc, a := guiService(t)
	m, err := a.Catalog().FindModel(model)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("fit", func(t *testing.T) {
		out, code := cli(t, "fit", "-m", model, "-H", hw, "-c", "8192", "-n", "4", "--json")
		if code != exitOK {
			t.Fatalf("fit exit %d: %s", code, out)
		}
		var got struct{ Fit planner.FitResult }
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		sc, err := svc.Scenario(ui.ScenarioInput{Model: m, Hardware: hw, Context: 8192, Users: 4})
		if err != nil {
			t.Fatal(err)
		}
		fr, err := svc.Fit(sc)
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, got.Fit, fr) {
			t.Errorf("fit differs:\nCLI %+v\nGUI %+v", got.Fit, fr)
		}
	})

	t.Run("plan and export", func(t *testing.T) {
		dir := t.TempDir()
		var cliFiles [2][]byte
		for i, ext := range []string{"toml", "json"} {
			path := filepath.Join(dir, "plan."+ext)
			if out, code := cli(t, "plan", "-m", model, "-H", hw, "--workload", "prompt=1024,gen=256,users=8", "--slo", "ttft=2s,tpot=100ms", "--export", path); code != exitOK {
				t.Fatalf("plan exit %d: %s", code, out)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cliFiles[i] = data
		}
		v, err := svc.Plan(ui.PlanInput{Scenario: ui.ScenarioInput{Model: m, Hardware: hw}, MaxTTFT: 2000, MaxTPOT: 100,
			Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 8}})
		if err != nil || len(v.Rows) == 0 {
			t.Fatalf("GUI plan: %v, %d rows", err, len(v.Rows))
		}
		for i, ext := range []string{"toml", "json"} {
			gui, err := svc.Export(v.Rows[0], ext)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gui, cliFiles[i]) {
				t.Errorf("%s export differs:\n--- CLI\n%s\n--- GUI\n%s", ext, cliFiles[i], gui)
			}
		}
		out, _ := cli(t, "plan", "-m", model, "-H", hw, "--workload", "prompt=1024,gen=256,users=8", "--slo", "ttft=2s,tpot=100ms", "--json")
		var res planner.PlanResult
		if err := json.Unmarshal(out, &res); err != nil || len(res.Ranked) == 0 {
			t.Fatalf("plan --json: %v", err)
		}
		if !sameJSON(t, res.Ranked[0], v.Rows[0].Candidate) {
			t.Errorf("best plan differs:\nCLI %+v\nGUI %+v", res.Ranked[0], v.Rows[0].Candidate)
		}
	})

	t.Run("compare", func(t *testing.T) {
		hws := []string{"nvidia-rtx-4090", "amd-ryzen-ai-max-395", "nvidia-rtx-3060-12gb"}
		out, code := cli(t, "compare", "-m", model, "-H", "nvidia-rtx-4090,amd-ryzen-ai-max-395,nvidia-rtx-3060-12gb", "--workload", "users=4", "--json")
		if code != exitOK {
			t.Fatalf("compare exit %d: %s", code, out)
		}
		var rows []planner.CompareRow
		if err := json.Unmarshal(out, &rows); err != nil {
			t.Fatal(err)
		}
		gui, err := svc.Compare(ui.CompareInput{Hardware: hws, Model: m, Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 4}})
		if err != nil || len(gui) != len(rows) {
			t.Fatalf("GUI compare: %v (%d rows, CLI %d)", err, len(gui), len(rows))
		}
		for i, r := range rows {
			g := gui[i]
			if r.Best != g.Config || r.MaxUsers != g.Users || r.TotalTPS != g.Total || r.SingleUserTPS != g.SingleUser || r.TTFT != g.TTFT || r.Verdict != g.Verdict {
				t.Errorf("%s: CLI %+v, GUI %+v", hws[i], r, g)
			}
		}
	})
}

// sameJSON reports whether a and b encode to the same JSON.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return bytes.Equal(x, y)
}
