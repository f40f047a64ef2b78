package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/codec"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/internal/pollers"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/wire"
)

// Cluster is a Temporal cluster the worker can reach: a client connected to it and the
// namespace that client is bound to. Other namespaces of the cluster share its connection.
type Cluster struct {
	Client    client.Client
	Namespace string
	// Address is the cluster's frontend host:port, so a migration may name the
	// cluster by address.
	Address string
}

// clients hands out Temporal clients by cluster name and namespace.
type clients struct {
	self     string             // this worker's cluster name
	clusters map[string]Cluster // by name, this worker's own included
	mu       sync.Mutex
	byNS     map[[2]string]client.Client
	keys     *keyring.Ring // the codec of the clients made here
}

// newClients returns the clients of t's clusters, this worker's own (t.Temporal, when
// set) under t.ClusterName; keys is the codec of the clients it makes for other
// namespaces.
func newClients(t TransferConfig, keys *keyring.Ring) *clients {
	c := &clients{self: t.ClusterName, clusters: map[string]Cluster{}, byNS: map[[2]string]client.Client{}, keys: keys}
	for name, cl := range t.Clusters {
		c.clusters[name] = cl
	}
	if t.Temporal != nil {
		c.clusters[t.ClusterName] = Cluster{Client: t.Temporal, Namespace: t.Namespace}
	}
	return c
}

// at returns a client for a chat location: by cluster name, else by address, else
// this worker's cluster.
func (c *clients) at(l wire.ChatLocation) (client.Client, error) {
	if l.Cluster == "" && l.Address != "" {
		for name, cl := range c.clusters {
			if cl.Address == l.Address {
				return c.get(name, l.Namespace)
			}
		}
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"no cluster at %s is configured on the worker (worker --cluster NAME=%s)", l.Address, l.Address),
			wire.ErrTypeUnknownCluster, nil)
	}
	return c.get(l.Cluster, l.Namespace)
}

// get returns a client for namespace ns of the named cluster ("" = this worker's).
func (c *clients) get(cluster, ns string) (client.Client, error) {
	if cluster == "" {
		cluster = c.self
	}
	cl, ok := c.clusters[cluster]
	if !ok || cl.Client == nil {
		if cluster == c.self {
			return nil, errors.New("activities: Config.Transfer.Temporal is required for export and migration")
		}
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"unknown cluster %q: configure it on the worker (worker --cluster %s=host:port)", cluster, cluster),
			wire.ErrTypeUnknownCluster, nil)
	}
	if ns == "" || ns == cl.Namespace {
		return cl.Client, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := [2]string{cluster, ns}
	if tc, ok := c.byNS[key]; ok {
		return tc, nil
	}
	co := client.Options{Namespace: ns}
	codec.Apply(&co, c.keys)
	tc, err := client.NewClientFromExisting(cl.Client, co)
	if err != nil {
		return nil, fmt.Errorf("client for namespace %q of cluster %q: %w", ns, cluster, err)
	}
	c.byNS[key] = tc
	return tc, nil
}

// temporal returns a client of this worker's cluster for namespace ns.
func (c *clients) temporal(ns string) (client.Client, error) { return c.get("", ns) }

// selfClient returns the worker's own Temporal client, or nil.
func (c *clients) selfClient() client.Client { return c.clusters[c.self].Client }

// transfers moves chats between namespaces and clusters: export, import and
// migration. It owns the clusters' clients, this worker's cluster name, the document
// store and how documents are sealed (Documents.Ring defaulted to Config.Keys), and
// Config.Keys to read a migration target's memo; it reads and writes message bodies
// and pages through stores.
type transfers struct {
	clients     *clients
	clusterName string
	store       DocumentStore
	docs        envelope.Options
	keys        *keyring.Ring
	stores      *stores
}

// StartMigrationTarget implements Activities.StartMigrationTarget.
func (tr *transfers) StartMigrationTarget(ctx context.Context, in wire.StartTargetInput) (wire.StartTargetResult, error) {
	tc, err := tr.clients.at(in.Target)
	if err != nil {
		return wire.StartTargetResult{}, err
	}
	defer heartbeatWhileWaiting(ctx)()
	if err := targetReady(ctx, tc, in); err != nil {
		return wire.StartTargetResult{}, err
	}
	op := tc.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: in.Target.ChatID, TaskQueue: in.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		Memo:                     map[string]any{wire.MigrationMemo: in.ExpectedDigest},
	}, wire.WorkflowType, in.Input)
	h, err := tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: wire.DescribeUpdate,
			WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	var res wire.StartTargetResult
	if err == nil {
		err = h.Get(ctx, &res.State)
	}
	if err != nil {
		if failed := targetFailed(ctx, tc, in.Target, err); failed != nil {
			return res, failed
		}
		return res, fmt.Errorf("start target %q in namespace %q: %w", in.Target.ChatID, in.Target.Namespace, err)
	}
	if res.State.RestoredDigest != in.ExpectedDigest {
		return res, wrongTarget(ctx, tc, tr.keys, in, res.State.RestoredDigest)
	}
	run, err := op.Get(ctx)
	if err != nil {
		return res, err
	}
	res.RunID = run.GetRunID()
	return res, nil
}

