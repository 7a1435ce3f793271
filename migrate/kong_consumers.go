package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// kongConsumers makes a plan of each consumer's rate-limiting plugin,
// chosen by the consumer's key-auth credentials, listed by SHA-256. Kong
// runs a consumer's plugin in place of the route's, service's or global
// one: a key's plan replaces the imported plan's limits, and the rules (the
// route and service plugins, when they differ) apply to the imported
// plan's clients only.
func (t *Translation) kongConsumers(consumers []kongConsumer) error {
	var plans []string
	for _, c := range consumers {
		i := slices.IndexFunc(c.Plugins, func(p kongPlugin) bool { return p.Name == "rate-limiting" && (p.Enabled == nil || *p.Enabled) })
		if i < 0 {
			continue
		}
		where := "plugin on consumer " + c.Username
		name := uniqueName("consumer-"+c.Username, 56, func(n string) bool {
			return n == PlanName || slices.ContainsFunc(t.Plans, func(p Plan) bool { return p.Name == n })
		})
		ls, err := t.kongPeriods(kongScope{where: where, config: c.Plugins[i].Config}, func(n string) string { return n })
		if err != nil {
			return err
		}
		t.Plans = append(t.Plans, Plan{Name: name, Limits: ls})
		plans = append(plans, name)
		n := 0
		for _, cr := range c.Credentials {
			if cr.Key == "" {
				continue
			}
			sum := sha256.Sum256([]byte(cr.Key))
			if slices.ContainsFunc(t.Keys, func(k Key) bool { return k.SHA256 == hex.EncodeToString(sum[:]) }) {
				t.differs(where, "a key-auth credential of %s is another consumer's too: it keeps the first one's plan.", c.Username)
				continue
			}
			t.Keys = append(t.Keys, Key{Name: uniqueName(c.Username, 64, func(string) bool { return false }), SHA256: hex.EncodeToString(sum[:]), Plan: name})
			n++
		}
		if len(t.APIKeyHeaders) == 0 {
			// The other limits count by address (or a header the rules
			// read): a key sent by anyone else must not make a client.
			t.KeysOnlyListed = true
		}
		t.APIKeyHeaders = []string{"Apikey", "Authorization"}
		if n == 0 {
			t.differs(where, "plan %s holds the consumer's limits; the file has no key-auth credential of %s: list its keys under keys: (by SHA-256) with plan: %s.", name, c.Username, name)
		} else {
			t.same(where, "plan %s holds the consumer's limits, chosen by its %d key-auth credentials (keys:, by SHA-256, never in clear), in place of the imported plan's, as Kong runs the consumer's plugin in place of the others.", name, n)
		}
		if n > 1 {
			t.differs(where, "the consumer's %d credentials shared one count in Kong; in sluice each key counts alone.", n)
		}
	}
	if len(plans) > 0 && len(t.SluiceRules) > 0 {
		for i := range t.SluiceRules {
			t.SluiceRules[i].Plans = []string{PlanName}
		}
		t.same("consumers", "the rules made of the route, service and global plugins apply to the clients of plan %s only (match.plans): the consumers' plans (%s) are limited by their own plugin alone, as Kong runs a consumer's plugin in place of the others.", PlanName, strings.Join(plans, ", "))
	}
	return nil
}
