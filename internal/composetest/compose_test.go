package composetest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentchat/agentchat/internal/devserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// composeFile is the part of docker-compose.yml these tests read.
type composeFile struct {
	Services map[string]service `json:"services"`
	Volumes  map[string]any     `json:"volumes"`
}

type service struct {
	Image       string                     `json:"image"`
	Build       *build                     `json:"build"`
	Environment map[string]string          `json:"environment"`
	DependsOn   json.RawMessage            `json:"depends_on"`
	Ports       []string                   `json:"ports"`
	Volumes     []string                   `json:"volumes"`
	Healthcheck map[string]json.RawMessage `json:"healthcheck"`
	Profiles    []string                   `json:"profiles"`
}

type build struct {
	Context    string `json:"context"`
	Dockerfile string `json:"dockerfile"`
}

// dependencies returns depends_on as service name → condition; the list form
// means service_started.
func (s service) dependencies(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	if len(s.DependsOn) == 0 {
		return out
	}
	var list []string
	if json.Unmarshal(s.DependsOn, &list) == nil {
		for _, name := range list {
			out[name] = "service_started"
		}
		return out
	}
	var long map[string]struct {
		Condition string `json:"condition"`
	}
	require.NoError(t, json.Unmarshal(s.DependsOn, &long), "depends_on")
	for name, d := range long {
		out[name] = d.Condition
	}
	return out
}

// repoRoot is the folder holding go.mod, above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "no go.mod above the test")
		dir = parent
	}
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yml"))
	require.NoError(t, err)
	var c composeFile
	// Not strict: these tests read only part of the Compose schema.
	require.NoError(t, yaml.Unmarshal(b, &c), "docker-compose.yml")
	return c
}

func TestComposeHasTheServices(t *testing.T) {
	c := loadCompose(t)
	for _, name := range []string{"postgresql", "temporal", "temporal-ui", "worker"} {
		require.Contains(t, c.Services, name)
		assert.Empty(t, c.Services[name].Profiles, "%s must start with a plain `up`", name)
	}

	pg := c.Services["postgresql"]
	assert.Regexp(t, `^postgres:16(\.\d+)?$`, pg.Image)
	assert.NotEmpty(t, pg.Healthcheck, "temporal waits for postgresql to be healthy")
	require.NotEmpty(t, pg.Volumes)
	named := strings.SplitN(pg.Volumes[0], ":", 2)[0]
	assert.Contains(t, c.Volumes, named, "postgresql keeps its data in a named volume")

	tp := c.Services["temporal"]
	assert.Regexp(t, `^temporalio/auto-setup:1\.29\.\d+$`, tp.Image, "pinned 1.29.x")
	assert.Equal(t, "postgres12", tp.Environment["DB"])
	assert.Equal(t, "postgresql", tp.Environment["POSTGRES_SEEDS"])
	assert.Equal(t, "service_healthy", tp.dependencies(t)["postgresql"])
	assert.Contains(t, tp.Ports, "7233:7233")

	ui := c.Services["temporal-ui"]
	assert.Regexp(t, `^temporalio/ui:\d+\.\d+\.\d+$`, ui.Image, "pinned")
	assert.Equal(t, "temporal:7233", ui.Environment["TEMPORAL_ADDRESS"])
	assert.Contains(t, ui.Ports, "8080:8080")
}

func TestComposeImagesArePinned(t *testing.T) {
	pinned := regexp.MustCompile(`^[a-z0-9./-]+:[A-Za-z0-9._-]+$`)
	for name, s := range loadCompose(t).Services {
		if s.Image == "" {
			require.NotNil(t, s.Build, "%s has neither image nor build", name)
			continue
		}
		assert.Regexp(t, pinned, s.Image, "%s: image needs a tag", name)
		assert.NotContains(t, s.Image, ":latest", "%s: pin a version, not latest", name)
	}
}

func TestWorkerBuildsFromDockerfile(t *testing.T) {
	root := repoRoot(t)
	w := loadCompose(t).Services["worker"]
	require.NotNil(t, w.Build, "worker is built from this repository")
	assert.Equal(t, ".", w.Build.Context)
	dockerfile := w.Build.Dockerfile
	if dockerfile == "" {
		dockerfile = "Dockerfile"
	}
	b, err := os.ReadFile(filepath.Join(root, w.Build.Context, dockerfile))
	require.NoError(t, err, "the Dockerfile the worker builds from exists")
	df := string(b)
	assert.Regexp(t, `(?m)^FROM golang:1\.26\S* AS build`, df, "Go 1.26 builder stage")
	assert.Contains(t, df, "go build -trimpath -ldflags=\"-s -w\" -o /out/worker ./worker")
	assert.Contains(t, df, "-o /out/starter ./starter")
	assert.Regexp(t, `(?m)^FROM (gcr\.io/distroless/static\S*|debian:bookworm-slim)$`, df, "small runtime stage")
	assert.Regexp(t, `(?m)^ENTRYPOINT \["/usr/local/bin/worker"\]$`, df)
	for _, dir := range []string{"worker", "starter"} {
		assert.DirExists(t, filepath.Join(root, dir), "the Dockerfile builds ./%s", dir)
	}

	env := w.Environment
	assert.Equal(t, "temporal:7233", env["TEMPORAL_ADDRESS"])
	assert.Equal(t, "default", env["TEMPORAL_NAMESPACE"])
	assert.Contains(t, w.dependencies(t), "temporal")
	assert.Contains(t, env, "AGENTCHAT_AGENTS")
}

