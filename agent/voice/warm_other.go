//go:build !linux

package voice

import "syscall"

const nonblock = 0

// mkfifo: decoders are not warmed up outside Linux (each decode loads the model).
func mkfifo(string) error { return errNoFIFO }

func childAttr() *syscall.SysProcAttr { return nil }
