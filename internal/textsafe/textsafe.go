// Package textsafe makes text from files and servers safe to print on a
// terminal or in a GUI: control characters (ESC and the rest of C0, DEL,
// C1) and the Unicode bidirectional overrides cannot move the cursor,
// clear the screen, recolour or reorder what follows, and a very long
// string cannot flood a message.
package textsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis ends a string that Printable shortened.
const Ellipsis = "…"

// Printable returns s with every control or bidi-formatting character
// written as a visible Go escape (\x1b, \n, \u202e), invalid UTF-8 as
// U+FFFD, and the result cut to at most max bytes (at a character
// boundary, ending in Ellipsis). max ≤ 0 means no length limit. Printable
// text comes back unchanged.
func Printable(s string, max int) string {
	if isPrintable(s) {
		return cut(s, max)
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case max > 0 && b.Len() > max:
			return cut(b.String(), max)
		case r == utf8.RuneError && invalidAt(s, i):
			b.WriteRune(utf8.RuneError)
		case unsafeRune(r):
			b.WriteString(escape(r))
		default:
			b.WriteRune(r)
		}
	}
	return cut(b.String(), max)
}

// Clean reports whether s is already Printable: no control or bidi
// characters and valid UTF-8.
func Clean(s string) bool { return isPrintable(s) }

func isPrintable(s string) bool {
	for i, r := range s {
		if unsafeRune(r) || r == utf8.RuneError && invalidAt(s, i) {
			return false
		}
	}
	return true
}

// unsafeRune is a character that changes how a terminal shows what
// follows: controls, and the bidi embeddings, overrides and isolates
// (the "Trojan Source" characters, CVE-2021-42574).
func unsafeRune(r rune) bool {
	switch {
	case unicode.IsControl(r): // C0, DEL, C1
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

func invalidAt(s string, i int) bool {
	r, n := utf8.DecodeRuneInString(s[i:])
	return r == utf8.RuneError && n <= 1
}

// escape writes r as Go would in a quoted string.
func escape(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	if r < 0x100 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// cut shortens s to at most max bytes including the ellipsis, at a
// character boundary.
func cut(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	n := max - len(Ellipsis)
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + Ellipsis
}
