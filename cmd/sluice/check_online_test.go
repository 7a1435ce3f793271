package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// check -online fetches each issuer's keys as serve would and says how
// many it holds; an issuer whose keys cannot be fetched fails the check.
func TestCheckOnlineFetchesTheKeys(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: "k1", Algorithm: "ES256", Use: "sig"}}}
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jwks.json" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(set)
	}))
	defer jwks.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "sluice.yaml")
	write := func(path string) {
		os.WriteFile(file, []byte("plans: {free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}}\n"+
			"identity:\n  jwt: {name: users, jwks_url: \""+jwks.URL+path+"\", issuer: https://id.example/}\n"), 0o600)
	}
	write("/jwks.json")
	var out, errOut bytes.Buffer
	if err := runCheck(context.Background(), []string{"-online", file}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	if want := "JWKS  users: 1 keys from " + jwks.URL + "/jwks.json\n"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	write("/gone.json")
	out.Reset()
	err = runCheck(context.Background(), []string{"-online", file}, &out, &errOut)
	if err == nil || !strings.Contains(out.String(), "JWKS  users: "+jwks.URL+"/gone.json: ") {
		t.Errorf("a JWK Set that is not there: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := runCheck(context.Background(), []string{file}, &out, &errOut); err != nil || strings.Contains(out.String(), "JWKS") {
		t.Errorf("without -online nothing is fetched: %v\n%s", err, out.String())
	}
}

// -online connects to a Redis store as sluice serve would: reachable, and
// a warning for a master that may evict; an unreachable one fails.
func TestCheckOnlineConnectsToTheStore(t *testing.T) {
	rs := redistest.Standalone(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "sluice.yaml")
	write := func(addr string) {
		os.WriteFile(file, []byte("plans: {free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}}\n"+
			"store: {type: redis, redis: {addresses: [\""+addr+"\"]}}\n"), 0o600)
	}
	write(rs.Addr)
	var out, errOut bytes.Buffer
	if err := runCheck(context.Background(), []string{"-online", file}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	if want := "STORE  redis " + rs.Addr + ": reachable, 1 master read\n"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	rs.MustDo("CONFIG", "SET", "maxmemory", "64mb")
	rs.MustDo("CONFIG", "SET", "maxmemory-policy", "volatile-lru")
	out.Reset()
	if err := runCheck(context.Background(), []string{"-online", file}, &out, &errOut); err != nil {
		t.Fatalf("an evicting Redis is a warning, not a failure: %v", err)
	}
	if want := "WARNING: may evict the limits' states when full, each giving its client a fresh quota (set maxmemory-policy noeviction): " +
		rs.Addr + " (maxmemory-policy volatile-lru, maxmemory 67108864 bytes)"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	write(realtest.FreeAddr(t)) // nothing listens there
	out.Reset()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := runCheck(ctx, []string{"-online", file}, &out, &errOut); err == nil || !strings.Contains(out.String(), ": not reachable: ") {
		t.Errorf("an unreachable Redis: %v\n%s", err, out.String())
	}
}

// On a Cluster, -online reads every master before it answers, one slow to
// answer included (within the store's timeout): the warning names the one
// master of three that may evict, paused for half a second.
func TestCheckOnlineReadsEveryMasterOfACluster(t *testing.T) {
	c := redistest.Cluster(t)
	evicts := c.Masters[2]
	evicts.MustDo("CONFIG", "SET", "maxmemory", "64mb")
	evicts.MustDo("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	evicts.MustDo("CLIENT", "PAUSE", "500", "ALL")
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	os.WriteFile(file, []byte("plans: {free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}}\n"+
		"store: {type: redis, redis: {mode: cluster, timeout: 2s, addresses: [\""+c.Masters[0].Addr+"\"]}}\n"), 0o600)
	var out, errOut bytes.Buffer
	if err := runCheck(context.Background(), []string{"-online", file}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	want := "STORE  redis " + c.Masters[0].Addr + ": reachable, 3 masters read; WARNING: may evict the limits' states when full, " +
		"each giving its client a fresh quota (set maxmemory-policy noeviction): " + evicts.Addr + " (maxmemory-policy allkeys-lru, maxmemory 67108864 bytes)\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}

// -online reaches everything it can before it fails: an identity
// provider's keys that do not load still leave the store checked, so one
// run names every problem.
func TestCheckOnlineChecksTheStoreWhenKeysFail(t *testing.T) {
	rs := redistest.Standalone(t)
	jwks := httptest.NewServer(http.NotFoundHandler())
	defer jwks.Close()
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	os.WriteFile(file, []byte("plans: {free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}}\n"+
		"identity:\n  jwt: {name: users, jwks_url: \""+jwks.URL+"/gone.json\", issuer: https://id.example/}\n"+
		"store: {type: redis, redis: {addresses: [\""+rs.Addr+"\"]}}\n"), 0o600)
	var out, errOut bytes.Buffer
	err := runCheck(context.Background(), []string{"-online", file}, &out, &errOut)
	if err == nil || !strings.Contains(out.String(), "JWKS  users: "+jwks.URL+"/gone.json: ") ||
		!strings.Contains(out.String(), "STORE  redis "+rs.Addr+": reachable") {
		t.Errorf("%v, want a failure that names the keys and checked the store:\n%s", err, out.String())
	}
}
