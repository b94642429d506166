#!/usr/bin/env bash
# A throw-away Redis for the tests of the celery executor (broker and result backend): its own
# server in $SHOPSYNC_REDIS_DIR (default /tmp/shopsync-redis), run by the current user,
# listening on 127.0.0.1 on a free port, with a password and nothing saved to disk. Installs
# Redis from Debian's packages when it is missing.
#
#   .ci/redis.sh          start (or reuse) the server; print its URL (redis://:PASSWORD@…/0)
#   .ci/redis.sh status   exit 0 when the server answers (and print its URL)
#   .ci/redis.sh stop     stop the server
#
# Everything but the URL goes to stderr, so `url=$(.ci/redis.sh)` works. The password is
# made on the first start and kept in the folder (readable by its owner only): a URL with a
# password is what production has, so the tests pass it the same way (by variable).
set -euo pipefail

base="${SHOPSYNC_REDIS_DIR:-/tmp/shopsync-redis}"

log() { echo "redis.sh: $*" >&2; }

# shellcheck source=.ci/debian.sh
source "$(dirname "$0")/debian.sh"

install_redis() {
    log "Redis is not installed: installing it from Debian's packages"
    # Debian's package enables a system service; where systemd runs, it is left alone: this
    # script starts a server of its own
    apt_install redis-server redis-tools
}

url() { echo "redis://:$(cat "$base/password")@127.0.0.1:$(cat "$base/port")/0"; }

# the password travels in the environment, never on a command line (which `ps` shows)
cli() { REDISCLI_AUTH="$(cat "$base/password")" redis-cli -h 127.0.0.1 -p "$(cat "$base/port")" "$@"; }

running() {
    [[ -s "$base/port" && -s "$base/password" ]] || return 1
    command -v redis-cli >/dev/null || return 1
    [[ "$(cli ping 2>/dev/null)" == "PONG" ]]
}

case "${1:-start}" in
    status)
        if running; then url; exit 0; fi
        log "not running"
        exit 1
        ;;
    stop)
        if running; then
            cli shutdown nosave >/dev/null 2>&1 || true
            for _ in $(seq 100); do running || break; sleep 0.1; done
        fi
        exit 0
        ;;
    start) ;;
    *)
        echo "usage: $0 [start|status|stop]" >&2
        exit 2
        ;;
esac

if running; then url; exit 0; fi

command -v redis-server >/dev/null && command -v redis-cli >/dev/null || install_redis
command -v redis-server >/dev/null || { log "no redis-server found even after installing"; exit 1; }

mkdir -p "$base"
chmod 700 "$base"
if [[ ! -s "$base/password" ]]; then
    (umask 077; python3 -c 'import secrets; print(secrets.token_hex(16))' >"$base/password")
fi

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# a free port can be taken by someone else before the server binds it: try a few
for attempt in 1 2 3; do
    port=$(free_port)
    echo "$port" >"$base/port"
    # the configuration holds the password: written readable by its owner only
    (umask 077; cat >"$base/redis.conf" <<EOF
bind 127.0.0.1
port $port
daemonize yes
pidfile $base/redis.pid
logfile $base/server.log
dir $base
save ""
appendonly no
requirepass $(cat "$base/password")
EOF
    )
    log "starting Redis on 127.0.0.1:$port"
    redis-server "$base/redis.conf" >&2 || true
    # daemonized: answer within 10 s, or look at its log
    for _ in $(seq 100); do running && break; sleep 0.1; done
    if running; then break; fi
    tail -n 20 "$base/server.log" >&2 || true
    if [[ $attempt == 3 ]]; then
        log "Redis did not start"
        exit 1
    fi
done

url
