package workflows

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// testChange is a change id that only this test asks for.
const testChange = "test-change"

// changedIn runs a workflow that asks changed(testChange) and returns its answer; with
// old set, the run replays a history recorded before the change (no marker).
func changedIn(t *testing.T, old bool) bool {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	if old {
		env.OnGetVersion(testChange, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	}
	env.ExecuteWorkflow(func(ctx workflow.Context) (bool, error) { return changed(ctx, testChange), nil })
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var got bool
	require.NoError(t, env.GetWorkflowResult(&got))
	return got
}

func TestChangedTakesTheNewBehaviourUnlessTheHistoryPredatesIt(t *testing.T) {
	assert.True(t, changedIn(t, false), "a new run takes the change")
	assert.False(t, changedIn(t, true), "a history without the change's marker keeps the old behaviour")
}

// versionsFile is the one file that declares the change ids and calls GetVersion.
const versionsFile = "versions.go"

// changeName is the naming scheme of a change id: the constant changeXxx holds the
// kebab-case of Xxx ("changeQuotaCheck" = "quota-check").
var changeName = regexp.MustCompile(`^change[A-Z][A-Za-z0-9]*$`)

func kebab(camel string) string {
	var b strings.Builder
	for i, r := range camel {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestChangeIDsLiveInOneFile reads the package's sources: every change id is a constant
// of versions.go named by the scheme, workflow.GetVersion is called there only, and
// every call of changed names one of those constants.
func TestChangeIDsLiveInOneFile(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	ids := map[string]bool{}
	type call struct {
		pos token.Position
		arg ast.Expr
	}
	var calls []call
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		if name == versionsFile {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, spec := range g.Specs {
					for i, n := range spec.(*ast.ValueSpec).Names {
						lit, ok := spec.(*ast.ValueSpec).Values[i].(*ast.BasicLit)
						require.True(t, ok && lit.Kind == token.STRING, "%s: change id %s is a string literal", name, n.Name)
						v, _ := strconv.Unquote(lit.Value)
						assert.Regexp(t, changeName, n.Name, "%s: change id constant %s", name, n.Name)
						assert.Equal(t, kebab(strings.TrimPrefix(n.Name, "change")), v, "%s: the value of %s", name, n.Name)
						ids[n.Name] = true
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fn := c.Fun.(type) {
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); ok && x.Name == "workflow" && fn.Sel.Name == "GetVersion" && name != versionsFile {
					t.Errorf("%s: workflow.GetVersion outside %s; call changed with an id of %s", fset.Position(c.Pos()), versionsFile, versionsFile)
				}
			case *ast.Ident:
				if fn.Name == "changed" && len(c.Args) == 2 {
					calls = append(calls, call{fset.Position(c.Pos()), c.Args[1]})
				}
			}
			return true
		})
	}
	for _, c := range calls {
		id, ok := c.arg.(*ast.Ident)
		if !ok || !ids[id.Name] {
			t.Errorf("%s: changed is asked for a change id that is not a constant of %s", c.pos, versionsFile)
		}
	}
}
