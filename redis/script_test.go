package redis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// A build that lacks a Lua file is an error that names it, not a panic.
func TestAMissingLuaFileIsAnError(t *testing.T) {
	fsys := fstest.MapFS{}
	for _, name := range []string{"arith.lua", "state.lua", "apply.lua"} {
		fsys["lua/"+name] = &fstest.MapFile{Data: []byte("-- " + name)}
	}
	if src, err := luaSource(fsys, familyFixedWindow, "apply.lua"); err == nil || !strings.Contains(err.Error(), "fixed_window.lua") {
		t.Errorf("luaSource without fixed_window.lua: %q, %v; want an error naming it", src, err)
	}
	if _, err := luaSource(luaFiles, allFamilies, "apply.lua"); err != nil {
		t.Errorf("the embedded sources: %v", err)
	}
}

// A store built without its scripts fails every call with that error, as
// an unavailable store: the caller's failure policy applies.
func TestAStoreWithoutScriptsFailsEveryCall(t *testing.T) {
	s := New(redistest.Standalone(t).Client(t), WithTimeout(testTimeout))
	s.scripts, s.scriptsErr = nil, errors.New("redis: embedded script missing from this build: lua/bucket.lua")
	checks := []sluice.Check{{Key: "u", Limit: sluice.PerSecond(5), Cost: 1}}
	err := s.Apply(context.Background(), checks, make([]sluice.Status, 1))
	if !errors.Is(err, sluice.ErrStoreUnavailable) || !strings.Contains(err.Error(), "bucket.lua") {
		t.Errorf("Apply: %v, want ErrStoreUnavailable naming the file", err)
	}
	if err := s.Release(context.Background(), checks, []int64{1}); err == nil {
		t.Error("Release succeeded without scripts")
	}
}
