// Package headroom_test checks the import rules of conventions.md: planner
// at the bottom with no project or I/O-library imports; nothing imports ui
// or cmd; only cmd imports Fyne's app package.
package headroom_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/headroom-planner/headroom/"

func TestImportDirections(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		test := strings.HasSuffix(path, "_test.go")
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			switch {
			case dir == "planner" && !test && (strings.HasPrefix(p, module) || strings.Contains(p, "fyne.io") ||
				strings.Contains(p, "ghw") || strings.Contains(p, "toml") || p == "os" || p == "net/http" || p == "os/exec"):
				t.Errorf("%s: planner must not import %s", path, p)
			case strings.HasPrefix(p, module+"ui") && !strings.HasPrefix(dir, "cmd/") && !strings.HasPrefix(dir, "ui"):
				t.Errorf("%s: only cmd may import ui (%s)", path, p)
			case strings.HasPrefix(p, module+"cmd/") && !strings.HasPrefix(dir, "cmd/"):
				t.Errorf("%s: nothing imports cmd (%s)", path, p)
			case p == "fyne.io/fyne/v2/app" && !strings.HasPrefix(dir, "cmd/"):
				t.Errorf("%s: only cmd imports fyne.io/fyne/v2/app", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// forbiddenInCmd are the calls that make an answer: planning, probing,
// calibration fitting and saving, catalog loading, export encoding. They
// belong to the application layer (package app), which every front end
// calls, so that the CLI, the desktop app and a server answer alike.
// cmd/headroom may use these packages' types, parsers of flag values and
// formatting helpers, and may run a measurement (endpoint.Run) whose
// result it hands to app.
var forbiddenInCmd = map[string][]string{
	"planner":   {"Fit", "Plan", "Compare", "Predict", "PredictRow", "PredictMeasurement", "Validate", "FitMemory", "FitPerf", "FitPerfWithOverheads", "FitCalibration", "LeaveOneHardwareOut", "LaunchCommand"},
	"probe":     {"Probe", "Match", "ForPlanner", "UsableMemory", "UsableByPolicy", "SnapshotWith"},
	"calibrate": {"Save", "Load", "Remove", "Apply", "HostTerms"},
	"host":      {"Run"},
	"profiles":  {"Load"},
	"toml":      {"NewEncoder", "Marshal"},
}

// TestCmdHoldsNoLogic checks the rule of forbiddenInCmd on every non-test
// file of cmd/headroom, and that no file there grows past 450 lines (the
// printing of one command; anything larger is logic that belongs in app).
func TestCmdHoldsNoLogic(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("cmd/headroom/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cmd/headroom files: %v", err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := fset.Position(f.End()).Line; n > 450 {
			t.Errorf("%s has %d lines: move its logic to package app", path, n)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			for _, name := range forbiddenInCmd[pkg.Name] {
				if sel.Sel.Name == name {
					t.Errorf("%s: cmd/headroom calls %s.%s; call package app instead", fset.Position(call.Pos()), pkg.Name, name)
				}
			}
			return true
		})
	}
}

// TestAppImportsNoFrontEnd checks that the application layer imports no
// front end (ui, cmd, Fyne) and that ui reaches the rest of Headroom only
// through app and the vocabulary packages.
func TestAppImportsNoFrontEnd(t *testing.T) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob("app/*.go")
	if len(files) == 0 {
		t.Fatal("no app package")
	}
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(p, module+"ui") || strings.HasPrefix(p, module+"cmd") || strings.HasPrefix(p, "fyne.io/") {
				t.Errorf("%s: app must not import %s", path, p)
			}
		}
	}
}
