package activities_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/wire"
)

// recorder is an activities.ActivityRegistry that counts the names registered.
type recorder map[string]int

func (r recorder) RegisterActivityWithOptions(_ any, o activity.RegisterOptions) { r[o.Name]++ }

// activityNames reads the wire names of the activities from wire/names.go: the
// values of its constants named *Activity.
func activityNames(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "wire", "names.go"), nil, 0)
	require.NoError(t, err)
	names := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, id := range vs.Names {
			if !strings.HasSuffix(id.Name, "Activity") {
				continue
			}
			lit, ok := vs.Values[i].(*ast.BasicLit)
			require.True(t, ok, "%s is not a string literal", id.Name)
			v, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			names[id.Name] = v
		}
		return true
	})
	require.NotEmpty(t, names)
	return names
}

func TestRegisterRegistersEveryActivityNameOnce(t *testing.T) {
	acts, _ := setup(t, true)
	rec := recorder{}
	acts.Register(rec)
	want := activityNames(t)
	for constant, name := range want {
		assert.Equal(t, 1, rec[name], "%s (%q) registrations", constant, name)
	}
	assert.Len(t, rec, len(want), "registered %v; names.go has %v", rec, want)
}

func TestRegisterServesATestEnvironment(t *testing.T) {
	acts, _ := setup(t, true)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	acts.Register(env) // the registration the worker uses, on a test environment
	v, err := env.ExecuteActivity(activityNames(t)["ResolveParticipantsActivity"], wire.ResolveInput{AgentIDs: []string{"helper"}})
	require.NoError(t, err)
	var res wire.ResolveResult
	require.NoError(t, v.Get(&res))
	require.Len(t, res.Participants, 1)
	assert.Equal(t, "helper", res.Participants[0].ID)
}

var _ activities.ActivityRegistry = recorder{}
