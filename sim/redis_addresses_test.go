package sim

import (
	"context"
	"strings"
	"testing"
)

// With no redis_mode the designer chooses the deployment: a keyspace past
// one server's budget gets mode: cluster, whose configuration takes every
// seed address given; several addresses are refused only for a store the
// designer makes standalone.
func TestADesignerChosenClusterTakesItsSeedAddresses(t *testing.T) {
	req := Requirements{Rate: "100/1m", Keys: 1 << 36, Store: "redis", MaxArrivals: testBudget,
		RedisAddresses: []string{"10.0.0.1:6379"}}
	one, err := Design(context.Background(), req)
	if err != nil {
		t.Fatalf("one address: %v", err)
	}
	if one.Recommendation.RedisMode != "cluster" {
		t.Fatalf("mode %q, want the designer's cluster for %d keys", one.Recommendation.RedisMode, req.Keys)
	}
	req.RedisAddresses = []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"}
	if _, err := Design(context.Background(), req); err != nil {
		t.Errorf("the cluster's three seeds, no mode given (the designer chooses cluster): %v", err)
	}
}

func TestADesignerChosenStandaloneRefusesSeveralAddresses(t *testing.T) {
	req := Requirements{Rate: "100/1m", Keys: 1000, Store: "redis", MaxArrivals: testBudget,
		RedisAddresses: []string{"10.0.0.1:6379", "10.0.0.2:6379"}}
	if _, err := Design(context.Background(), req); err == nil || !strings.Contains(err.Error(), "redis_addresses[1]") {
		t.Errorf("two addresses for a standalone store: %v, want refused at redis_addresses[1]", err)
	}
}
