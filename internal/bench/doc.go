// Package bench measures agentchat against a Temporal floor measured in the same run.
//
// The floor is the cheapest workflow that does what a chat turn must do on Temporal: a
// BenchFloor workflow whose update handler runs one no-op activity on its own task
// queue and returns (floor.go). Every figure of agentchat is printed beside the same
// figure of the floor, with their ratio and the target for that ratio
// (table.go):
//
//   - turn: p50 and p99 of a SendMessage round trip on a one-agent chat; the p50 of the
//     turns whose model call got the history inline and of those that read it by
//     query; the phases of a turn from the event history's timestamps (phases.go);
//     reference rows against a floor with a local activity and one that returns at once;
//   - throughput: 100 chats driven concurrently, 20 turns each, in turns per second,
//     with the CPU this process and the dev server spent per turn;
//   - start: starting a chat with its first turn (Update-With-Start);
//   - group: a three-agent turn, per agent reply;
//   - transfer: export and import of a 10,000-message chat against encoding/json of
//     the same messages, and the document's size;
//   - memory: heap in use after GC with 1,000 idle chats open, then with 100 of them
//     active.
//
// Everything runs in this process except the Temporal server: the agentchat worker
// (hosting.NewWorker with the offline model at zero latency), the floor's worker and
// the drivers. Driver goroutines carry the pprof label role=driver and the offline
// model role=model, so a CPU profile of the throughput run (-profile DIR) can be cut to
// the worker: go tool pprof -top -tagignore role=driver,model FILE. The export and
// import rounds are profiled too (transfer-cpu-agentchat.pprof), and the opening of the
// idle chats, whose heap profile (memory-heap-agentchat.pprof, sampled every 4 KB)
// shows what an idle chat holds.
//
// Run it with go run ./bench (3 to 4 minutes on two cores), or go run ./bench --short
// for the few-iteration check CI runs.
package bench
