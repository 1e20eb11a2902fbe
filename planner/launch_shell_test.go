package planner

import (
	"os/exec"
	"strings"
	"testing"
)

// shellWord checks that sh reads quoted back as exactly s.
func shellWord(t *testing.T, s string) {
	t.Helper()
	out, err := exec.Command("sh", "-c", "printf '%s' "+shellQuote(s)).Output()
	if err != nil {
		t.Fatalf("%q quoted as %s: %v", s, shellQuote(s), err)
	}
	if string(out) != s {
		t.Fatalf("%q quoted as %s reads back as %q", s, shellQuote(s), out)
	}
}

func TestShellQuoteReadsBack(t *testing.T) {
	for _, s := range []string{"plain", "", "a b", "it's", `"q"`, "$(touch PWNED)", "`id`", "a\nb", "~root", "#x", "a;b|c&d",
		"-m", "x=1", "\\", "'''", "<a AWQ checkpoint of ORG/NAME>", "ü"} {
		shellWord(t, s)
	}
	if got := shellQuote("$HOME/.cache/huggingface:/data"); got != `"$HOME/.cache/huggingface:/data"` {
		t.Errorf("$HOME path quoted as %s, want it to expand", got)
	}
	if got := shellQuote("$HOME/$(x)"); !strings.HasPrefix(got, "'") {
		t.Errorf("$HOME followed by shell syntax quoted as %s", got)
	}
}

func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"plain", "a b", "it's", "$(x)", "`x`", "a\nb", "$HOME/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) || strings.HasPrefix(s, "$HOME") || strings.HasPrefix(s, "$PWD") || len(s) > 200 {
			return // sh cannot carry NUL; $HOME and $PWD are meant to expand
		}
		shellWord(t, s)
	})
}
