package cli

import (
	"runtime/debug"
	"testing"
)

func TestDescribeBuild(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0ef5d45c1a2b93f0e0a1b2c3d4e5f60718293a4b"},
		{Key: "vcs.time", Value: "2026-11-22T03:15:00Z"}, {Key: "vcs.modified", Value: "true"}}
	tests := []struct {
		name    string
		version string
		info    *debug.BuildInfo
		want    string
	}{
		{"a checkout", defaultVersion, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			"0.1.0-dev (module (devel), revision 0ef5d45c1a2b 2026-11-22T03:15:00Z (modified), schema 19, go1.26.8 linux/amd64)"},
		{"a pseudo-version", defaultVersion, &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261122031500-0ef5d45c1a2b+dirty"}},
			"0.1.0-dev (module v0.0.0-20261122031500-0ef5d45c1a2b+dirty, revision unknown, schema 19, go1.26.8 linux/amd64)"},
		{"go install of a release", defaultVersion, &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			"1.2.3 (module v1.2.3, revision unknown, schema 19, go1.26.8 linux/amd64)"},
		{"-ldflags -X", "2.0.0", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			"2.0.0 (module v1.2.3, revision unknown, schema 19, go1.26.8 linux/amd64)"},
		{"no build information", defaultVersion, nil,
			"0.1.0-dev (module unknown, revision unknown, schema 19, go1.26.8 linux/amd64)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeBuild(tt.version, tt.info, 19, "go1.26.8 linux/amd64"); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestNearestCommand(t *testing.T) {
	names := []string{"add", "check", "help", "list", "remove", "serve", "seed", "status"}
	for typed, want := range map[string]string{
		"chek": "check", "hepl": "help", "lsit": "list", "stauts": "status", "sed": "seed", "se": "serve",
		"frob": "", "x": "", "removal": "remove", "removing": "", "a": "",
	} {
		if got := nearestCommand(typed, names); got != want {
			t.Errorf("nearestCommand(%q) = %q, want %q", typed, got, want)
		}
	}
}
