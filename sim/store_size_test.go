package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A memory store sized to exactly the clients live at once evicts as soon
// as one more comes: its bound is kept per shard, over which keys hash
// unevenly, and a client that left keeps its state until the state is full
// again. The designed max_keys leaves a quarter above the states the
// requirements count, and is written whenever that exceeds the default.
func TestDesignMemoryStoreHasRoomAboveTheLiveClients(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys int64
		want int // the least max_keys the configuration may hold
	}{
		{"fewer states than the default's four fifths keep the default", 10_000, 1_000_000},
		{"states near the default get a quarter more than they are", 900_000, 1_125_000},
		{"states above the default get a quarter more than they are", 2_000_000, 2_500_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := design(t, Requirements{Rate: "10/1s", Keys: tc.keys, Store: "memory", MaxArrivals: 5000})
			cfg, err := config.Parse("design.yaml", []byte(a.Config))
			if err != nil {
				t.Fatalf("%v\n%s", err, a.Config)
			}
			if cfg.Store.MaxKeys < tc.want {
				t.Errorf("max_keys %d for %d keys, want at least %d:\n%s", cfg.Store.MaxKeys, tc.keys, tc.want, a.Config)
			}
		})
	}
	a := designAPI(t, "store: memory\nplans:\n  - name: big\n    clients: 2000000\n    limits: [{rate: 5/1s, precision: strict}, {rate: 2000/1d, precision: loose}]\n")
	cfg, err := config.Parse("api.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("%v\n%s", err, a.Config)
	}
	// 5/1s is a sliding log of 5, whose state counts 1 + 2×5/8 rounded up:
	// 2,000,000 × 3 + 2,000,000 × 1 = 8,000,000 units.
	if want := 10_000_000; cfg.Store.MaxKeys < want {
		t.Errorf("a whole API of 4,000,000 states, 8,000,000 units: max_keys %d, want at least %d:\n%s", cfg.Store.MaxKeys, want, a.Config)
	}
	if !strings.Contains(a.Config, "max_keys: 10000000   #") {
		t.Errorf("max_keys is not written with the rule that sized it:\n%s", a.Config)
	}
}

