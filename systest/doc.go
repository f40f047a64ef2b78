// Package systest is agentchat's randomized system test: seeded, reproducible
// scenarios that mix turns, signals, tool rounds, parallel calls, approvals, message
// sizes near the limits, exports, imports, migrations, continue-as-new, worker kills
// and worker restarts with other agent configs, on a real Temporal dev server with real
// worker processes and the offline model over HTTP. After each round the invariants
// of issue 10 are checked from the outside: History, State, each workflow's close
// status in its event history, every request the model received, and every real
// execution of a tool.
//
// The files, one concern each:
//   - world.go: the dev server's namespaces, the model, the worker fleet, the clients;
//   - worker.go: the worker a child process runs (a re-executed test binary), with a
//     recording tool that writes each real execution to a file;
//   - process.go: starting, killing and restarting those processes;
//   - recorder.go: the model behind an HTTP recorder of every request and its answer;
//   - agents.go: the agent configs a worker may run, and the model's scripts;
//   - scenario.go: the generator (a pure function of the seed) and the action log;
//   - run.go: the executor, which performs actions and records what each one did;
//   - check.go: the invariants;
//   - faults.go: the known faults whose action classes are skipped until fixed.
//
// Run it with `go test -race -run TestSystem ./systest` (see README.md, Tests).
package systest
