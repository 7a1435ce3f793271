package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// TestNewcomerDemo runs `sluice serve` without a configuration, as the
// README's first command does: it says that it trusts loopback callers, the
// decision API answers on the admin listener without a token from loopback,
// and the same path on the public listener is the demo upstream's.
func TestNewcomerDemo(t *testing.T) {
	bin, err := sluiceBinary()
	if err != nil {
		t.Fatal(err)
	}
	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	var out realtest.Buffer
	cmd := exec.Command(bin, "serve", "-listen", public, "-admin-listen", admin)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get("http://" + admin + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sluice serve did not start: %v\n%s", err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s := out.String(); !strings.Contains(s, "trusts callers on loopback") || !strings.Contains(s, admin+"/v1/check") {
		t.Errorf("the demo does not say it trusts loopback, or where the decision API is:\n%s", s)
	}
	post := func(addr string) (int, string) {
		resp, err := http.Post("http://"+addr+"/v1/check", "application/json",
			strings.NewReader(`{"api_key":"demo-pro-key","method":"POST","path":"/api/generate"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(admin); code != 200 || !strings.Contains(body, `"allowed":true`) || !strings.Contains(body, `"plan":"pro"`) {
		t.Errorf("the README's decision API call: %d %s", code, body)
	}
	if code, body := post(public); code != 200 || !strings.Contains(body, "sluice demo upstream") {
		t.Errorf("/v1/check on the public listener: %d %s, want the demo upstream's answer", code, body)
	}
}

// An argument serve does not take is refused before anything is served:
// "sluice serve /etc/sluice/sluice.yaml" (or a flag after it, which the
// flag package would leave unread) must not serve the demo, which trusts
// every loopback caller with every scope.
func TestServeRefusesArguments(t *testing.T) {
	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	file := t.TempDir() + "/sluice.yaml"
	for _, args := range [][]string{
		{"serve", "-listen", public, "-admin-listen", admin, file},
		{"serve", "-listen", public, "-admin-listen", admin, file, "-config", file},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		var out, errOut bytes.Buffer
		code := run(ctx, args, &out, &errOut)
		cancel()
		if code == 0 || !strings.Contains(errOut.String(), "unexpected argument") || strings.Contains(out.String(), "example configuration") {
			t.Errorf("%q: exit %d, want a refusal of the argument\nstdout:\n%s\nstderr:\n%s", args, code, out.String(), errOut.String())
		}
	}
}

// A configuration file that cannot be read is refused with the reason, as
// sluice check refuses it, not only with "not valid".
func TestServeSaysWhyItCannotReadTheConfiguration(t *testing.T) {
	missing := t.TempDir() + "/missing.yaml"
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"serve", "-config", missing}, &out, &errOut)
	if code == 0 || !strings.Contains(errOut.String(), missing+": no such file or directory") {
		t.Errorf("exit %d, stderr:\n%s\nwant the file and why it cannot be read", code, errOut.String())
	}
}

// SIGTERM drains in-flight requests for up to shutdown.drain; a second
// SIGTERM (or Ctrl-C) ends the process at once, non-zero, and says so.
func TestSecondSignalEndsTheDrain(t *testing.T) {
	bin, err := sluiceBinary()
	if err != nil {
		t.Fatal(err)
	}
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	defer upstream.Close()
	defer close(release)
	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	os.WriteFile(file, []byte(fmt.Sprintf("listen: %q\nadmin: {listen: %q}\nupstream: %s\nshutdown: {drain: 1m}\n"+
		"connections: {write_timeout: 5m}\nplans:\n  free:\n    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]\n",
		public, admin, upstream.URL)), 0o644)
	cmd, out, exited := launchServe(t, bin, file)
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s:\n%s", what, out.String())
			}
		}
	}
	waitFor("listener", func() bool {
		resp, err := http.Get("http://" + admin + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	go http.Get("http://" + public + "/slow") // in flight until the test ends
	select {
	case <-arrived:
	case <-time.After(15 * time.Second):
		t.Fatalf("the request did not reach the upstream:\n%s", out.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	waitFor("drain", func() bool { return strings.Contains(out.String(), "draining") })
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(out.String(), "again") {
			t.Errorf("after a second SIGTERM: %v, want a non-zero exit that says why\n%s", err, out.String())
		}
	case <-time.After(5 * time.Second):
		t.Errorf("a second SIGTERM did not end the drain:\n%s", out.String())
	}
}

// serve -h says what the command does, as every command's usage does, and
// how it answers signals: that is where an operator looks for it.
func TestServeUsageSaysHowItAnswersSignals(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"serve", "-h"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d", code)
	}
	u := errOut.String()
	for _, want := range []string{"usage: sluice serve [flags]\n", "SIGHUP", "SIGTERM", "-config string"} {
		if !strings.Contains(u, want) {
			t.Errorf("serve -h lacks %q:\n%s", want, u)
		}
	}
}

// The demo says it is serving only once it is: with its public address
// taken, it prints no banner, only why it could not listen.
func TestNewcomerBannerOnlyOnceListening(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"serve", "-listen", taken.Addr().String(), "-admin-listen", realtest.FreeAddr(t)}, &out, &errOut)
	if code != 1 || out.String() != "" || !strings.Contains(errOut.String(), "address already in use") {
		t.Errorf("exit %d, want 1, no banner and the reason\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
}

// A SIGHUP that comes while serve -config is still starting (loading a
// configuration of 30,000 keys, here) asks for a reload, as one after start
// does: systemd's ExecReload may send it as soon as the process runs, and
// SIGHUP's default action would end the process.
func TestSIGHUPWhileStartingIsAReload(t *testing.T) {
	bin, err := sluiceBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var keys strings.Builder
	for i := range 30_000 {
		fmt.Fprintf(&keys, "- {name: k%d, sha256: %064x, plan: free}\n", i, i+1)
	}
	os.WriteFile(filepath.Join(dir, "keys.yaml"), []byte(keys.String()), 0o644)
	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	file := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(file, []byte(fmt.Sprintf("listen: %q\nadmin: {listen: %q, loopback_scopes: [read]}\nkeys_file: keys.yaml\n"+
		"plans:\n  free:\n    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]\n", public, admin)), 0o644)
	cmd, out, exited := launchServe(t, bin, file)
	// The SIGHUP goes once the process has spent 250 ms of CPU: its start
	// takes about 40 ms (the runtime, every package's init, the flags),
	// reading the 30,000 keys about 750 ms more. A wall-clock wait (150 ms)
	// was too short on a loaded machine, and 50 ms of CPU too close to the
	// start: the signal then came before serve had started and ended the
	// process as SIGHUP's default action does.
	waitCPU(t, cmd.Process.Pid, 250*time.Millisecond)
	if resp, err := http.Get("http://" + admin + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatalf("serve was listening once it had spent 250 ms of CPU: the test sends its SIGHUP too late to mean anything")
	}
	cmd.Process.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("a SIGHUP while starting ended serve: %v\n%s", err, out.String())
		default:
		}
		if resp, err := http.Get("http://" + admin + "/metrics"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), `sluice_config_reloads_total{result="ok"} 1`) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reload counted after a SIGHUP while starting:\n%s", out.String())
		}
	}
}

// waitCPU waits until the process pid has spent at least spent of CPU time
// (user and system, from /proc/pid/stat, counted in clock ticks of 10 ms),
// for at most 30 s of wall time.
func waitCPU(t *testing.T, pid int, spent time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// The fields after the command's name, which ends at the last ')':
		// state is the first, utime and stime the 12th and 13th.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		var utime, stime int64
		fmt.Sscan(fields[11], &utime)
		fmt.Sscan(fields[12], &stime)
		if time.Duration(utime+stime)*10*time.Millisecond >= spent {
			return
		}
	}
	t.Fatalf("process %d spent less than %v of CPU in 30 s", pid, spent)
}

// launchServe starts bin serve -config file, its output in out, and sends
// on exited when it ends; the process is killed when the test ends.
func launchServe(t *testing.T, bin, file string) (cmd *exec.Cmd, out *realtest.Buffer, exited <-chan error) {
	t.Helper()
	out = &realtest.Buffer{}
	cmd = exec.Command(bin, "serve", "-config", file)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, out, done
}
