// Package integration holds agentchat's integration tests: black-box tests of the
// public API (package integration_test) on a real Temporal dev server, with real
// worker processes where a test kills or restarts one, and the offline
// OpenAI-compatible model over HTTP. Nothing is mocked except the model. The package
// itself has no code.
//
// One file per concern, named after what it tests: turns_test.go (a chat's turns),
// agentkinds_test.go (the responses and assistant kinds and their channels),
// toolcalls_test.go, approvals_test.go, strategies_test.go, reducers_test.go,
// transfer_test.go and migrate_*_test.go (export, import, migration), crash_test.go
// and recovery_test.go (killed workers, restarted servers), rollingdeploy*_test.go,
// sizes_test.go and length_test.go (limits), growth_test.go (history growth),
// bigchat_test.go (a 10,000-message chat, and its benchmark), store_test.go (the
// message stores), replay_test.go (the committed histories in testdata/replay, beside
// it), and so on. helpers_test.go holds what several files share.
//
// The offline model says how many messages it received ("received N messages", the
// instructions counting as one system message), so a test that asserts N asserts what
// reached the model.
//
// Run them from the module root:
//
//	go test -count=1 ./integration                        # all, about 7 minutes on 2 cores
//	go test -count=1 -run TestReplay ./integration        # the replay test alone, no server
//	go test -run='^$' -bench=ExportImport10k -benchtime=3x ./integration
//
// internal/testenv starts a dev server on a free port (or uses TEMPORAL_ADDRESS when
// set) and a PostgreSQL server for the postgres store's tests (or uses
// AGENTCHAT_TEST_POSTGRES). testdata/replay/README.md says how the histories are
// captured, and why a failing replay must never be fixed by recapturing them.
package integration
