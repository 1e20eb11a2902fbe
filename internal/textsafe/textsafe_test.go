package textsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"plain", "Llama-3.1-8B-Instruct", 0, "Llama-3.1-8B-Instruct"},
		{"clear screen", "evil\x1b[2J\x1b[Hname", 0, `evil\x1b[2J\x1b[Hname`},
		{"newline and tab", "a\nb\tc\r", 0, `a\nb\tc\r`},
		{"C1 CSI", "x\u009by", 0, `x\x9by`},
		{"bidi override", "abc\u202edef", 0, `abc\u202edef`},
		{"invalid UTF-8", "a\xffb", 0, "a\uFFFDb"},
		{"unicode kept", "Qwen3 模型 ✓", 0, "Qwen3 模型 ✓"},
		{"cut ASCII", "abcdefghij", 8, "abcde" + Ellipsis},
		{"cut at rune boundary", "ééééé", 6, "é" + Ellipsis},
		{"short enough", "abc", 3, "abc"},
		{"escapes count towards the cap", strings.Repeat("\x1b", 100), 10, `\x1b\x1` + Ellipsis},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Printable(tc.in, tc.max)
			if got != tc.want {
				t.Errorf("Printable(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
			if tc.max > 0 && len(got) > tc.max {
				t.Errorf("len %d > max %d", len(got), tc.max)
			}
		})
	}
}

func TestPrintableHugeInputIsCapped(t *testing.T) {
	huge := strings.Repeat("\x1bA", 30<<20) // a 60 MB "model name"
	got := Printable(huge, 200)
	if len(got) > 200 || !strings.HasSuffix(got, Ellipsis) {
		t.Fatalf("len %d, suffix %q", len(got), got[len(got)-3:])
	}
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"", "abc", "\x1b[31mred", "\u202e", "\xff\xfe", "é"} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		got := Printable(s, max)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 out: %q", got)
		}
		if !Clean(got) {
			t.Fatalf("unsafe output %q", got)
		}
		if max > 0 && len(got) > max && len(got) > len(Ellipsis) {
			t.Fatalf("len %d > max %d", len(got), max)
		}
	})
}
