package testlimit

import (
	"testing"
	"time"
)

func TestFactor(t *testing.T) {
	for _, tc := range []struct {
		env  string
		cpus int
		want float64
	}{
		{"", 1, 8}, {"", 2, 4}, {"", 4, 2}, {"", 8, 1}, {"", 64, 1}, {"", 0, 8},
		{"3", 2, 3}, {"1", 2, 1}, {"2.5", 64, 2.5},
	} {
		t.Setenv(EnvSlowdown, tc.env)
		got := factorFor(tc.cpus)
		if tc.env != "" {
			got = Factor()
		}
		if got != tc.want {
			t.Errorf("%s=%q on %d CPUs: %v, want %v", EnvSlowdown, tc.env, tc.cpus, got, tc.want)
		}
	}
	t.Setenv(EnvSlowdown, "2")
	if got := Scale(30 * time.Second); got != time.Minute {
		t.Errorf("Scale(30s) with factor 2: %v", got)
	}
	for _, bad := range []string{"0.5", "fast", "-1"} {
		t.Setenv(EnvSlowdown, bad)
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s=%q: no panic", EnvSlowdown, bad)
				}
			}()
			Factor()
		}()
	}
}
