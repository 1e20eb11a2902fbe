// Package localefix gives Fyne a locale it can parse. Fyne's lang package
// parses the POSIX locale while initializing and logs an error for "C" or
// "POSIX" (the default in containers and CI), which would print on every
// CLI command. This package has no dependencies beyond the standard
// library, so Go's initialization order (import path order among ready
// packages, Go 1.21+) runs it before Fyne's go-locale dependency and hence
// before Fyne's lang package. It only fills in en_US.UTF-8 where no usable
// locale is set.
package localefix

import (
	"os"
	"strings"
)

func usable(v string) bool {
	v = strings.TrimSpace(v)
	return v != "" && v != "C" && v != "POSIX" && !strings.HasPrefix(v, "C.")
}

func init() {
	for _, k := range []string{"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := os.Getenv(k); v != "" && !usable(v) {
			os.Unsetenv(k)
		}
	}
	for _, k := range []string{"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"} {
		if usable(os.Getenv(k)) {
			return
		}
	}
	os.Setenv("LANG", "en_US.UTF-8")
}
