package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Linux /proc readers for the test that `tabrelay browser` leaves no port open.

// descendants returns the ids of every process below root (children, their children…).
func descendants(root int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid …"; comm may hold spaces and parentheses
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out, nil
}

// cmdline returns a process's command line arguments.
func cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), nil
}

// listening returns the TCP addresses (host:port) the processes pids listen on: LISTEN sockets
// of /proc/<pid>/net/tcp{,6} whose inode one of the processes holds open.
func listening(pids []int) ([]string, error) {
	listen := map[string]string{} // socket inode -> address
	for _, pid := range pids {
		for _, f := range []string{"tcp", "tcp6"} {
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
			if err != nil {
				continue // the process is gone
			}
			for _, line := range strings.Split(string(data), "\n")[1:] {
				fs := strings.Fields(line)
				if len(fs) < 10 || fs[3] != "0A" { // 0A: TCP_LISTEN
					continue
				}
				listen[fs[9]] = procAddr(fs[1])
			}
		}
	}
	var out []string
	for _, pid := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if addr, ok := listen[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")]; ok {
				out = append(out, fmt.Sprintf("%s (pid %d)", addr, pid))
			}
		}
	}
	return out, nil
}

// procAddr decodes /proc/net/tcp's "0100007F:1F90" (address in host byte order, 32-bit words)
// into "127.0.0.1:8080".
func procAddr(s string) string {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return s
	}
	raw, err := hex.DecodeString(host)
	if err != nil || len(raw)%4 != 0 {
		return s
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 { // each 32-bit word is little-endian on the hosts we run on
		ip[i], ip[i+1], ip[i+2], ip[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return s
	}
	return net.JoinHostPort(ip.String(), strconv.FormatUint(p, 10))
}
