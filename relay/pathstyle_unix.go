//go:build !windows

package relay

// filePathStyle is /json/version's File-Path-Style: how this machine writes file paths, as Chrome
// reports it (DevTools uses it for file system paths).
const filePathStyle = "posix"
