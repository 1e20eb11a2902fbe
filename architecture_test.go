// Package headroom_test checks the import rules of conventions.md: planner
// at the bottom with no project or I/O-library imports; nothing imports ui
// or cmd; only cmd imports Fyne's app package.
package headroom_test

import (
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
