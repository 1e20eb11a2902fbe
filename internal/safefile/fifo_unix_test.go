//go:build unix

package safefile

import "syscall"

// mkfifo makes a named pipe at path (the tests of reads that must not
// block on one).
func mkfifo(path string, mode uint32) error { return syscall.Mkfifo(path, mode) }
