#!/usr/bin/env bash
# The browser suite on PostgreSQL: starts a throwaway PostgreSQL server (as the postgres user when
# run as root, which PostgreSQL refuses to run as), runs `make browser-tests` with every demo on a
# database of its own there (end2end/tests/server.ts, CLAIMPOOL_E2E_POSTGRES), and stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
dir=$(mktemp -d /tmp/claimpool-e2e-pg-XXXXXX)
port=${CLAIMPOOL_E2E_PG_PORT:-54329}
as=()
if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; as=(runuser -u postgres --); fi
"${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >/dev/null
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
trap '"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null; rm -rf "$dir"' EXIT
CLAIMPOOL_E2E_POSTGRES="postgres://postgres@127.0.0.1:$port" CLAIMPOOL_E2E_PG_BIN="$bin" \
  make --no-print-directory browser-tests
