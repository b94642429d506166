#!/usr/bin/env bash
# A throw-away PostgreSQL for the tests: its own cluster in $SHOPSYNC_PG_DIR
# (default /tmp/shopsync-postgres), listening on 127.0.0.1 on a free port, with a role and a
# database `shopsync_test`. Installs PostgreSQL from Debian's packages when it is missing.
#
#   .ci/postgres.sh          start (or reuse) the cluster; print its SQLAlchemy URL on stdout
#   .ci/postgres.sh status   exit 0 when the cluster runs (and print its URL)
#   .ci/postgres.sh stop     stop the cluster (its data stays for the next start)
#
# Everything but the URL goes to stderr, so `url=$(.ci/postgres.sh)` works. Running it again
# reuses the cluster; a stale one (from before a reboot, or of an older major version) is
# started again or rebuilt.
set -euo pipefail

base="${SHOPSYNC_PG_DIR:-/tmp/shopsync-postgres}"
data="$base/data"
name=shopsync_test

log() { echo "postgres.sh: $*" >&2; }

find_bindir() {
    local dir
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [[ -x "$dir/initdb" && -x "$dir/pg_ctl" && -x "$dir/postgres" ]]; then
            echo "$dir"
            return 0
        fi
    done
    if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
        dirname "$(readlink -f "$(command -v initdb)")"
        return 0
    fi
    return 1
}

# shellcheck source=.ci/debian.sh
source "$(dirname "$0")/debian.sh"

install_postgres() {
    log "PostgreSQL is not installed: installing it from Debian's packages"
    apt_install postgresql
}

if [[ $(id -u) -eq 0 ]]; then
    # the server refuses to run as root: it runs as the postgres user
    if ! id postgres >/dev/null 2>&1; then
        useradd --system --user-group --home-dir "$base" --shell /bin/sh postgres
    fi
    as_pg() { runuser -u postgres -- "$@"; }
else
    as_pg() { "$@"; }
fi

url() { echo "postgresql+psycopg://$name:$name@127.0.0.1:$(cat "$base/port")/$name"; }

running() {
    [[ -s "$data/PG_VERSION" && -s "$base/port" ]] || return 1
    local bindir
    bindir=$(find_bindir) || return 1
    as_pg "$bindir/pg_ctl" status -D "$data" >/dev/null 2>&1
}

case "${1:-start}" in
    status)
        if running; then url; exit 0; fi
        log "not running"
        exit 1
        ;;
    stop)
        if running; then as_pg "$(find_bindir)/pg_ctl" stop -D "$data" -m fast -w >&2; fi
        exit 0
        ;;
    start) ;;
    *)
        echo "usage: $0 [start|status|stop]" >&2
        exit 2
        ;;
esac

bindir=$(find_bindir) || { install_postgres && bindir=$(find_bindir); } || {
    log "no PostgreSQL server binaries found even after installing"
    exit 1
}
major=$("$bindir/pg_ctl" --version | sed -E 's/.* ([0-9]+)(\.[0-9]+)*.*/\1/')

mkdir -p "$base"
[[ $(id -u) -eq 0 ]] && chown postgres: "$base"
chmod 700 "$base"

if [[ -s "$data/PG_VERSION" && "$(cat "$data/PG_VERSION")" != "$major" ]]; then
    log "the cluster in $data is of PostgreSQL $(cat "$data/PG_VERSION"), not $major: rebuilding"
    as_pg "$bindir/pg_ctl" stop -D "$data" -m immediate -w >/dev/null 2>&1 || true
    rm -rf "$data"
fi

if [[ ! -s "$data/PG_VERSION" ]]; then
    rm -rf "$data"
    log "creating a PostgreSQL $major cluster in $data"
    # local (socket) connections are trusted, for this script; TCP needs the password
    as_pg "$bindir/initdb" -D "$data" -U postgres -E UTF8 --no-locale \
        --auth-local=trust --auth-host=scram-sha-256 --no-sync >&2
fi

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

if ! as_pg "$bindir/pg_ctl" status -D "$data" >/dev/null 2>&1; then
    # a free port can be taken by someone else before the server binds it: try a few
    for attempt in 1 2 3; do
        port=$(free_port)
        echo "$port" >"$base/port"
        log "starting PostgreSQL $major on 127.0.0.1:$port"
        # -l: the server's output goes to a file, never to our caller's pipe
        if as_pg "$bindir/pg_ctl" start -D "$data" -w -t 60 -l "$base/server.log" \
            -o "-p $port -k $base -c listen_addresses=127.0.0.1" >&2; then
            break
        fi
        tail -n 20 "$base/server.log" >&2 || true
        if [[ $attempt == 3 ]]; then
            log "PostgreSQL did not start"
            exit 1
        fi
    done
fi
port=$(cat "$base/port")

psql_admin() {
    as_pg "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$base" -p "$port" -U postgres -d postgres "$@"
}
if [[ -z $(psql_admin -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$name'") ]]; then
    psql_admin -c "CREATE ROLE $name LOGIN PASSWORD '$name'"
fi
if [[ -z $(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = '$name'") ]]; then
    psql_admin -c "CREATE DATABASE $name OWNER $name"
fi

url
