package voice

import "syscall"

const nonblock = syscall.O_NONBLOCK

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// childAttr kills a warm decoder with the server, should the server die without dropping it.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
