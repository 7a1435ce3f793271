package server

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/internal/buildinfo"
)

// registerBuildInfo registers sluice_build_info: 1, labelled with sluice's
// module version ("(devel)" for a build from a checkout), the commit it was
// built from when the build recorded one (with "+modified" for a tree with
// uncommitted changes), and the Go version.
func registerBuildInfo(reg prometheus.Registerer) {
	version, revision := "(devel)", ""
	if info, ok := debug.ReadBuildInfo(); ok {
		var modified bool
		if version, revision, modified = buildinfo.Sluice(info); modified && revision != "" {
			revision += "+modified"
		}
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "sluice_build_info",
		Help:        "1, labelled with the sluice version serving, the commit it was built from (when known) and the Go version.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()},
	})
	g.Set(1)
	reg.MustRegister(g)
}
