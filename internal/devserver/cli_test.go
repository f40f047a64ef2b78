package devserver

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFindCLIHonoursEnv(t *testing.T) {
	want := fakeCLI(t, 0o755)
	t.Setenv(CLIEnv, want)
	got, err := FindCLI()
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func TestFindCLIRejectsBadEnvPath(t *testing.T) {
	cases := map[string]string{
		"not executable": fakeCLI(t, 0o644),
		"no such file":   filepath.Join(t.TempDir(), "missing"),
		"a folder":       t.TempDir(),
	}
	for name, path := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(CLIEnv, path)
			_, err := FindCLI()
			require.Error(t, err)
			assert.Contains(t, err.Error(), CLIEnv, "the error names the variable")
			assert.Contains(t, err.Error(), path, "the error names the path")
			assert.NotErrorIs(t, err, ErrCLINotFound, "a bad explicit path is not 'not found'")

			// EnsureCLI must not build over an explicit, broken choice.
			var progress bytes.Buffer
			_, err = EnsureCLI(t.Context(), &progress)
			require.Error(t, err)
			assert.Empty(t, progress.String(), "no build was started")
		})
	}
	t.Run("message for a non-executable file", func(t *testing.T) {
		t.Setenv(CLIEnv, cases["not executable"])
		_, err := FindCLI()
		assert.ErrorContains(t, err, "not executable")
	})
}

func TestFindCLISearchesPathThenGoBin(t *testing.T) {
	t.Setenv(CLIEnv, "")
	dir := filepath.Dir(fakeCLI(t, 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	got, err := FindCLI()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "temporal"), got, "PATH comes before the Go bin folder")

	// With PATH holding only the go command, the Go bin folder is searched.
	goDir := t.TempDir()
	goPath, err := exec.LookPath("go")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(goPath, filepath.Join(goDir, "go")))
	gobin := filepath.Dir(fakeCLI(t, 0o755))
	t.Setenv("GOBIN", gobin)
	t.Setenv("PATH", goDir)
	got, err = FindCLI()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(gobin, "temporal"), got)

	// Nothing anywhere: ErrCLINotFound.
	t.Setenv("GOBIN", t.TempDir())
	_, err = FindCLI()
	assert.ErrorIs(t, err, ErrCLINotFound)
}

// TestDefaultDynamicConfigKeysKnown checks that every default key is a
// setting the embedded server registers: the server silently ignores unknown
// keys, so a typo would otherwise go unnoticed. The registered key names are
// string constants in the CLI binary.
func TestDefaultDynamicConfigKeysKnown(t *testing.T) {
	cli, err := EnsureCLI(testContext(t), t.Output())
	require.NoError(t, err)
	keys := make([]string, 0, len(DefaultDynamicConfig))
	for k := range DefaultDynamicConfig {
		keys = append(keys, k)
	}
	const control = "frontend.enableTeleportationOfWorkflows"
	found := binaryContains(t, cli, append(keys, control))
	for _, k := range keys {
		assert.True(t, found[k], "server does not know dynamic config key %q", k)
	}
	assert.False(t, found[control], "the scan must not find a made-up key")
}

// binaryContains reports which of needles occur in the file at path.
func binaryContains(t *testing.T, path string, needles []string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	overlap := 0
	for _, n := range needles {
		overlap = max(overlap, len(n))
	}
	found := map[string]bool{}
	r := bufio.NewReaderSize(f, 1<<20)
	chunk := make([]byte, 0, 1<<20+overlap)
	buf := make([]byte, 1<<20)
	for {
		n, err := io.ReadFull(r, buf)
		chunk = append(chunk, buf[:n]...)
		for _, needle := range needles {
			if !found[needle] && bytes.Contains(chunk, []byte(needle)) {
				found[needle] = true
			}
		}
		if err != nil {
			require.True(t, err == io.EOF || err == io.ErrUnexpectedEOF, "read %s: %v", path, err)
			return found
		}
		keep := chunk[max(0, len(chunk)-overlap):]
		chunk = append(chunk[:0], keep...)
	}
}

func TestDefaultDynamicConfigValuesAreJSON(t *testing.T) {
	for k, v := range DefaultDynamicConfig {
		assert.True(t, slices.Contains([]string{"true", "false"}, v) || isDigits(v),
			"%s=%s: the CLI reads values as JSON; this project only sets booleans and integers", k, v)
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// TestEnsureCLIReportsBuildFailure runs the build path with the module proxy
// off and an empty module cache, so `go install` fails at once: the progress
// line is written and the error quotes the go command.
func TestEnsureCLIReportsBuildFailure(t *testing.T) {
	goPath, err := exec.LookPath("go")
	require.NoError(t, err)
	onlyGo := t.TempDir()
	require.NoError(t, os.Symlink(goPath, filepath.Join(onlyGo, "go")))
	t.Setenv(CLIEnv, "")
	t.Setenv("PATH", onlyGo)
	t.Setenv("GOBIN", t.TempDir())
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOTOOLCHAIN", "local")

	var progress bytes.Buffer
	_, err = EnsureCLI(testContext(t), &progress)
	require.Error(t, err)
	assert.Contains(t, progress.String(),
		"agentchat: building the Temporal CLI v1.5.1 from the Go module proxy (first time only, about 5 minutes on 2 cores)...")
	assert.ErrorContains(t, err, "go install "+CLIModule+"@"+CLIVersion+" failed")
	assert.ErrorContains(t, err, "GOPROXY=off", "the go command's own words are quoted")
}
