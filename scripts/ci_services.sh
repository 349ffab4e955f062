#!/usr/bin/env bash
# PostgreSQL on 127.0.0.1:5432 (user postgres, no password on loopback) and Redis on 127.0.0.1:6379, for CI
# (`.ci/run`), `make bench` and `make faults`: installs Debian's `postgresql` and `redis-server` when they are
# missing, starts what is not answering, and creates the `test` database. A server that already answers is used
# as it is, so an existing PostgreSQL/Redis (set up as docs/operations.md says) is never touched.
#
# PostgreSQL runs as a cluster of this script's own (initdb as the postgres user, trust on loopback only), in
# $STUDIO_SERVICES_DIR (default ~/.cache/paas-studio/services): Debian's packaged cluster wants a password over TCP,
# and its configuration is the machine's, not ours. Each step prints what it does; a failing step shows its own
# output and the command to run by hand.
set -euo pipefail
PG_PORT=5432
REDIS_PORT=6379
STATE=${STUDIO_SERVICES_DIR:-/var/tmp/paas-studio-services}  # the postgres user must reach it: not under /root
say() { echo "ci_services: $*" >&2; }
fail() { say "$1"; say "to do it by hand: $2"; exit 1; }

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1; }
pg_answers() { pg_isready -q -h 127.0.0.1 -p "$PG_PORT" 2>/dev/null; }
pg_usable() { psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -w -d postgres -Atc 'select 1' >/dev/null 2>&1; }
redis_answers() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; }

# 1. Install what is missing (`system_deps.sh` does the apt step: once `apt-get update`, output shown on failure).
need=()
if ! pg_answers && [ -z "$(pg_bin)" ]; then need+=(postgresql); fi
if ! redis_answers && ! command -v redis-server >/dev/null 2>&1; then need+=(redis-server); fi
if [ ${#need[@]} -gt 0 ]; then
  "$(dirname "$0")/system_deps.sh" packages "${need[@]}"
fi

# 2. PostgreSQL. Debian's package starts its own cluster on 5432 where the machine has no systemd; that cluster asks
#    for a password over TCP, so it is stopped (said below) and ours takes the port.
if pg_answers && ! pg_usable; then
  cluster=$(pg_lsclusters --no-header 2>/dev/null | awk -v p="$PG_PORT" '$3 == p && $4 == "online" {print $1 " " $2}' | head -n1)
  [ -n "$cluster" ] || fail "a PostgreSQL on 127.0.0.1:$PG_PORT refuses user postgres without a password, and it is not one of Debian's clusters" \
    "stop it, or set DATABASE_URL to a database it lets you use"
  say "stopping Debian's PostgreSQL cluster $cluster (it asks for a password on 127.0.0.1; ours trusts loopback)"
  # shellcheck disable=SC2086
  pg_ctlcluster --skip-systemctl-redirect $cluster stop
fi
if ! pg_answers; then
  bin=$(pg_bin)
  pgdir="$STATE/postgres"  # the server's own folder (owned by postgres): data/ and server.log
  data="$pgdir/data" log="$pgdir/server.log"
  mkdir -p "$STATE"
  install -d -o postgres -g postgres "$pgdir"
  if [ ! -s "$data/PG_VERSION" ]; then
    say "initdb of a PostgreSQL cluster in $data"
    if ! out=$(runuser -u postgres -- "$bin/initdb" -D "$data" -U postgres -A trust 2>&1); then
      echo "$out" >&2
      fail "initdb failed (its output above)" "runuser -u postgres -- $bin/initdb -D $data -U postgres -A trust"
    fi
  fi
  say "starting PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT (data in $data)"
  opts="-c listen_addresses=127.0.0.1 -p $PG_PORT -k /tmp"
  if ! runuser -u postgres -- "$bin/pg_ctl" -D "$data" -l "$log" -o "$opts" -w -t 60 start >/dev/null; then
    tail -n 30 "$log" >&2 || true
    fail "PostgreSQL did not start (its log above: $log)" \
      "runuser -u postgres -- $bin/pg_ctl -D $data -l $log -o '$opts' start"
  fi
fi
pg_usable || fail "PostgreSQL on 127.0.0.1:$PG_PORT does not let user postgres in" \
  "psql -h 127.0.0.1 -U postgres -c 'select 1'"
if [ "$(psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -w -d postgres -Atc "select 1 from pg_database where datname='test'")" != 1 ]; then
  psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -w -d postgres -qc 'create database test'
  say "created database test"
fi
say "PostgreSQL answers on 127.0.0.1:$PG_PORT: $(psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -w -d postgres -Atc 'show server_version')"

# 3. Redis (Debian's package starts one on 127.0.0.1:6379 where it can; otherwise we do, without persistence).
if ! redis_answers; then
  mkdir -p "$STATE"
  say "starting Redis $(redis-server --version | awk '{print $3}' | sed 's/^v=//') on 127.0.0.1:$REDIS_PORT"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
    --dir "$STATE" --logfile "$STATE/redis.log"
  for _ in $(seq 1 30); do redis_answers && break; sleep 0.5; done
  redis_answers || { tail -n 20 "$STATE/redis.log" >&2 || true
    fail "Redis did not start (its log above)" "redis-server --bind 127.0.0.1 --port $REDIS_PORT --save ''"; }
fi
say "Redis answers on 127.0.0.1:$REDIS_PORT: $(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" info server | sed -n 's/^redis_version:\(.*\)\r*$/\1/p' | tr -d '\r')"
