//go:build unix

package safefile

import (
	"os"
	"syscall"
)

// oNonblock makes opening a FIFO return at once instead of waiting for a
// writer.
const oNonblock = syscall.O_NONBLOCK

// clearNonblock puts a regular file back in blocking mode (it makes no
// difference to regular files on Linux, but readers expect the usual mode).
func clearNonblock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
