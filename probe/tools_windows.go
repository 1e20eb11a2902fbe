//go:build windows

package probe

import (
	"os/exec"
	"syscall"
)

// hideWindow keeps a console window from flashing up when the desktop app
// (a GUI process) runs reg or PowerShell.
func hideWindow(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{HideWindow: true}
}
