package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/jwt"
)

// onlineTimeout bounds each fetch of check -online.
const onlineTimeout = 15 * time.Second

// checkOnline fetches the keys of each identity.jwt issuer that fetches
// them (jwks_url, discover) as sluice serve would, and prints a JWKS line
// for each: how many usable keys it holds, or why the fetch failed. It
// returns an error when one failed or holds no key.
func checkOnline(ctx context.Context, w io.Writer, cfg *config.Config) error {
	failed := 0
	for _, j := range cfg.Identity.JWT {
		if j.JWKSURL == "" && !j.Discover {
			continue
		}
		from := j.JWKSURL
		if j.Discover {
			from = "the OpenID configuration of " + j.Issuer
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
	if failed > 0 {
		return fmt.Errorf("%d issuers' keys could not be fetched", failed)
	}
	return nil
}
