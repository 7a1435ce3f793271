package deploy_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// builtImage is the image `make image` builds, saved by podman and
// unpacked.
type builtImage struct {
	// root is the image's filesystem, unpacked.
	root string
	// files are the regular files in it, slash-separated without the
	// leading slash, with their modes.
	files map[string]os.FileMode
	// links are its symbolic links and other non-regular, non-directory
	// entries.
	links  []string
	config imageConfig
}

// imageConfig is the part of an image's configuration the tests read.
type imageConfig struct {
	User         string
	ExposedPorts map[string]struct{}
	Entrypoint   []string
	Cmd          []string
	Labels       map[string]string
	Healthcheck  *struct {
		Test              []string
		Interval, Timeout time.Duration
		StartPeriod       time.Duration
		Retries           int
	}
}

// imageWork is the directory TestMain makes for the image and its storage.
var imageWork string

// buildImage runs `make image` with podman storage of its own under
// imageWork (vfs: no overlay mounts, so it works as root or rootless,
// inside a container or not), saves the image as a docker archive and
// unpacks it.
var buildImage = sync.OnceValues(func() (*builtImage, error) {
	podman, err := exec.LookPath("podman")
	if err != nil {
		return nil, fmt.Errorf("podman not found: run `make deps` (make test runs it), or apt-get install podman buildah")
	}
	store := []string{podman, "--root", filepath.Join(imageWork, "storage"), "--runroot", filepath.Join(imageWork, "run"),
		"--storage-driver", "vfs", "--events-backend", "none"}
	const tag = "localhost/sluice:deploy-test"
	build := exec.Command("make", "-C", "..", "image", "IMAGE="+tag, "PODMAN="+strings.Join(store, " "))
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("make image: %v\n%s", err, out)
	}
	archive := filepath.Join(imageWork, "image.tar")
	save := exec.Command(store[0], append(store[1:], "save", "--format", "docker-archive", "--output", archive, tag)...)
	if out, err := save.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("podman save: %v\n%s", err, out)
	}
	return unpackImage(archive, filepath.Join(imageWork, "rootfs"))
})

// theImage returns the built image, failing the test if it could not be
// built.
func theImage(t *testing.T) *builtImage {
	t.Helper()
	realtest.Podman(t)
	img, err := buildImage()
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sluice-deploy")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	imageWork = dir
	code := m.Run()
	removeImageWork(dir)
	os.Exit(code)
}

// removeImageWork removes dir. Rootless podman's storage holds files owned
// by the user namespace's other uids, which only `podman unshare` may
// remove.
func removeImageWork(dir string) {
	if podman, err := exec.LookPath("podman"); err == nil && os.Getuid() != 0 {
		exec.Command(podman, "unshare", "rm", "-rf", filepath.Join(dir, "storage"), filepath.Join(dir, "run")).Run()
	}
	os.RemoveAll(dir)
}

// unpackImage reads a docker archive (manifest.json naming the config and
// the layers, each a tar) and unpacks its layers in order into root.
func unpackImage(archive, root string) (*builtImage, error) {
	entries, err := readTar(archive)
	if err != nil {
		return nil, err
	}
	var manifest []struct {
		Config string
		Layers []string
	}
	if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		return nil, fmt.Errorf("%s: manifest.json: %v (%d images)", archive, err, len(manifest))
	}
	var cfg struct{ Config imageConfig }
	if err := json.Unmarshal(entries[manifest[0].Config], &cfg); err != nil {
		return nil, fmt.Errorf("%s: image config %s: %w", archive, manifest[0].Config, err)
	}
	img := &builtImage{root: root, files: map[string]os.FileMode{}, config: cfg.Config}
	for _, layer := range manifest[0].Layers {
		data, ok := entries[layer]
		if !ok {
			return nil, fmt.Errorf("%s: layer %s missing", archive, layer)
		}
		if err := img.unpackLayer(data); err != nil {
			return nil, fmt.Errorf("%s: layer %s: %w", archive, layer, err)
		}
	}
	return img, nil
}

// readTar returns the regular files of a tar archive by name.
func readTar(name string) (map[string][]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, h.Name, err)
			}
			files[path.Clean(h.Name)] = b
		}
	}
}

