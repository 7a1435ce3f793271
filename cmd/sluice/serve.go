package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/examples"
	"github.com/sluice-dev/sluice/internal/gctune"
	"github.com/sluice-dev/sluice/server"
)

const serveUsage = `usage: sluice serve [flags]

Serves the configuration -config FILE (without it, the embedded example on
the in-memory store, in front of a demo upstream) until SIGTERM or SIGINT:
the first drains in-flight requests (shutdown.delay, shutdown.drain), a
second ends the process at once. With -config, SIGHUP and a change of the
file reload it; a file that does not load is logged, and the configuration
before it keeps serving.

flags:
`

// runServe runs the server. Without -config it serves the example
// configuration (embedded) on the in-memory store with a demo upstream.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", serveUsage, stderr)
	file := fs.String("config", "", "configuration file (default: the embedded examples/sluice.yaml)")
	listen := fs.String("listen", "", "public address (overrides the configuration's listen)")
	adminListen := fs.String("admin-listen", "", "admin address (overrides the configuration's admin.listen)")
	jsonLogs := fs.Bool("json-logs", false, "log as JSON instead of text")
	gcFloor := fs.Int64("gc-heap-floor", gctune.DefaultHeapFloor, "heap size in bytes below which no GC cycle starts (0: Go's default; GOGC or GOMEMLIMIT in the environment win)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q (a configuration file is -config FILE; flags go before any argument)", fs.Arg(0))
	}
	if *file == "" && isSet(fs, "config") { // -config "$UNSET": never the demo, which trusts loopback with every scope
		return usageErrorf("-config \"\": name a configuration file (leave -config out to serve the demo)")
	}
	if *gcFloor < 0 {
		return usageErrorf("-gc-heap-floor %d: want a heap size in bytes, or 0 for Go's default", *gcFloor)
	}
	for _, f := range []struct{ name, addr string }{{"listen", *listen}, {"admin-listen", *adminListen}} {
		if err := listenAddress(f.addr); err != nil {
			return usageErrorf("-%s %q: %v", f.name, f.addr, err)
		}
	}
	var handler slog.Handler = slog.NewTextHandler(stderr, nil)
	if *jsonLogs {
		handler = slog.NewJSONHandler(stderr, nil)
	}
	log := slog.New(handler)

	load := func() (*config.Config, error) { return config.Parse(examples.ConfigName, examples.Config) }
	if *file != "" {
		load = func() (*config.Config, error) { return config.Load(*file) }
	}
	withListen := func() (*config.Config, error) {
		c, err := load()
		if err == nil && *listen != "" {
			c.Listen = *listen
		}
		if err == nil && *adminListen != "" {
			c.Admin.Listen = *adminListen
		}
		return c, err
	}
	// A SIGHUP while starting asks for a reload once serving, as one later
	// does: systemd's ExecReload may send one as soon as the process runs,
	// and its default action would end the process.
	var reloads chan struct{}
	if *file != "" {
		reloads = make(chan struct{}, 1)
		defer relaySIGHUP(reloads)()
	}
	cfg, err := withListen()
	if err != nil {
		printConfigErrors(stderr, err)
		return fmt.Errorf("the configuration is not valid")
	}
	store, err := server.OpenStore(cfg, log)
	if err != nil {
		return err
	}
	defer store.Close()
	opts := server.Options{Config: cfg, Store: store.Store, Ready: store.Ready, Logger: log,
		StoreDown: store.StoreDown, Failover: store.Failover, OverLimit: store.Cache, Memory: store.Memory,
		StoreLosses: store.Losses, StoreUnrefunded: store.Unrefunded, Leases: store.Leases,
		StoreClientCertificate: store.ClientCertificate}
	if *file != "" {
		opts.Load, opts.WatchFile, opts.Reloads = withListen, *file, reloads
	}
	srv, err := server.New(opts)
	if err != nil {
		return err
	}
	defer gctune.Start(*gcFloor)()
	if *file != "" {
		return srv.Run(ctx)
	}
	// The demo's banner says that it serves: it is printed once both
	// listeners are open.
	pub, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		srv.Close()
		return fmt.Errorf("listen: %w", err)
	}
	adm, err := net.Listen("tcp", cfg.Admin.Listen)
	if err != nil {
		pub.Close()
		srv.Close()
		return fmt.Errorf("admin listen: %w", err)
	}
	printNewcomer(stdout, boundAddr(cfg.Listen, pub), boundAddr(cfg.Admin.Listen, adm), cfg.Admin.LoopbackScopes.String(), cfg.Response.StatusPath)
	return srv.Serve(ctx, server.Listeners{Public: pub, Admin: adm})
}

// listenAddress returns an error saying why addr, a listen flag's value
// (empty: not given), is no address to listen on.
func listenAddress(addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return errors.New("want host:port, e.g. 127.0.0.1:8080 or :8080")
	}
	return nil
}

// relaySIGHUP sends on reloads at each SIGHUP (a reload already asked for
// and not yet begun takes in a second one), until the returned function is
// called.
func relaySIGHUP(reloads chan<- struct{}) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-hup:
				select {
				case reloads <- struct{}{}:
				default:
				}
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
	}
}

// boundAddr is the address configured as addr with the port l was given:
// the configured host as written (":8080" stays without one), the port
// the system chose where addr asked for port 0.
func boundAddr(addr string, l net.Listener) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return l.Addr().String()
	}
	_, port, err := net.SplitHostPort(l.Addr().String())
	if err != nil {
		return l.Addr().String()
	}
	return net.JoinHostPort(host, port)
}

func printNewcomer(w io.Writer, listen, admin, loopback, status string) {
	host := func(addr string) string {
		if len(addr) > 0 && addr[0] == ':' {
			return "localhost" + addr
		}
		return addr
	}
	fmt.Fprintf(w, `sluice is serving the example configuration (examples/sluice.yaml) on the in-memory store,
in front of a built-in demo upstream.

  public listener %[1]s: the limited API, /docs, /healthz, %[4]s
  admin listener  %[2]s: %[5]s

This demo trusts callers on loopback with the scopes %[3]s, without a token
(admin.loopback_scopes): fine on your laptop, not in production — there, give each
caller a token (sluice token) and set loopback_scopes: [] (left out, it is [read]). Try:

  curl -i -H 'Authorization: Bearer demo-free-key' http://%[1]s/api/search
  for i in $(seq 12); do curl -s -o /dev/null -w '%%{http_code} ' -H 'Authorization: Bearer demo-free-key' http://%[1]s/api/search; done; echo
  curl -s -X POST http://%[2]s/v1/check -d '{"api_key":"demo-pro-key","method":"POST","path":"/api/generate"}'
  curl -s -H 'Authorization: Bearer demo-pro-key' http://%[1]s%[4]s

  client docs:  http://%[1]s/docs
  dashboard:    http://%[2]s/dashboard
  metrics:      http://%[2]s/metrics

Run with -config FILE for your own configuration (sluice check FILE validates it).
`, host(listen), host(admin), loopback, status, adminEndpoints)
}

// adminEndpoints lists what the admin listener serves, for the start-up
// banner and sluice check.
const adminEndpoints = "/v1/check, /v1/settle, /v1/forward-auth, /metrics, /dashboard, /designer, /v1/degradation, /v1/keys, /v1/tokens, /readyz"
