package integration_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// Signed documents: export signs over the digest, import and migration verify, and
// an unsigned or forged document is refused where a signature is required.

func newSigner(t *testing.T, id string) *envelope.Signer {
	t.Helper()
	f, _, err := envelope.GenerateSigner(id)
	require.NoError(t, err)
	s, err := envelope.NewSigner(f)
	require.NoError(t, err)
	return s
}

func TestSignedExportImportAndRefusals(t *testing.T) {
	signer := newSigner(t, "s1")
	docs := envelope.Options{Signer: signer, RequireSignature: true}
	h := testenv.New(t, testenv.Options{Keys: testRing(t, "k1"), Documents: docs})
	id := testenv.ChatID(t)
	seedThread(t, h, id)
	doc, digest, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	signed, err := h.Client.SealDocument(doc, digest)
	require.NoError(t, err)
	var e envelope.Envelope
	require.NoError(t, json.Unmarshal(signed, &e))
	require.NotNil(t, e.Signature)
	assert.Equal(t, "s1", e.Signature.KeyID)
	assert.Equal(t, digest, e.Signature.Digest)

	_, err = h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id + "-signed", Document: signed})
	require.NoError(t, err, "a signed document imports")

	forged := newSigner(t, "s1") // the same key id, another key
	byForger, err := envelope.Seal(doc, digest, envelope.Options{Ring: h.Client.Keys(), Signer: forged})
	require.NoError(t, err)
	refusals := map[string][]byte{"unsigned": doc, "forged": byForger}
	for name, b := range refusals {
		target := id + "-" + name
		_, err := h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: target, Document: b})
		require.Error(t, err, name)
		if name == "unsigned" {
			assert.ErrorIs(t, err, envelope.ErrUnsigned)
		} else {
			assert.ErrorIs(t, err, envelope.ErrForged)
		}
		_, derr := h.Temporal.DescribeWorkflowExecution(ctxFor(t), target, "")
		var nf *serviceerror.NotFound
		assert.ErrorAs(t, derr, &nf, "%s: nothing was created", name)
	}

	// The worker verifies too: a raw client that skips the client's checks.
	target := id + "-raw"
	in := wire.AgentChatInput{Version: wire.InputVersion, Participants: []string{"helper"},
		Restore: &wire.DocumentSource{Document: json.RawMessage(doc)}}
	run, err := h.Temporal.ExecuteWorkflow(ctxFor(t), client.StartWorkflowOptions{ID: target, TaskQueue: h.TaskQueue}, wire.WorkflowType, in)
	require.NoError(t, err)
	err = run.Get(ctxFor(t), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not signed")
	assert.Equal(t, wire.ErrTypeInvalidDocument, appType(err))
}

func TestMigrationBetweenClustersSignsAndVerifiesByItself(t *testing.T) {
	second := testenv.SecondCluster(t)
	ring := testRing(t, "k1")
	signer := newSigner(t, "s-east-west")
	docs := envelope.Options{Signer: signer, RequireSignature: true}
	a := testenv.New(t, testenv.Options{Keys: ring, Documents: docs, Clusters: map[string]string{"east": second}})
	b := testenv.New(t, testenv.Options{Keys: ring, Documents: docs, Address: second, TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	seedThread(t, a, id)
	res, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToCluster: "east"})
	require.NoError(t, err)
	assert.Equal(t, "east", res.Target.Cluster)
	assertRemembers(t, b, id, 4, "Hello, how are you?", "My name is Alice")
}

func TestMigrationToATargetThatRequiresASignatureFailsWhenTheSourceDoesNotSign(t *testing.T) {
	second := testenv.SecondCluster(t)
	ring := testRing(t, "k1")
	a := testenv.New(t, testenv.Options{Keys: ring, Clusters: map[string]string{"east": second}})
	testenv.New(t, testenv.Options{Keys: ring, Documents: envelope.Options{RequireSignature: true},
		Address: second, TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	seedThread(t, a, id)
	_, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToCluster: "east"})
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeMigrationFailed, appType(err))
	assert.True(t, strings.Contains(err.Error(), "not signed"), err.Error())
	res := send(t, a, id, "m3", "Still here?")
	assert.NotEmpty(t, res.Messages, "the chat goes on where it was")
}
