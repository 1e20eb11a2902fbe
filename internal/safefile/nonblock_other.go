//go:build !unix

package safefile

import "os"

const oNonblock = 0

func clearNonblock(*os.File) error { return nil }
