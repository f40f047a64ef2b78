// Package composetest holds the checks of the repository's Docker files
// (docker-compose.yml, Dockerfile, deploy/) that can run without a Docker
// engine: their structure, pinned images, secrets passed through rather than
// written down, and agreement with the dev server's settings. It has no
// non-test code.
package composetest
