package server

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// sluiceModule is the module path of sluice, whose version the build info
// reports whether sluice is the program or a library of it.
const sluiceModule = "github.com/sluice-dev/sluice"

// registerBuildInfo registers sluice_build_info: 1, labelled with sluice's
// module version ("(devel)" for a build from a checkout), the commit it was
// built from when the build recorded one (with "+modified" for a tree with
// uncommitted changes), and the Go version.
func registerBuildInfo(reg prometheus.Registerer) {
	version, revision := "(devel)", ""
	if info, ok := debug.ReadBuildInfo(); ok {
		version, revision = buildVersion(info)
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "sluice_build_info",
		Help:        "1, labelled with the sluice version serving, the commit it was built from (when known) and the Go version.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()},
	})
	g.Set(1)
	reg.MustRegister(g)
}

// buildVersion returns sluice's version in info and, when sluice is the
// program built, the commit the build recorded.
func buildVersion(info *debug.BuildInfo) (version, revision string) {
	version = "(devel)"
	if info.Main.Path != sluiceModule {
		for _, d := range info.Deps {
			if d.Path == sluiceModule && d.Version != "" {
				return d.Version, ""
			}
		}
		return version, ""
	}
	if info.Main.Version != "" {
		version = info.Main.Version
	}
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && revision != "" {
		revision += "+modified"
	}
	return version, revision
}
