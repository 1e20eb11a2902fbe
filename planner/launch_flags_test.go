package planner_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// launchMatrix is the set of configurations whose commands the flag-table
// test checks: every engine with formats, KV types, tensor parallel and
// backends that reach each branch of its argument builder.
var launchMatrix = []fitCase{
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-h100-sxm5-80gb", quant: "bf16", kv: "fp8", engine: planner.VLLM, ctx: 4096, users: 8},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-l40s", quant: "awq-int4", engine: planner.VLLM, ctx: 4096, users: 8},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-t4", quant: "gptq-int4", engine: planner.VLLM, ctx: 4096, users: 2},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-h100-sxm5-80gb", quant: "fp8", engine: planner.VLLM, ctx: 4096, users: 8},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-l40s", quant: "bnb-nf4", engine: planner.VLLM, ctx: 4096, users: 2},
	{model: "meta-llama/Llama-3.3-70B-Instruct", hw: "nvidia-h100-sxm5-80gb", quant: "bf16", engine: planner.VLLM, ctx: 8192, users: 8, devices: 4},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-rtx-3060-12gb", quant: "q4_k_m", kv: "q8_0", engine: planner.LlamaCpp, ctx: 4096, users: 4},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-rtx-3060-12gb", quant: "q4_k_m", engine: planner.LlamaCpp, ctx: 16384, users: 4, unified: true},
	{model: "openai/gpt-oss-120b", hw: "nvidia-rtx-4090", quant: "mxfp4", engine: planner.LlamaCpp, ctx: 8192, users: 1},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-rtx-3060-12gb", quant: "q4_k_m", kv: "q8_0", engine: planner.IKLlamaCpp, ctx: 4096, users: 2},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-rtx-3060-12gb", quant: "q4_k_m", kv: "q8_0", engine: planner.Ollama, ctx: 4096, users: 2},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-h100-sxm5-80gb", quant: "bf16", kv: "fp8", engine: planner.SGLang, ctx: 4096, users: 8},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-h100-sxm5-80gb", quant: "awq-int4", engine: planner.SGLang, ctx: 4096, users: 8},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-h100-sxm5-80gb", quant: "w8a8-int8", engine: planner.SGLang, ctx: 4096, users: 8},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-h100-sxm5-80gb", quant: "bf16", kv: "fp8", engine: planner.TGI, ctx: 4096, users: 8},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-l40s", quant: "awq-int4", engine: planner.TGI, ctx: 4096, users: 8},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-l40s", quant: "bnb-nf4", engine: planner.TGI, ctx: 4096, users: 8},
	{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-h100-sxm5-80gb", quant: "bf16", kv: "fp8", engine: planner.TRTLLM, ctx: 4096, users: 8},
}

// Every option a command can carry exists in the parser of the release
// it is for, and every value is one of the parser's choices (the tables
// in rules_*.go, extracted from the engines' sources at the tags they
// name). Positional words (program, subcommand, model) are skipped.
func TestLaunchFlagsExistInRelease(t *testing.T) {
	c := catalog(t)
	checked := 0
	for _, f := range launchMatrix {
		rels := planner.Releases(f.engine)
		if len(rels) == 0 {
			t.Fatalf("%s: no releases", f.engine)
		}
		for _, rel := range rels {
			cand, err := f.candidate(t, c)
			if err != nil {
				t.Fatalf("%+v: %v", f, err)
			}
			for _, docker := range []bool{false, true} {
				l, err := planner.LaunchFor(cand, planner.LaunchOptions{Release: rel.Release.String(), Docker: docker})
				if rel.Release.IsNewest() {
					l, err = planner.LaunchFor(cand, planner.LaunchOptions{Docker: docker})
				}
				if errors.Is(err, planner.ErrUnsupported) {
					continue // the release cannot run it: refused, not flagged
				}
				if err != nil {
					t.Errorf("%s %s %s: %v", f.engine, rel.Name, f.quant, err)
					continue
				}
				if l.Version != rel.Name {
					t.Errorf("command for %q says it is for %q", rel.Name, l.Version)
				}
				checked += checkArgs(t, rel, l.Argv)
				for k, v := range l.Env {
					if strings.HasPrefix(k, "OLLAMA_") && !rel.Accepts(k, v) {
						t.Errorf("%s: %s=%s not in %s", rel.Name, k, v, rel.Source)
					}
				}
			}
		}
	}
	if checked < 200 {
		t.Errorf("only %d options checked", checked)
	}
}

