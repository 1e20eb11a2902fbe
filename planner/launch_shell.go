package planner

import (
	"fmt"
	"strings"
	"unicode"
)

// String renders the launch as a POSIX sh script fragment: notes as
// comments (one line each, control characters replaced), files as quoted
// here-documents, then the environment, wrapper and arguments, each
// quoted so that the shell passes it as one word and expands nothing but
// a leading $HOME or $PWD.
func (l Launch) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", comment(l.Version))
	for _, n := range l.Notes {
		fmt.Fprintf(&b, "# %s\n", comment(n))
	}
	for _, f := range l.Files {
		writeHereDoc(&b, f)
	}
	for _, k := range sortedKeys(l.Env) {
		fmt.Fprintf(&b, "%s=%s ", envName(k), shellQuote(l.Env[k]))
	}
	for i, a := range l.Prefix {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(shellQuote(a))
	}
	if len(l.Prefix) > 0 && len(l.Argv) > 0 {
		b.WriteString(" \\\n    ")
	}
	for i, a := range l.Argv {
		if i > 0 {
			// One flag per line, after the program and its first operand.
			if i > 1 && strings.HasPrefix(a, "--") || (i > 1 && strings.HasPrefix(a, "-") && len(a) <= 4 && l.Argv[i-1] != "python") {
				b.WriteString(" \\\n    ")
			} else {
				b.WriteString(" ")
			}
		}
		b.WriteString(shellQuote(a))
	}
	b.WriteString("\n")
	return b.String()
}

// comment makes s safe on one comment line: every control or line
// separator character becomes a space, so a note cannot end the comment
// and start a command.
func comment(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return ' '
		}
		return r
	}, s)
}

// envName keeps an environment name to [A-Za-z0-9_]; names come from the
// rule tables, so anything else is replaced rather than trusted.
func envName(k string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, k)
}

// writeHereDoc writes a file with a quoted here-document (no expansion
// inside). A line equal to the delimiter would end it early: such content
// is not written.
func writeHereDoc(b *strings.Builder, f LaunchFile) {
	const eof = "HEADROOM_EOF"
	for _, line := range strings.Split(f.Content, "\n") {
		if line == eof {
			fmt.Fprintf(b, "# %s not written: a line of it ends the here-document\n", comment(f.Name))
			return
		}
	}
	content := f.Content
	if !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	fmt.Fprintf(b, "cat > %s <<'%s'\n%s%s\n", shellQuote(f.Name), eof, content, eof)
}

// shellQuote quotes one argument for POSIX sh. Words of safe characters
// stay bare; a leading $HOME or $PWD followed by safe characters is
// double-quoted so that it expands; everything else is single-quoted,
// with each ' written as '\”. Inside single quotes the shell expands
// nothing ($, `, \ and newlines are literal).
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if safeWord(s) {
		return s
	}
	for _, v := range []string{"$HOME", "$PWD"} {
		if rest, ok := strings.CutPrefix(s, v); ok && (rest == "" || safeWord(rest)) {
			return `"` + s + `"`
		}
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// safeWord reports whether every byte of s is one the shell treats as an
// ordinary word character in any position.
func safeWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_@%+=:,./-", c) >= 0:
		default:
			return false
		}
	}
	return true
}