// A memory store holds at most 2^32 states (max_keys' bound): requirements
// of more on store: memory are refused, naming the store that holds them,
// rather than written as a max_keys that evicts all but a few of them.
func TestDesignRefusesMoreStatesThanAMemoryStoreHolds(t *testing.T) {
	req, err := ReadRequirements(strings.NewReader("rate: 5/1s\nkeys: 5000000000\nstore: memory\n"), "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req.MaxArrivals = 5000
	a, err := Design(context.Background(), req)
	if err == nil || !strings.HasPrefix(err.Error(), "r.yaml:3:8: store: ") || !strings.Contains(err.Error(), "redis") {
		t.Errorf("5,000,000,000 keys in memory: err %v, want the store refused at its line", err)
		if a != nil {
			t.Logf("%s", a.Config)
		}
	}
	api, err := ReadAPIRequirements(strings.NewReader("store: memory\nplans:\n  - {name: a, clients: 3000000000, limits: [{rate: 5/1s}, {rate: 100/1m}]}\n"), "api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	api.MaxArrivals = testArrivals
	if _, err := DesignAPI(context.Background(), api); err == nil || !strings.HasPrefix(err.Error(), "api.yaml:1:8: store: ") {
		t.Errorf("6,000,000,000 states in memory: err %v, want the store refused at its line", err)
	}
	// Up to the bound, max_keys holds them all, with what room is left.
	a = design(t, Requirements{Rate: "5/1s", Keys: 4_000_000_000, Store: "memory", MaxArrivals: 5000})
	if !strings.Contains(a.Config, "max_keys: 4294967296   # 4000000000 states") {
		t.Errorf("4,000,000,000 keys:\n%s", a.Config)
	}
}

// A Redis store decides in memory while Redis is down (on_store_error:
// local), and that fallback holds at most max_keys states, as a memory
// store does: a design for more states than the default holds sizes it
// as it sizes a memory store, or live clients' states would be evicted
// during an outage and their quotas start afresh.
func TestDesignRedisFallbackHasRoomForTheClients(t *testing.T) {
	a := design(t, Requirements{Rate: "10/1s", Keys: 2_000_000, Store: "redis", MaxArrivals: 5000})
	cfg, err := config.Parse("design.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("%v\n%s", err, a.Config)
	}
	if cfg.Store.Redis.OnStoreError != "local" {
		t.Fatalf("on_store_error %q, want local:\n%s", cfg.Store.Redis.OnStoreError, a.Config)
	}
	if want := 2_500_000; cfg.Store.MaxKeys < want {
		t.Errorf("a Redis design of 2,000,000 keys: max_keys %d, want at least %d:\n%s", cfg.Store.MaxKeys, want, a.Config)
	}

	api := designAPI(t, "store: redis\npriority: balanced\nplans:\n  - name: big\n    clients: 2000000\n    limits: [{rate: 5/1s}, {rate: 2000/1d, precision: loose}]\n")
	cfg, err = config.Parse("api.yaml", []byte(api.Config))
	if err != nil {
		t.Fatalf("%v\n%s", err, api.Config)
	}
	if cfg.Store.Redis.OnStoreError != "local" {
		t.Fatalf("on_store_error %q, want local:\n%s", cfg.Store.Redis.OnStoreError, api.Config)
	}
	if want := 5_000_000; cfg.Store.MaxKeys < want {
		t.Errorf("a Redis API design of 4,000,000 states: max_keys %d, want at least %d:\n%s", cfg.Store.MaxKeys, want, api.Config)
	}

	small := designAPI(t, "store: redis\npriority: protection\nplans:\n  - name: big\n    clients: 2000000\n    limits: [{rate: 5/1s}]\n")
	if strings.Contains(small.Config, "max_keys") {
		t.Errorf("on_store_error: deny keeps no state in memory, yet max_keys is written:\n%s", small.Config)
	}
}

// A sliding log's state counts toward max_keys one unit, and one more per
// 8 entries of its array's room, up to twice the entries in its window: a
// design whose memory store holds only clients × limits is full long
// before its clients are. And a store below 128 times the longest log's
// quantity may refuse that log's client for room before its limit does,
// which config.Config.LogRoomWarning names: a designed config never
// triggers it.
func TestDesignMemoryStoreCountsTheRoomOfSlidingLogs(t *testing.T) {
	parse := func(t *testing.T, text string) *config.Config {
		t.Helper()
		cfg, err := config.Parse("design.yaml", []byte(text))
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		return cfg
	}
	t.Run("a log longer than the default's 128th", func(t *testing.T) {
		a := design(t, Requirements{Rate: "10000/1h", Precision: PrecisionStrict, Keys: 100, Store: "memory", MaxArrivals: 5000})
		if alg := a.Recommendation.Algorithm; alg != "sliding-window-log" {
			t.Fatalf("recommended %s, want sliding-window-log:\n%s", alg, a.Config)
		}
		cfg := parse(t, a.Config)
		if msg := cfg.LogRoomWarning(); msg != "" {
			t.Errorf("max_keys %d: LogRoomWarning %q\n%s", cfg.Store.MaxKeys, msg, a.Config)
		}
	})
	t.Run("many clients of a log", func(t *testing.T) {
		// 10,000 clients × (1 + 2 × 1,000 / 8) = 2,510,000 units, and a quarter more.
		a := design(t, Requirements{Rate: "1000/1m", Precision: PrecisionStrict, Keys: 10_000, Store: "memory", MaxArrivals: 5000})
		if alg := a.Recommendation.Algorithm; alg != "sliding-window-log" {
			t.Fatalf("recommended %s, want sliding-window-log:\n%s", alg, a.Config)
		}
		cfg := parse(t, a.Config)
		if want := 3_137_500; cfg.Store.MaxKeys < want {
			t.Errorf("10,000 logs of 1,000: max_keys %d, want at least %d\n%s", cfg.Store.MaxKeys, want, a.Config)
		}
		if msg := cfg.LogRoomWarning(); msg != "" {
			t.Errorf("LogRoomWarning %q", msg)
		}
	})
	t.Run("a whole API", func(t *testing.T) {
		// 20,000 clients × (1 + 2 × 500 / 8) + 20,000 × 1 + the global
		// log's 1 + 2 × 10,000 / 8 = 2,542,501 units, and a quarter more.
		a := designAPI(t, "store: memory\ncapacity: 10000/1h\nprecision: strict\nplans:\n  - name: big\n    clients: 20000\n    limits: [{rate: 500/1m}, {rate: 5/1s, precision: loose}]\n")
		if l := a.Plans[0].Limits; len(l) != 2 || l[0].Rec().Algorithm != "sliding-window-log" || l[0].Rec().Quantity != 500 || l[1].Rec().Algorithm == "sliding-window-log" {
			t.Fatalf("plan big's limits are not a sliding log of 500 and another:\n%s", a.Config)
		}
		if a.Global == nil || a.Global.Rec().Algorithm != "sliding-window-log" {
			t.Fatalf("the global limit is not a sliding log:\n%s", a.Config)
		}
		cfg := parse(t, a.Config)
		if want := 3_178_127; cfg.Store.MaxKeys < want {
			t.Errorf("max_keys %d, want at least %d\n%s", cfg.Store.MaxKeys, want, a.Config)
		}
		if msg := cfg.LogRoomWarning(); msg != "" {
			t.Errorf("LogRoomWarning %q", msg)
		}
	})
}
