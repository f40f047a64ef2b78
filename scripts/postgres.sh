#!/usr/bin/env bash
# A throwaway PostgreSQL server for tests and local runs of the message store.
#
#   scripts/postgres.sh start DIR PORT   prints the DSN on stdout (and nothing else):
#                                        postgres://postgres@127.0.0.1:PORT/agentchat?sslmode=disable
#   scripts/postgres.sh stop DIR
#   scripts/postgres.sh status DIR       exit 0 when running
#
# start installs PostgreSQL with apt-get when no initdb is found (PATH, then
# /usr/lib/postgresql/*/bin), initializes DIR when it is missing or empty (user postgres,
# trust authentication), starts the server in the background listening on 127.0.0.1:PORT
# only (Unix socket in DIR), waits until it accepts connections and creates database
# agentchat. PostgreSQL refuses to run as root: as root the server runs as user postgres
# (or nobody when there is none), which then owns DIR. Both commands are idempotent:
# start on a running server only prints the DSN (failing if it listens on another
# port), stop on a stopped one does nothing.
#
# Typical use (as scripts/test does, with a free port):
#   export AGENTCHAT_TEST_POSTGRES=$(scripts/postgres.sh start /tmp/agentchat-pg 55432)
#   trap 'scripts/postgres.sh stop /tmp/agentchat-pg' EXIT
set -euo pipefail

DB=agentchat

log() { printf 'postgres.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
usage() { die "usage: $0 start DIR PORT | stop DIR | status DIR"; }

# find_bin prints the folder holding initdb, pg_ctl and postgres, or fails.
find_bin() {
  local p d
  if p=$(command -v initdb 2>/dev/null); then
    d=$(dirname "$(readlink -f "$p")")
    [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ] && { echo "$d"; return 0; }
  fi
  # Newest major version first.
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5 -rn); do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
  done
  return 1
}

install_postgres() {
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "PostgreSQL is not installed and sudo is missing: install it with 'apt-get install -y postgresql' as root"
    sudo="sudo -n"
  fi
  command -v apt-get >/dev/null 2>&1 || die "PostgreSQL is not installed and there is no apt-get: install the PostgreSQL server (initdb, pg_ctl, postgres) by hand"
  log "installing PostgreSQL with apt-get"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >&2
}

# As root, the server runs as RUN_USER; otherwise as whoever runs this script.
RUN_USER=""
if [ "$(id -u)" -eq 0 ]; then
  if id postgres >/dev/null 2>&1; then RUN_USER=postgres; else RUN_USER=nobody; fi
fi

as_server() {
  if [ -n "$RUN_USER" ]; then
    runuser -u "$RUN_USER" -- "$@"
  else
    "$@"
  fi
}

# make_reachable lets RUN_USER enter every parent folder of $1 (o+x, no listing), as
# folders made by mktemp -d are 0700.
make_reachable() {
  [ -n "$RUN_USER" ] || return 0
  local d
  d=$(dirname "$1")
  while [ "$d" != "/" ]; do
    if ! runuser -u "$RUN_USER" -- test -x "$d"; then
      log "allowing $RUN_USER to enter $d (chmod o+x)"
      chmod o+x "$d"
    fi
    d=$(dirname "$d")
  done
}

running() { [ -f "$DIR/PG_VERSION" ] && as_server "$BIN/pg_ctl" status -D "$DIR" >/dev/null 2>&1; }

# running_port prints the port of the running server (line 4 of postmaster.pid).
running_port() { sed -n 4p "$DIR/postmaster.pid" 2>/dev/null; }

psql_q() { "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -tA "$@"; }

start() {
  if ! running; then
    if [ ! -f "$DIR/PG_VERSION" ]; then
      if [ -d "$DIR" ] && [ -n "$(ls -A "$DIR")" ]; then
        die "$DIR is not empty and is not a PostgreSQL data folder"
      fi
      mkdir -p "$DIR"
      chmod 700 "$DIR"
      [ -z "$RUN_USER" ] || chown "$RUN_USER:" "$DIR"
      make_reachable "$DIR"
      log "initializing $DIR"
      # initdb's own report goes to a log beside the cluster; shown only when it fails.
      as_server env LC_ALL=C "$BIN/initdb" -D "$DIR" -U postgres --auth=trust -E UTF8 --no-locale >"$DIR.initdb.log" 2>&1 ||
        { cat "$DIR.initdb.log" >&2; die "initdb failed (log: $DIR.initdb.log)"; }
    else
      make_reachable "$DIR"
    fi
    # The Unix socket goes in DIR unless its path would pass the ~107-byte limit.
    local sockdir=$DIR
    [ ${#sockdir} -le 80 ] || sockdir=/tmp
    log "starting PostgreSQL on 127.0.0.1:$PORT (log $DIR/server.log)"
    as_server env LC_ALL=C "$BIN/pg_ctl" start -D "$DIR" -l "$DIR/server.log" -w -t 60 \
      -o "-p $PORT -k '$sockdir' -c listen_addresses=127.0.0.1" >&2 \
      || { tail -n 30 "$DIR/server.log" >&2 || true; die "PostgreSQL did not start"; }
  fi
  local port
  port=$(running_port)
  [ "$port" = "$PORT" ] || die "a server already runs from $DIR on port $port, not $PORT"
  local i
  for i in $(seq 1 60); do
    "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" && break
    [ "$i" -lt 60 ] || die "PostgreSQL on port $PORT does not accept connections"
    sleep 0.5
  done
  if [ "$(psql_q -c "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != "1" ]; then
    psql_q -c "CREATE DATABASE $DB" >&2
  fi
  echo "postgres://postgres@127.0.0.1:$PORT/$DB?sslmode=disable"
}

stop() {
  if running; then
    log "stopping PostgreSQL in $DIR"
    as_server "$BIN/pg_ctl" stop -D "$DIR" -m fast -w -t 60 >&2
  else
    log "no PostgreSQL running in $DIR"
  fi
}

[ $# -ge 2 ] || usage
CMD=$1
DIR=$(readlink -m "$2")
case "$CMD" in
  start)
    [ $# -eq 3 ] || usage
    PORT=$3
    [[ "$PORT" =~ ^[0-9]+$ ]] && [ "$PORT" -ge 1 ] && [ "$PORT" -le 65535 ] || die "PORT must be a number from 1 to 65535, not $PORT"
    BIN=$(find_bin) || { install_postgres; BIN=$(find_bin) || die "PostgreSQL was installed but no initdb was found"; }
    start
    ;;
  stop | status)
    [ $# -eq 2 ] || usage
    if ! BIN=$(find_bin); then
      [ "$CMD" = stop ] && { log "PostgreSQL is not installed; nothing to stop"; exit 0; }
      exit 1
    fi
    if [ "$CMD" = stop ]; then stop; else running; fi
    ;;
  *) usage ;;
esac
