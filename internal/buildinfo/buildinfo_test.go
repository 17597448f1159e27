package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFrom(t *testing.T) {
	checkout := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-20T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	installed := &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}
	cases := []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  string
	}{
		{"release stamp", "v0.2.0", "fedcba9876543210", "2026-11-26T21:00:00Z", checkout, "tabrelay v0.2.0 (commit fedcba987654, 2026-11-26T21:00:00Z)"},
		{"go build in a checkout", "", "", "", checkout, "tabrelay " + Base + "-dev (commit 0123456789ab, 2026-11-20T10:00:00Z, modified)"},
		{"go install of a version", "", "", "", installed, "tabrelay v0.3.1 (commit unknown: built outside a checkout)"},
		{"no build information", "", "", "", nil, "tabrelay " + Base + "-dev (commit unknown: built outside a checkout)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := from(tc.version, tc.commit, tc.date, tc.bi).String(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestGetNamesAVersion(t *testing.T) {
	if in := Get(); in.Version == "" {
		t.Fatalf("Get() = %+v: no version", in)
	}
}
