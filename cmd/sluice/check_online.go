package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/redact"
	"github.com/sluice-dev/sluice/jwt"
	"github.com/sluice-dev/sluice/server"
)

// onlineTimeout bounds each fetch of check -online, and its wait for the
// store.
const onlineTimeout = 15 * time.Second

// checkOnline fetches the keys of each identity.jwt issuer that fetches
// them (jwks_url, discover) as sluice serve would, and prints a JWKS line
// for each: how many usable keys it holds, or why the fetch failed; then
// checks the store (checkStoreOnline), whatever the keys gave. It returns
// an error when a fetch failed or holds no key, or the store failed.
func checkOnline(ctx context.Context, w io.Writer, cfg *config.Config) error {
	failed := 0
	for _, j := range cfg.Identity.JWT {
		if j.JWKSURL == "" && !j.Discover {
			continue
		}
		from := redact.URL(j.JWKSURL)
		if j.Discover {
			from = "the OpenID configuration of " + redact.URL(j.Issuer)
		}
		v, err := jwt.New(j.Options())
		if err == nil {
			fctx, cancel := context.WithTimeout(ctx, onlineTimeout)
			err = v.Refresh(fctx)
			cancel()
			if err == nil && v.Keys() == 0 {
				err = fmt.Errorf("no usable key")
			}
			n := v.Keys()
			v.Close()
			if err == nil {
				fmt.Fprintf(w, "JWKS  %s: %d keys from %s\n", j.Name, n, from)
				continue
			}
		}
		failed++
		fmt.Fprintf(w, "JWKS  %s: %s: %v\n", j.Name, from, err)
	}
	storeErr := checkStoreOnline(ctx, w, cfg)
	if failed > 0 {
		return fmt.Errorf("the keys of %s could not be fetched", count(failed, "issuer"))
	}
	return storeErr
}

// checkStoreOnline connects to a Redis store as sluice serve would and
// prints a STORE line: reachable, and whether a master may evict the
// limits' states when full (a warning, not a failure), or why it is not
// reachable (an error: sluice serve would decide by on_store_error).
func checkStoreOnline(ctx context.Context, w io.Writer, cfg *config.Config) error {
	if cfg.Store.Type != "redis" {
		return nil
	}
	where := "redis " + strings.Join(cfg.Store.Redis.Addresses, ", ")
	st, err := server.OpenStore(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		fmt.Fprintf(w, "STORE  %s: %v\n", where, err)
		return err
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(ctx, onlineTimeout)
	defer cancel()
	for err = st.Ready(ctx); err != nil && ctx.Err() == nil; err = st.Ready(ctx) {
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		fmt.Fprintf(w, "STORE  %s: not reachable: %v\n", where, err)
		return fmt.Errorf("the store is not reachable (sluice serve would decide by on_store_error %s)", cfg.Store.Redis.OnStoreError)
	}
	// The store reads every node right after connecting: wait for that
	// read to end.
	evicting, seen := st.Evicting()
	for seen == 0 && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		evicting, seen = st.Evicting()
	}
	line := fmt.Sprintf("STORE  %s: reachable, %s read", where, count(seen, "master"))
	if len(evicting) > 0 {
		line += "; WARNING: may evict the limits' states when full, each giving its client a fresh quota (set maxmemory-policy noeviction): " + strings.Join(evicting, ", ")
	}
	fmt.Fprintln(w, line)
	return nil
}
