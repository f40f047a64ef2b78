# agentchat worker image (docker-compose.yml builds it as the "worker" service).
#
#   docker build -t agentchat .
#   docker run --rm -e TEMPORAL_ADDRESS=host.docker.internal:7233 \
#     -e OPENAI_API_KEY agentchat
#
# The image holds two static binaries: /usr/local/bin/worker (the entrypoint)
# and /usr/local/bin/starter (the command-line client: use --entrypoint).

# --- build --------------------------------------------------------------
FROM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so code edits do not download modules again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Pure Go (CGO off): the binaries run on a distroless static base.
ENV CGO_ENABLED=0
RUN go build -trimpath -ldflags="-s -w" -o /out/worker ./worker && \
    go build -trimpath -ldflags="-s -w" -o /out/starter ./starter

# --- run ----------------------------------------------------------------
# distroless/static has CA certificates (for HTTPS model endpoints) and time
# zones, and nothing else: no shell, no package manager. Runs as nonroot.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/worker /usr/local/bin/worker
COPY --from=build /out/starter /usr/local/bin/starter
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/worker"]
