// What the decoder keeps for resolve: plans, keys, and where each field was read.

package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// rawConfig holds what must be cross-checked once everything is read, and
// where each field of httplimit.Options came from.
type rawConfig struct {
	plans     []rawPlan
	plansNode *yaml.Node
	keys      []rawKey
	// locs maps a field path of httplimit.Options ("DefaultPlan",
	// "Plans[0].Upgrade.Plan") to the node and path it was read from.
	locs map[string]location
	// publicPaths are the nodes docs_path, health_path and
	// response.status_path were read from, by field path (publicPath).
	publicPaths map[string]*yaml.Node
	// partial holds the fields the decoder refused part of (a list of
	// limits with an invalid one left out): what is said of them whole
	// ("a plan needs at least one limit") would follow from that refusal.
	partial map[string]bool
}

// refused records that the decoder refused part of field, if it did.
func (raw *rawConfig) refused(field string, did bool) {
	if !did {
		return
	}
	if raw.partial == nil {
		raw.partial = map[string]bool{}
	}
	raw.partial[field] = true
}

// eachAt records where each element of field, a list read from the
// sequence n at path, was read: field[j] at its entry. A list the decoder
// refused part of (refused) is not recorded, its elements' indices being
// those of the entries it kept.
func (raw *rawConfig) eachAt(field string, n *yaml.Node, path string, refused bool) {
	if refused || n == nil || n.Kind != yaml.SequenceNode {
		return
	}
	for j, e := range n.Content {
		raw.at(fmt.Sprintf("%s[%d]", field, j), e, fmt.Sprintf("%s[%d]", path, j))
	}
}

// location is where a value was read: its node and field path.
type location struct {
	node *yaml.Node
	path string
	file string // "" for the configuration's own, else the keys file
}

// at records that the field of httplimit.Options at field was read from n at path.
func (raw *rawConfig) at(field string, n *yaml.Node, path string) { raw.atIn("", field, n, path) }

// atIn is at for a node of file (the keys file; "" for the configuration).
func (raw *rawConfig) atIn(file, field string, n *yaml.Node, path string) {
	if raw.locs == nil {
		raw.locs = map[string]location{}
	}
	raw.locs[field] = location{n, path, file}
}

type rawPlan struct {
	plan *httplimit.Plan
	// limitsRefused: the decoder left out an invalid limit.
	limitsRefused bool
	costNodes     map[string]*yaml.Node
	node          *yaml.Node
	limitsNode    *yaml.Node // the list of limits, nil without one
	upgradeNode   *yaml.Node
	path          string
}

type rawKey struct {
	key       *Key
	plan      string
	overrides []sluice.Limit
	node      *yaml.Node
	// planNode is the node of plan:, nil without one; hashNode that of
	// sha256:, nil unless it holds a SHA-256.
	planNode, hashNode *yaml.Node
	path               string
	file               string // "" for the configuration's own keys, else the keys file
}

// isPartial reports whether the decoder refused part of field or of a
// field enclosing it.
func (raw *rawConfig) isPartial(field string) bool {
	for f := field; f != ""; f = parentField(f) {
		if raw.partial[f] {
			return true
		}
	}
	return false
}
