package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionText(t *testing.T) {
	for _, tc := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{{
		name: "a release installed with go install prints its tag and no commit",
		info: debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}},
		want: "sluice v1.2.3\ngo1.26.8\n",
	}, {
		name: "a build in a clean checkout prints its commit",
		info: debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201120000-0123456789ab"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "false"}}},
		want: "sluice v0.0.0-20261201120000-0123456789ab\ncommit 0123456789abcdef\ngo1.26.8\n",
	}, {
		name: "a build in a checkout with uncommitted changes says so",
		info: debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: "fedcba"}}},
		want: "sluice (devel)\ncommit fedcba (modified)\ngo1.26.8\n",
	}, {
		name: "a binary without a main module version is (devel)",
		info: debug.BuildInfo{GoVersion: "go1.26.8"},
		want: "sluice (devel)\ngo1.26.8\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionText(&tc.info); got != tc.want {
				t.Errorf("versionText:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
