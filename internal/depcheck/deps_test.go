package depcheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/agentchat/agentchat"

// rule is a package, or a tree of packages, that a package must not reach.
type rule struct {
	path string // an import path, or "p/..." for p and every package under it
	why  string
}

func (r rule) matches(pkg string) bool {
	if tree, ok := strings.CutSuffix(r.path, "/..."); ok {
		return pkg == tree || strings.HasPrefix(pkg, tree+"/")
	}
	return pkg == r.path
}

// clientForbidden is what a service that imports only the client package must not link
// (issue 11: "The client package imports no worker-side code"). go.yaml.in/yaml/v3 is
// not here: the Temporal SDK's client links it (through testify).
var clientForbidden = []rule{
	{"github.com/sashabaranov/go-openai/...", "the model client"},
	{"modernc.org/sqlite/...", "the SQLite driver"},
	{"github.com/jackc/pgx/...", "the PostgreSQL driver"},
	{module + "/offline/...", "the offline model server"},
	{module + "/activities/...", "the activities"},
	{module + "/hosting/...", "the worker's hosting code"},
	{module + "/msgstore/sqlite", "the SQLite message store"},
	{module + "/msgstore/postgres", "the PostgreSQL message store"},
	{module + "/msgstore/storeurl", "the message stores by URL"},
	{"sigs.k8s.io/yaml/...", "the config file's YAML"},
	{"gopkg.in/yaml.v2", "YAML"},
	{"gopkg.in/yaml.v3", "YAML"},
}

// workflowForbidden is what the workflow code's own packages (workflows and the
// packages of this module it imports) must not import (STYLE.md 1: workflows never touch
// the network, the clock or the file system).
var workflowForbidden = []rule{
	{"os", "the file system and environment"},
	{"net", "the network"},
	{"net/http", "the network"},
	{"io/fs", "the file system"},
	{"path/filepath", "the file system's paths"},
	{"database/sql", "a database"},
	{"github.com/sashabaranov/go-openai/...", "the model client"},
}

// graph is the import graph `go list -deps` prints for pkg: every package pkg links,
// with the packages each imports directly.
type graph struct {
	root    string
	order   []string            // go list's order: every package after its imports
	imports map[string][]string // direct imports
}

func load(t *testing.T, pkg string) graph {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("these tests read the import graph with the go command, which is not in PATH: %v", err)
	}
	cmd := exec.Command(goCmd, "list", "-deps", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}", pkg)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr)
	}
	g := graph{imports: map[string][]string{}}
	for line := range strings.Lines(string(out)) {
		path, imps, _ := strings.Cut(strings.TrimSpace(line), "|")
		if path == "" {
			continue
		}
		g.order = append(g.order, path)
		g.imports[path] = nil
		if imps != "" {
			g.imports[path] = strings.Split(imps, ",")
		}
	}
	if len(g.order) == 0 {
		t.Fatalf("go list -deps %s listed no packages", pkg)
	}
	g.root = g.order[len(g.order)-1] // -deps lists the named package last
	return g
}

// chain returns the shortest import chain from g.root to pkg, "a → b → pkg".
func (g graph) chain(pkg string) string {
	prev := map[string]string{g.root: ""}
	queue := []string{g.root}
	for len(queue) > 0 && prev[pkg] == "" && pkg != g.root {
		p := queue[0]
		queue = queue[1:]
		for _, q := range g.imports[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	var path []string
	for p := pkg; p != ""; p = prev[p] {
		path = append(path, strings.TrimPrefix(p, module+"/"))
	}
	slices.Reverse(path)
	return strings.Join(path, " → ")
}

// TestClientPackageLinksNoWorkerCode: a service that imports only the module root (the
// client) links no model client, no database driver, no offline server, no activities
// and no config file code. Each forbidden package found is named with the import chain
// that reaches it.
func TestClientPackageLinksNoWorkerCode(t *testing.T) {
	g := load(t, module)
	if g.root != module {
		t.Fatalf("go list -deps %s ended with %q", module, g.root)
	}
	if _, ok := g.imports["go.temporal.io/sdk/client"]; !ok {
		t.Fatalf("the client package does not link go.temporal.io/sdk/client: the graph was not read (%d packages)", len(g.order))
	}
	for _, r := range clientForbidden {
		var found []string
		for _, p := range g.order {
			if r.matches(p) {
				found = append(found, p)
			}
		}
		if len(found) > 0 {
			chain := g.chain(found[0])
			for _, p := range found[1:] {
				if c := g.chain(p); strings.Count(c, "→") < strings.Count(chain, "→") {
					chain = c
				}
			}
			t.Errorf("the client package links %s (%s): %s\n\tthrough %s",
				r.path, r.why, strings.Join(found, ", "), chain)
		}
	}
}

// TestWorkflowCodeImportsNoConfigFileOrNetworkCode: the workflows package and every
// package of this module it links import no file system, network, database, YAML or
// model client package (other modules, such as the Temporal SDK, are not inspected).
// Each offending package is named with what it imports and how workflows reaches it.
func TestWorkflowCodeImportsNoConfigFileOrNetworkCode(t *testing.T) {
	g := load(t, module+"/workflows")
	own := 0
	for _, p := range g.order {
		if p != module && !strings.HasPrefix(p, module+"/") {
			continue
		}
		own++
		var bad []string
		for _, imp := range g.imports[p] {
			for _, r := range workflowForbidden {
				if r.matches(imp) {
					bad = append(bad, imp+" ("+r.why+")")
				}
			}
			if strings.Contains(imp, "yaml") {
				bad = append(bad, imp+" (YAML: the config file)")
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s imports %s; workflow code must not reach config, file or network code\n\tthrough %s",
				p, strings.Join(bad, ", "), g.chain(p))
		}
	}
	if own < 2 {
		t.Fatalf("workflows links %d packages of this module; the graph was not read", own)
	}
}

// TestRulesMatchTreesAndExactPaths checks the checker: a "p/..." rule matches p and the
// packages under it, not a sibling sharing the prefix; a plain rule matches only its
// path; chain finds the shortest import chain.
func TestRulesMatchTreesAndExactPaths(t *testing.T) {
	pgx := rule{path: "github.com/jackc/pgx/..."}
	for pkg, want := range map[string]bool{
		"github.com/jackc/pgx": true, "github.com/jackc/pgx/v5/pgxpool": true,
		"github.com/jackc/pgxutil": false, "github.com/jackc/pgpassfile": false,
	} {
		if pgx.matches(pkg) != want {
			t.Errorf("%s matches %s: got %v, want %v", pgx.path, pkg, !want, want)
		}
	}
	net := rule{path: "net"}
	if !net.matches("net") || net.matches("net/url") || net.matches("net/http") {
		t.Errorf("the rule net must match net only")
	}
	g := graph{root: "r", imports: map[string][]string{
		"r": {"a", "b"}, "a": {"c"}, "b": {"d"}, "c": {"d"}, "d": {"x"}, "x": nil,
	}}
	if got := g.chain("x"); got != "r → b → d → x" {
		t.Errorf("chain to x: got %q, want %q", got, "r → b → d → x")
	}
	if got := g.chain("r"); got != "r" {
		t.Errorf("chain to the root: got %q", got)
	}
}
