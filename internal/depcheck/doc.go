// Package depcheck holds the tests that keep the module's layering: the client package
// (the module root) links no worker-side code, and the workflow code's own packages
// import no config, file, network or database code. They read the import graph from
// `go list -deps`, so they need the go command in PATH. It has no non-test code.
package depcheck