// TestSecretsArePassedThrough: model settings come from the user's
// environment; the file never holds a value for them.
func TestSecretsArePassedThrough(t *testing.T) {
	c := loadCompose(t)
	for _, name := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"} {
		v, ok := c.Services["worker"].Environment[name]
		require.True(t, ok, "worker gets %s", name)
		assert.Regexp(t, `^\$\{`+name+`(:-)?\}$`, v, "%s must be passed through, with no literal default", name)
	}
	for svc, s := range c.Services {
		for k, v := range s.Environment {
			if strings.HasSuffix(k, "API_KEY") || strings.HasSuffix(k, "TOKEN") {
				assert.Regexp(t, `^\$\{`+k+`(:-)?\}$`, v, "%s: %s must not be given a literal value", svc, k)
			}
		}
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yml"))
	require.NoError(t, err)
	assert.NotRegexp(t, `sk-[A-Za-z0-9]{8,}`, string(raw), "no OpenAI key in the file")
}

// TestBindMountsExist: every host path the file mounts (by default) is in
// the repository, so `up` never creates empty folders in their place.
func TestBindMountsExist(t *testing.T) {
	root := repoRoot(t)
	defaulted := regexp.MustCompile(`^\$\{[A-Z0-9_]+:-([^}]*)\}$`)
	for svc, s := range loadCompose(t).Services {
		for _, v := range s.Volumes {
			host := strings.SplitN(v, ":", 2)[0]
			if m := defaulted.FindStringSubmatch(host); m != nil {
				host = m[1]
			}
			if !strings.HasPrefix(host, ".") {
				continue // named volume
			}
			assert.FileExists(t, filepath.Join(root, host, existsProbe(root, host)), "%s mounts %s", svc, host)
		}
	}
}

// existsProbe returns "" for a file and a file inside a folder (so that
// FileExists can check folders too, which git keeps only when not empty).
func existsProbe(root, host string) string {
	fi, err := os.Stat(filepath.Join(root, host))
	if err != nil || !fi.IsDir() {
		return ""
	}
	entries, err := os.ReadDir(filepath.Join(root, host))
	if err != nil || len(entries) == 0 {
		return "(empty folder)"
	}
	return entries[0].Name()
}

// TestDynamicConfigMatchesDevServer: the compose server and the dev server
// the tests use run with the same dynamic config.
func TestDynamicConfigMatchesDevServer(t *testing.T) {
	root := repoRoot(t)
	tp := loadCompose(t).Services["temporal"]
	var mounted string
	for _, v := range tp.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && strings.HasSuffix(parts[1], "/"+filepath.Base(tp.Environment["DYNAMIC_CONFIG_FILE_PATH"])) {
			mounted = parts[0]
		}
	}
	require.NotEmpty(t, mounted, "temporal mounts the file DYNAMIC_CONFIG_FILE_PATH names")
	b, err := os.ReadFile(filepath.Join(root, mounted))
	require.NoError(t, err)
	var file map[string][]struct {
		Value       any            `json:"value"`
		Constraints map[string]any `json:"constraints"`
	}
	require.NoError(t, yaml.UnmarshalStrict(b, &file))

	got := map[string]string{}
	for k, cvs := range file {
		require.Len(t, cvs, 1, "%s: one unconstrained value", k)
		assert.Empty(t, cvs[0].Constraints, k)
		v, err := json.Marshal(cvs[0].Value)
		require.NoError(t, err)
		got[k] = string(v)
	}
	assert.Equal(t, devserver.DefaultDynamicConfig, got)
}

func TestDockerignoreKeepsSources(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), ".dockerignore"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, needed := range []string{"go.mod", "go.sum", "*.go", "worker", "starter", "**/*.go", "*"} {
			assert.NotEqual(t, needed, line, ".dockerignore must not drop %s", needed)
		}
	}
}

// TestComposeConfigValid asks Compose itself to validate the file when it is
// installed (CI installs docker-compose; no Docker engine is needed).
func TestComposeConfigValid(t *testing.T) {
	bin, err := exec.LookPath("docker-compose")
	if err != nil {
		// .ci/run installs docker-compose and sets AGENTCHAT_REQUIRE_COMPOSE, so CI
		// never passes without this check; elsewhere the structural tests above stand.
		require.Empty(t, os.Getenv("AGENTCHAT_REQUIRE_COMPOSE"), "docker-compose is required here but not installed")
		t.Log("docker-compose not installed; structure checked by the other tests only")
		return
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-f", "docker-compose.yml", "config", "-q")
	cmd.Dir = repoRoot(t)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "docker-compose config -q:\n%s", out.String())
	assert.Empty(t, strings.TrimSpace(out.String()), "no warnings")
}

// The codec server decrypts for whoever has the token, over plain HTTP: Compose
// publishes it on the host's loopback only (the browser on that host reaches
// localhost:8081), with the token and the ring passed through.
func TestComposeCodecServerListensOnLoopbackOnly(t *testing.T) {
	c := loadCompose(t)
	require.Contains(t, c.Services, "codec-server")
	cs := c.Services["codec-server"]
	assert.Equal(t, []string{"encryption"}, cs.Profiles)
	assert.Equal(t, []string{"127.0.0.1:8081:8081"}, cs.Ports)
	assert.Contains(t, cs.Environment, "AGENTCHAT_CODEC_TOKEN")
	assert.Contains(t, cs.Environment, "AGENTCHAT_KEYS")
}