// unpackLayer writes one layer's regular files under img.root and records
// every entry. A whiteout (a file removed by a later layer) is an error:
// the image is built in one layer per COPY and removes nothing.
func (img *builtImage) unpackLayer(data []byte) error {
	var r io.Reader = bytes.NewReader(data)
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		r = gz
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if strings.HasPrefix(path.Base(name), ".wh.") {
			return fmt.Errorf("whiteout %s", name)
		}
		dst := filepath.Join(img.root, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			if err := os.WriteFile(dst, b, h.FileInfo().Mode().Perm()); err != nil {
				return err
			}
			img.files[name] = h.FileInfo().Mode()
		default:
			img.links = append(img.links, name)
		}
	}
}

// command is the image's entrypoint and command as the container runtime
// would run them, with the binary found in the unpacked image, the
// configuration at cfg instead of the mounted /etc/sluice/sluice.yaml, and
// the listeners on public and admin instead of :8080 and :9090. It fails
// the test if the command does not name those three flags.
func (img *builtImage) command(t *testing.T, cfg, public, admin string) []string {
	t.Helper()
	args := slices.Concat(img.config.Entrypoint, img.config.Cmd)
	if len(args) == 0 {
		t.Fatal("the image has no entrypoint or command")
	}
	args[0] = filepath.Join(img.root, filepath.FromSlash(args[0]))
	swap := map[string]string{"-config": cfg, "-listen": public, "-admin-listen": admin}
	for i := 1; i+1 < len(args); i++ {
		if v, ok := swap[args[i]]; ok {
			args[i+1] = v
			delete(swap, args[i])
		}
	}
	if len(swap) > 0 {
		t.Fatalf("the image's command %q lacks %v", img.config.Cmd, swap)
	}
	return args
}

// imageFlag is the value of flag in the image's command ("" if absent).
func (img *builtImage) imageFlag(flag string) string {
	for i, a := range img.config.Cmd {
		if a == flag && i+1 < len(img.config.Cmd) {
			return img.config.Cmd[i+1]
		}
	}
	return ""
}

// binary is the path of the sluice binary in the unpacked image.
func (img *builtImage) binary() string {
	return filepath.Join(img.root, filepath.FromSlash(img.config.Entrypoint[0]))
}

// TestImageHoldsTheStaticBinaryAndNothingElse: the image is the binary,
// passwd and group files naming its unprivileged user, and the CA bundle —
// no shell or any other program — and runs as that user with both listeners
// exposed and the configuration read from a mounted file.
func TestImageHoldsTheStaticBinaryAndNothingElse(t *testing.T) {
	t.Parallel()
	img := theImage(t)
	var names []string
	for name := range img.files {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"etc/group", "etc/passwd", "etc/ssl/certs/ca-certificates.crt", "usr/local/bin/sluice"}
	if !slices.Equal(names, want) || len(img.links) > 0 {
		t.Errorf("the image holds files %q and links or devices %q; want only %q", names, img.links, want)
	}
	if got := img.config.Entrypoint; !slices.Equal(got, []string{"/usr/local/bin/sluice"}) {
		t.Errorf("entrypoint %q, want the binary alone (there is no shell to run a command line)", got)
	}
	if m := img.files["usr/local/bin/sluice"]; m&0o005 != 0o005 {
		t.Errorf("the binary's mode is %v: the image's user must be able to read and run it", m)
	}

	f, err := elf.Open(img.binary())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a program interpreter: it is dynamically linked (build it with CGO_ENABLED=0)")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %q", libs)
	}

	user, _, _ := strings.Cut(img.config.User, ":")
	if user == "" || user == "0" || user == "root" {
		t.Errorf("the image runs as %q, want an unprivileged user", img.config.User)
	}
	passwd, err := os.ReadFile(filepath.Join(img.root, "etc", "passwd"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(strings.Split(string(passwd), "\n"), func(l string) bool {
		f := strings.Split(l, ":")
		return len(f) == 7 && f[2] == user
	}) {
		t.Errorf("/etc/passwd has no entry of uid %s:\n%s", user, passwd)
	}

	ports := slices.Sorted(func(yield func(string) bool) {
		for p := range img.config.ExposedPorts {
			if !yield(p) {
				return
			}
		}
	})
	if !slices.Equal(ports, []string{"8080/tcp", "9090/tcp"}) {
		t.Errorf("exposed ports %q, want the public listener's 8080/tcp and the admin listener's 9090/tcp", ports)
	}
	for flag, want := range map[string]string{"-config": "/etc/sluice/sluice.yaml", "-listen": ":8080", "-admin-listen": ":9090"} {
		if got := img.imageFlag(flag); got != want {
			t.Errorf("the image's command has %s %q, want %q (command %q)", flag, got, want, img.config.Cmd)
		}
	}
}
