package server

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/internal/buildinfo"
)

// registerBuildInfo registers the gauge sluice_build_info, always 1, whose
// labels say what serves: version, sluice's module version ("(devel)" when
// none is recorded); revision, the commit when one is recorded, with
// "+modified" when it had uncommitted changes, else ""; goversion.
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
