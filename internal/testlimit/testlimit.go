// Package testlimit scales the limits tests wait within, so that a test that waits for a
// condition gets the time a busy or small machine needs: Scale(30*time.Second) is 30 s times
// Factor(). A limit is reached only when a test is about to fail, so a larger one costs a passing
// test nothing; what it must never be is a fixed wait the test relies on to pass.
//
// The factor is TABRELAY_TEST_SLOWDOWN when set (a number ≥ 1: 3 triples every limit), else
// 8/GOMAXPROCS on a machine of fewer than 8 CPUs (4 on 2 cores), else 1.
package testlimit

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// EnvSlowdown names the variable that sets the factor.
const EnvSlowdown = "TABRELAY_TEST_SLOWDOWN"

// Factor is what limits are multiplied by (see the package comment). It panics, naming the
// variable, when TABRELAY_TEST_SLOWDOWN is set to something other than a number ≥ 1.
func Factor() float64 {
	if s := os.Getenv(EnvSlowdown); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 1 {
			panic(fmt.Sprintf("%s=%q: want a number ≥ 1 (how many times longer than usual a test may wait)", EnvSlowdown, s))
		}
		return f
	}
	return factorFor(runtime.GOMAXPROCS(0))
}

// factorFor is the default factor on a machine of cpus CPUs.
func factorFor(cpus int) float64 { return max(1, 8/float64(max(cpus, 1))) }

// Scale is d times Factor().
func Scale(d time.Duration) time.Duration { return time.Duration(float64(d) * Factor()) }

// Eventually polls cond until it holds or the timeout, scaled (Scale), passes; then the test
// fails, quoting cond's last word.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	if ok, last := Poll(Scale(timeout), cond); !ok {
		t.Fatalf("%s: not true after %v (last: %s)", what, Scale(timeout), last)
	}
}

// Poll calls cond until it holds (true) or timeout (not scaled) passes (false, with cond's last
// word); cond runs at least once, then every 100 ms.
func Poll(timeout time.Duration, cond func() (bool, string)) (bool, string) {
	deadline := time.Now().Add(timeout)
	for {
		ok, s := cond()
		if ok || time.Now().After(deadline) {
			return ok, s
		}
		time.Sleep(100 * time.Millisecond)
	}
}
