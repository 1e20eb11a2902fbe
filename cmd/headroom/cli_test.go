package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// run is main without os.Exit for testscript.
func run() int {
	root := newRootCmd(os.Stdout, os.Stderr)
	return exitCode(root.Execute())
}

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"headroom": func() { os.Exit(run()) },
	})
}

// TestCLI runs the scripts in testdata/script: each is a CLI session with
// the output it must print and the exit code it must return.
func TestCLI(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"/config")
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("GHW_DISABLE_WARNINGS", "1")
			// Scripts never reach the Hugging Face Hub or Ollama.
			env.Setenv("HF_HUB_OFFLINE", "1")
			env.Setenv("HEADROOM_HUB_CACHE", env.WorkDir+"/hub-cache")
			wd, _ := os.Getwd()
			env.Setenv("REPO", wd+"/../..")
			return nil
		},
	})
}