// checkArgs checks each option of argv against the release's table and
// returns how many it checked.
func checkArgs(t *testing.T, rel planner.EngineRelease, argv []string) int {
	t.Helper()
	n, start := 0, 0
	if len(argv) > 2 && argv[0] == "python" && argv[1] == "-m" {
		start = 3 // python -m sglang.launch_server: the interpreter's option
	}
	for i := start; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		spec, ok := rel.Flags[a]
		if !ok {
			t.Errorf("%s: %s is not an option of %s", rel.Name, a, rel.Source)
			continue
		}
		n++
		if spec.Switch {
			continue
		}
		if i+1 >= len(argv) {
			t.Errorf("%s: %s without a value", rel.Name, a)
			continue
		}
		if v := argv[i+1]; !rel.Accepts(a, v) {
			t.Errorf("%s: %s %s is not one of %v (%s)", rel.Name, a, v, spec.Values, rel.Source)
		}
		i++
	}
	return n
}

// hostile names a model the way a crafted config.json or GGUF could.
var hostile = []string{
	"evil\nrm -rf /tmp/x",
	"$(touch PWNED)",
	"`touch PWNED`",
	"a'; touch PWNED; echo '",
	"a\"; touch PWNED; echo \"",
	"x && touch PWNED",
	"|touch PWNED",
}

// Names with control characters never reach a command; names with shell
// syntax are quoted: the exported script parses (sh -n) and, run in a
// temporary folder with the engines replaced by a harmless stub, creates
// no PWNED file.
func TestLaunchShellInjection(t *testing.T) {
	c := catalog(t)
	for _, name := range hostile {
		for _, f := range launchMatrix[:1] {
			cand, err := f.candidate(t, c)
			if err != nil {
				t.Fatal(err)
			}
			s := *cand.Scenario
			s.Model.ID, s.Model.Name = name, name
			cand.Scenario = &s
			_, err = planner.LaunchFor(cand, planner.LaunchOptions{})
			if strings.ContainsAny(name, "\n\r") {
				if err == nil || !strings.Contains(err.Error(), "control character") {
					t.Errorf("%q: %v", name, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%q: %v", name, err)
			}
		}
	}
	// Notes and checkpoints from outside go through the same quoting.
	for _, f := range launchMatrix {
		cand, err := f.candidate(t, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range hostile {
			if strings.ContainsAny(name, "\n\r") {
				continue
			}
			s := *cand.Scenario
			s.Model.ID = name
			cand.Scenario = &s
			for _, docker := range []bool{false, true} {
				l, err := planner.LaunchFor(cand, planner.LaunchOptions{Docker: docker, Checkpoint: name})
				if err != nil {
					t.Fatalf("%s %q: %v", f.engine, name, err)
				}
				l.Notes = append(l.Notes, "a note\ntouch PWNED")
				runScript(t, l.String())
			}
		}
	}
}

// runScript checks the script with sh -n, then runs it with every engine
// program (and docker) on PATH as a stub that exits 0, and fails if it
// created PWNED.
func runScript(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"vllm", "llama-server", "ollama", "text-generation-launcher", "python", "sglang", "trtllm-serve", "docker"} {
		if err := os.WriteFile(filepath.Join(bin, p), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "launch.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nset -e\n"+script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sh", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("sh -n: %v %s\n%s", err, out, script)
	}
	cmd := exec.Command("sh", path)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + dir}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run: %v %s\n%s", err, out, script)
	}
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Fatalf("the script ran the payload:\n%s", script)
	}
}
