package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10_000 // µs

// cpuTimes are CPU times (µs, user and system) of this benchmark's process and every process
// it started, directly or not (the relay, Chromium and its helpers), by pid. CPU time, unlike
// wall time, does not grow with what other programs run meanwhile. Linux only: empty elsewhere.
func cpuTimes() map[int]int64 {
	out := map[int]int64{}
	parent := map[int]int{}
	ticks := map[int]int64{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... field 14 utime, 15 stime; comm may hold spaces
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		f := bytes.Fields(rest)
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		ut, _ := strconv.ParseInt(string(f[11]), 10, 64)
		st, _ := strconv.ParseInt(string(f[12]), 10, 64)
		parent[pid], ticks[pid] = ppid, ut+st
	}
	self := os.Getpid()
	for pid, t := range ticks {
		for p, hops := pid, 0; p > 1 && hops < 64; p, hops = parent[p], hops+1 {
			if p == self {
				out[pid] = t * clockTick
				break
			}
		}
	}
	return out
}

// cpuSplit is the CPU time (µs) spent between two cpuTimes snapshots, split into this
// process (the benchmark's clients), the relay process and the rest (Chromium's processes).
type cpuSplit struct{ clients, relay, browser int64 }

func cpuSince(before, after map[int]int64, relayPid int) cpuSplit {
	var s cpuSplit
	for pid, t := range after {
		d := t - before[pid]
		switch pid {
		case os.Getpid():
			s.clients += d
		case relayPid:
			s.relay += d
		default:
			s.browser += d
		}
	}
	return s
}

func (s cpuSplit) total() int64 { return s.clients + s.relay + s.browser }

// threadSleeps counts the times the threads of process pid have gone to sleep waiting for
// something (voluntary context switches, summed over its threads): each is a wake-up that
// some message must pay for later. Like CPU time it hardly depends on what else runs. Linux
// only: 0 elsewhere.
func threadSleeps(pid int) int64 {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/[0-9]*")
	var n int64
	for _, t := range tasks {
		b, err := os.ReadFile(t + "/status")
		if err != nil {
			continue
		}
		const key = "voluntary_ctxt_switches:"
		i := bytes.Index(b, []byte("\n"+key))
		if i < 0 {
			continue
		}
		line := b[i+1+len(key):]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		v, _ := strconv.ParseInt(string(bytes.TrimSpace(line)), 10, 64)
		n += v
	}
	return n
}
