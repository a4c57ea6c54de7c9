#!/usr/bin/env bash
# Measures PostgreSQL's CPU for a new seat, write by write: seat.sql is a new
# seat's transaction as the service sends it (its statements and its two
# round trips), which pgbench runs from CLIENTS clients, each on a licence of
# its own. Each variant leaves something out, or sends it otherwise:
#   pick           only the choice of the client's licence, which every
#                  variant makes first (subtract it from the others)
#   seat           the transaction as sent
#   reads          the first round trip alone (the lock and the reads), then commit
#   no-activation  without the activation's insert
#   no-count       without the licence's live count
#   no-counter     without the counter's upsert
#   no-audit       without the audit entry
#   no-event       without the event
#   one-statement  the six writes as one statement of WITH clauses
#   async-commit   with synchronous_commit off: what the commit's WAL flush costs
# Every run starts on a fresh copy of one database (migrated, with an
# organization, a product and CLIENTS licences made through the service)
# after a checkpoint, and reads the CPU time of the postmaster, its
# background processes and its backends, ended ones included, from /proc:
# run nothing else on the server meanwhile.
#
# Opt-in: CI does not run it. It needs pgbench, psql, curl and a local
# PostgreSQL that psql -h 127.0.0.1 -U postgres reaches (databases are
# created and dropped).
#
#   tools/pgseat/bench.sh
#   ROUNDS=3 DURATION=20 tools/pgseat/bench.sh seat one-statement
set -euo pipefail

PG_HOST=${PG_HOST:-127.0.0.1}
PG_USER=${PG_USER:-postgres}
CLIENTS=${CLIENTS:-8}
DURATION=${DURATION:-10} # seconds a run
ROUNDS=${ROUNDS:-2}      # runs of each variant, in turn
VARIANTS=("$@")
if [[ ${#VARIANTS[@]} -eq 0 ]]; then
	VARIANTS=(pick seat reads no-activation no-count no-counter no-audit no-event one-statement async-commit)
fi

cd "$(dirname "$0")/../.."
here=tools/pgseat
work=$(mktemp -d /tmp/pgseat.XXXXXX)
tpl=pgseat_tpl_$$
db=pgseat_$$
server_pid=""

psql_admin() { PGOPTIONS="-c client_min_messages=warning" psql -h "$PG_HOST" -U "$PG_USER" -d postgres -qAtc "$1"; }

cleanup() {
	[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	psql_admin "DROP DATABASE IF EXISTS $db" || true
	psql_admin "DROP DATABASE IF EXISTS $tpl" || true
	rm -rf "$work"
}
trap cleanup EXIT

# The template: migrated, an organization, a product and CLIENTS licences,
# made by the service itself.
go build -o "$work/licentia" ./cmd/licentia
psql_admin "CREATE DATABASE $tpl"
export LICENTIA_DATABASE_URL="postgres://$PG_USER@$PG_HOST:5432/$tpl?sslmode=disable"
export LICENTIA_DATA_DIR=$work/data LICENTIA_LISTEN=127.0.0.1:0
mkdir -p "$LICENTIA_DATA_DIR"
"$work/licentia" migrate >/dev/null
"$work/licentia" org create --name Seats --slug seats --plan business --owner-email owner@seats.example >/dev/null
key=$("$work/licentia" apikey create --org seats --scopes products:write,licences:write --name seats |
	sed -n 's/.*"key":"\([^"]*\)".*/\1/p')
"$work/licentia" serve 2>"$work/server.log" &
server_pid=$!
addr=""
for _ in $(seq 100); do
	addr=$(grep -o '"msg":"licentia listening","addr":"[^"]*"' "$work/server.log" | sed 's/.*"addr":"\([^"]*\)"/\1/' || true)
	[[ -n $addr ]] && break
	sleep 0.1
done
[[ -n $addr ]] || { cat "$work/server.log"; exit 1; }
post() {
	curl -fsS -o /dev/null -X POST "http://$addr$1" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "$2"
}
post /v1/admin/products '{"id":"app","name":"App","key_prefix":"APP","current_major":1}'
for _ in $(seq "$CLIENTS"); do
	post /v1/admin/licences '{"product_id":"app","email":"ada@seats.example","limit_kind":"machines","limit_count":4294967295}'
done
kill "$server_pid"
wait "$server_pid" || true
server_pid=""

# The variants' scripts, made from seat.sql.
seat=$here/seat.sql
writes='^(INSERT|UPDATE)'
make_variant() {
	case $1 in
	pick) grep -E '^\\set|\\gset$' "$seat" ;;
	seat) cat "$seat" ;;
	reads) sed '/^\\endpipeline/,$d' "$seat" && printf 'COMMIT;\n\\endpipeline\n' ;;
	no-activation) grep -v '^INSERT INTO activations' "$seat" ;;
	no-count) grep -v '^UPDATE licences' "$seat" ;;
	no-counter) grep -v '^INSERT INTO licence_stats' "$seat" ;;
	no-audit) grep -v '^INSERT INTO audit_log' "$seat" ;;
	no-event) grep -v '^INSERT INTO events' "$seat" ;;
	one-statement)
		# WITH w1 AS (...), ... the last write: the statements' trailing
		# semicolons dropped.
		awk -v writes="$writes" '
			$0 ~ writes { sub(/;$/, ""); w[++n] = $0; next }
			/^COMMIT;/ {
				s = "WITH "
				for (i = 1; i < n; i++) s = s "w" i " AS (" w[i] ")" (i < n - 1 ? ", " : " ")
				print s w[n] ";"
			}
			{ print }' "$seat"
		;;
	async-commit) sed 's/^INSERT INTO activations/SET LOCAL synchronous_commit = off;\n&/' "$seat" ;;
	*) echo "unknown variant $1" >&2; exit 2 ;;
	esac
}
for v in "${VARIANTS[@]}"; do
	make_variant "$v" >"$work/$v.sql"
done

# ticks is the CPU time, in clock ticks, of the postmaster, its children
# that ended, and those that run.
ckpt=$(psql_admin "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'")
postmaster=$(ps -o ppid= -p "$ckpt" | tr -d ' ')
ticks() {
	local t c
	t=$(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$postmaster/stat")
	for c in $(pgrep -P "$postmaster"); do
		t=$((t + $(awk '{ print $14 + $15 }' "/proc/$c/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}
hz=$(getconf CLK_TCK)

echo "variant transactions tps pg_cpu_us_per_transaction"
for _ in $(seq "$ROUNDS"); do
	for v in "${VARIANTS[@]}"; do
		psql_admin "DROP DATABASE IF EXISTS $db"
		psql_admin "CREATE DATABASE $db TEMPLATE $tpl"
		psql_admin "CHECKPOINT"
		sleep 2 # the admin backends end and are counted before the run
		before=$(ticks)
		out=$(pgbench -h "$PG_HOST" -U "$PG_USER" -n -M prepared -c "$CLIENTS" -j 2 -T "$DURATION" \
			-D licences="$CLIENTS" -f "$work/$v.sql" "$db" 2>&1) || { echo "$out"; exit 1; }
		sleep 1 # pgbench's backends end and are counted
		after=$(ticks)
		tx=$(awk '/number of transactions actually processed/ { split($NF, a, "/"); print a[1] }' <<<"$out")
		tps=$(awk '/^tps/ { printf "%.0f", $3 }' <<<"$out")
		awk -v v="$v" -v tx="$tx" -v tps="$tps" -v d=$((after - before)) -v hz="$hz" \
			'BEGIN { printf "%s %d %d %.0f\n", v, tx, tps, d * 1e6 / hz / tx }'
	done
done
