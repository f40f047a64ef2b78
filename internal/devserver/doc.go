// Package devserver finds, builds and runs the official Temporal development
// server (`temporal server start-dev`, a real Temporal server on SQLite) for the
// worker, the command-line client and the integration tests.
//
// The server is a separate process started from the Temporal CLI binary. The
// CLI is located by [FindCLI] or built once from the Go module proxy by
// [EnsureCLI] (`go install github.com/temporalio/cli/cmd/temporal@v1.5.1`);
// embedding go.temporal.io/server in this module is not an option because it
// clashes with the current SDK's API module (see DESIGN.md, "Servers and
// models").
//
// [Start] runs a server with the options in [Options] and returns only once a
// Temporal client can connect, the frontend answers CheckHealth and every
// requested namespace can be described. Two servers on different ports are two
// independent clusters. A detached server ([Options.Detach]) lives in its own
// process group, outlives the process that started it and is stopped later
// with [StopDetached] and its PID file.
//
// Everything here does I/O (processes, ports, files, the network); nothing
// here may be imported by workflow code.
package devserver
