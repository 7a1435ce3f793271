package envoyparity

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// builds holds the programs built once for every test of the package.
var builds struct {
	once      sync.Once
	dir       string // temporary, removed by TestMain
	ratelimit string // envoyproxy/ratelimit's service_cmd
	sluice    string // cmd/sluice
	module    string // envoyproxy/ratelimit's module source, read-only
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	os.Exit(code)
}

// programs builds envoyproxy/ratelimit and sluice (once) and returns
// their paths and envoyproxy/ratelimit's module directory.
func programs(t *testing.T) (ratelimit, sluice, module string) {
	t.Helper()
	builds.once.Do(func() {
		builds.dir, builds.err = os.MkdirTemp("", "envoyparity-")
		if builds.err != nil {
			return
		}
		mod := "github.com/envoyproxy/ratelimit"
		// Outside this module, so that its go.mod does not constrain
		// envoyproxy/ratelimit's dependencies. Built as realtest.GoBuild
		// builds sluice (CGO_ENABLED=0, -trimpath), so that the standard
		// library it links is the one compiled for sluice, not a variant
		// of its own; neither program needs cgo.
		env := append(os.Environ(), "GOBIN="+builds.dir, "GOWORK=off", "GOFLAGS=", "CGO_ENABLED=0")
		if out, err := goCmd(builds.dir, env, "install", "-trimpath", mod+"/src/service_cmd@"+RatelimitVersion); err != nil {
			builds.err = fmt.Errorf("go install %s/src/service_cmd@%s: %v\n%s", mod, RatelimitVersion, err, out)
			return
		}
		out, err := goCmd(builds.dir, env, "mod", "download", "-json", mod+"@"+RatelimitVersion)
		var info struct{ Dir string }
		if err == nil {
			err = json.Unmarshal(out, &info)
		}
		if err != nil || info.Dir == "" {
			builds.err = fmt.Errorf("go mod download %s@%s: %v\n%s", mod, RatelimitVersion, err, out)
			return
		}
		builds.module = info.Dir
		builds.ratelimit = filepath.Join(builds.dir, "service_cmd")
		builds.sluice = filepath.Join(builds.dir, "sluice")
		if out, err := realtest.GoBuild("-o", builds.sluice, "github.com/sluice-dev/sluice/cmd/sluice").CombinedOutput(); err != nil {
			builds.err = fmt.Errorf("go build cmd/sluice: %v\n%s", err, out)
		}
	})
	if builds.err != nil {
		t.Fatalf("building the two services (the Go module proxy must be reachable): %v", builds.err)
	}
	return builds.ratelimit, builds.sluice, builds.module
}

func goCmd(dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// freePort returns a loopback port that nothing listened on when it was
// chosen (envoyproxy/ratelimit takes ports, not addresses).
func freePort(t *testing.T) int {
	t.Helper()
	_, port, _ := strings.Cut(realtest.FreeAddr(t), "127.0.0.1:")
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// service is one running rate limit service and a client of it.
type service struct {
	name   string
	client rlsv3.RateLimitServiceClient
}

// start runs args (with env added to the environment) until the test
// ends, and connects to its gRPC port.
func start(t *testing.T, name string, env []string, grpcPort int, args ...string) *service {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(grpcPort)
	realtest.Start(t, name, "", env, addr, args...)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &service{name: name, client: rlsv3.NewRateLimitServiceClient(conn)}
}

// startRatelimit runs envoyproxy/ratelimit on redisAddr with the rules of
// runtime/ratelimit/config, its cache keys prefixed with prefix and
// extra settings (NAME=value) added to its environment.
func startRatelimit(t *testing.T, bin, runtime, redisAddr, prefix string, extra ...string) *service {
	t.Helper()
	grpcPort := freePort(t)
	env := append([]string{
		"HOST=127.0.0.1", "PORT=" + strconv.Itoa(freePort(t)),
		"DEBUG_HOST=127.0.0.1", "DEBUG_PORT=" + strconv.Itoa(freePort(t)),
		"GRPC_HOST=127.0.0.1", "GRPC_PORT=" + strconv.Itoa(grpcPort),
		"USE_STATSD=false", "LOG_LEVEL=error",
		"RUNTIME_ROOT=" + runtime, "RUNTIME_SUBDIRECTORY=ratelimit", "RUNTIME_APPDIRECTORY=config",
		"RUNTIME_WATCH_ROOT=false", "RUNTIME_IGNOREDOTFILES=true",
		"BACKEND_TYPE=redis", "REDIS_SOCKET_TYPE=tcp", "REDIS_URL=" + redisAddr,
		"CACHE_KEY_PREFIX=" + prefix,
	}, extra...)
	return start(t, "ratelimit "+prefix, env, grpcPort, bin)
}

// startSluice runs sluice serve on redisAddr with the rules of rulesDir,
// its Envoy listener open to loopback callers. Its store timeout is far
// above a loaded machine's answers (the 50 ms default is not): a call
// decided by the fallback would be compared with ratelimit's decision on
// Redis.
func startSluice(t *testing.T, bin, rulesDir, redisAddr string) *service {
	t.Helper()
	grpcPort := freePort(t)
	cfg := fmt.Sprintf(`listen: "127.0.0.1:%d"
admin:
  listen: "127.0.0.1:%d"
  loopback_scopes: [read, check]
store:
  type: redis
  redis: {addresses: [%q], timeout: 5s}
envoy:
  listen: "127.0.0.1:%d"
  rules: [%q]
  headers: draft-6
  limit_header: %s
  remaining_header: %s
  reset_header: %s
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
`, freePort(t), freePort(t), redisAddr, grpcPort, rulesDir, limitHeader, remainingHeader, resetHeader)
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return start(t, "sluice", nil, grpcPort, bin, "serve", "-config", file)
}

// ask sends req to s.
func (s *service) ask(t *testing.T, req *rlsv3.RateLimitRequest) *rlsv3.RateLimitResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := s.client.ShouldRateLimit(ctx, req)
	if err != nil {
		t.Fatalf("%s: ShouldRateLimit(%v): %v", s.name, req, err)
	}
	return resp
}