// wrongTarget is the error for a target that answered with digest got, not the one
// exported. A target that this migration started (its MigrationMemo is the expected
// digest) did not become the chat: it is terminated, and the migration abandoned
// (MigrationFailed). Any other is a chat that held the id before: left alone
// (ChatNotEmpty). An error to look or terminate is returned as is, for a retry.
func wrongTarget(ctx context.Context, tc client.Client, keys *keyring.Ring, in wire.StartTargetInput, got string) error {
	d, err := tc.DescribeWorkflowExecution(ctx, in.Target.ChatID, "")
	if err != nil {
		return fmt.Errorf("describe target %q in namespace %q: %w", in.Target.ChatID, in.Target.Namespace, err)
	}
	var started string
	if p := d.GetWorkflowExecutionInfo().GetMemo().GetFields()[wire.MigrationMemo]; p != nil {
		_ = codec.DataConverter(keys).FromPayload(p, &started)
	}
	if started != in.ExpectedDigest {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"target chat %q in namespace %q already exists and holds another chat (digest %q, want %q); choose another target chat id",
			in.Target.ChatID, in.Target.Namespace, got, in.ExpectedDigest), wire.ErrTypeNotEmpty, nil)
	}
	msg := fmt.Sprintf("target chat %q in namespace %q, started by this migration, holds digest %q, not the exported %q",
		in.Target.ChatID, in.Target.Namespace, got, in.ExpectedDigest)
	if err := tc.TerminateWorkflow(ctx, in.Target.ChatID, "", "agentchat: "+msg); err != nil {
		var nf *serviceerror.NotFound
		if !errors.As(err, &nf) { // NotFound: it has closed already
			return fmt.Errorf("terminate target %q in namespace %q: %w", in.Target.ChatID, in.Target.Namespace, err)
		}
	}
	return temporal.NewNonRetryableApplicationError(msg+"; it was terminated, so the chat lives only at its source",
		wire.ErrTypeMigrationFailed, nil)
}

// targetFailed returns a non-retryable MigrationFailed error when the target answered
// err because it could not become the chat (its restore failed, and its workflow
// closed): no live chat is left there, so the migration is abandoned rather than
// retried, which would only start failing target runs again. Otherwise nil.
func targetFailed(ctx context.Context, tc client.Client, target wire.ChatLocation, err error) error {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return nil
	}
	d, derr := tc.DescribeWorkflowExecution(ctx, target.ChatID, "")
	if derr != nil || d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("target chat %q in namespace %q could not restore the document: %s",
		target.ChatID, target.Namespace, app.Message()), wire.ErrTypeMigrationFailed, nil)
}

// TargetWorkerWait is how long a migration waits for a worker to poll the target's
// task queue before it gives up. A server that has just restarted lists no pollers
// until the workers' next polls reach it: the SDK retries a failed poll with backoff
// of up to 10 s, and after three restarts in a row pollers were listed 1.3 s, 5.3 s and
// 8.5 s after the server was back. So one look is not enough.
const TargetWorkerWait = 20 * time.Second

// targetReady fails the migration, before anything is started, when the target
// namespace does not exist or no worker has polled the task queue there within
// TargetWorkerWait: a target started then would wait for ever, and the chat with it.
// A missing namespace is a non-retryable error; any other failure to ask, an error
// the activity retries.
// What the errors of a migration's target check say, for a tool that adds its own hint
// (the CLI's migrate): the errors name no command-line tool, since clients in any
// language read them.
const (
	// TargetNamespaceMissing is in the error of a migration to a namespace the target
	// cluster does not have.
	TargetNamespaceMissing = "does not exist on the target cluster"
	// TargetUnserved is in the error of a migration to a namespace and task queue no
	// worker polls.
	TargetUnserved = "no worker serves task queue"
)

func targetReady(ctx context.Context, tc client.Client, in wire.StartTargetInput) error {
	if _, err := tc.DescribeWorkflowExecution(ctx, in.Target.ChatID, ""); err == nil {
		return nil // a previous attempt started it: let it finish
	}
	served, err := pollers.Await(ctx, tc, in.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW, TargetWorkerWait)
	var nf *serviceerror.NamespaceNotFound
	switch {
	case errors.As(err, &nf):
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"namespace %q "+TargetNamespaceMissing+"; register it there (Temporal's RegisterNamespace) and run a worker for it",
			in.Target.Namespace), wire.ErrTypeInvalidInput, nil)
	case err != nil:
		return fmt.Errorf("namespace %q: %w", in.Target.Namespace, err)
	case !served:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			TargetUnserved+" %q in namespace %q (none polled it within %s); start a worker for that namespace and task queue, then migrate again",
			in.TaskQueue, in.Target.Namespace, TargetWorkerWait), wire.ErrTypeInvalidInput, nil)
	}
	return nil
}

// ForwardTurns implements Activities.ForwardTurns.
func (tr *transfers) ForwardTurns(ctx context.Context, in wire.ForwardTurnsInput) error {
	tc, err := tr.clients.at(in.Target)
	if err != nil {
		return err
	}
	for _, t := range in.Turns {
		if err := tc.SignalWorkflow(ctx, in.Target.ChatID, "", wire.UserMessageSignal, t); err != nil {
			return fmt.Errorf("forward turn %q to %q: %w", t.MessageID, in.Target.ChatID, err)
		}
	}
	return nil
}
