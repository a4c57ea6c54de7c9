#!/usr/bin/env bash
# Reproduces the load figures of BENCHMARKS.md on one machine: for each
# engine, a fresh server, an organization on the business plan and KEYS API
# keys, then
#   status     closed loop at CONCURRENCY, with the floor server under the same load,
#              and with CEILING=1 the empty server too (loadgen -ceiling)
#   status-half open loop at half the rate status achieved, with the floor, for p99
#   renew      lease renewals of as many machines, closed loop at CONCURRENCY
#   activate   a new machine each request
# and with DATASET=1, on a data set of DATASET_N licences filled by
# tools/dataload, find, find-q, find-ref, read, issue, revoke, counts and counts-product at
# ADMIN_RATE a second, below the keys' budget; with MIXED=1, mixed (issue,
# activate, revoke, reinstate and deactivate in one organization, closed loop
# at CONCURRENCY), and with MATRIX=0 without the status and activate runs;
# SCENARIOS names the runs of those to make (all four unless set).
# It prints a summary table at the end; each run's JSON and table stay in
# OUT.
#
# Opt-in: CI does not run it. It needs curl, and for PostgreSQL a server
# that psql -h 127.0.0.1 -U postgres reaches (databases are created and
# dropped). Run nothing else heavy meanwhile: the server, the load generator
# and the floor share the machine's cores.
#
#   tools/loadgen/bench.sh
#   ENGINES=sqlite DURATION=10s tools/loadgen/bench.sh
#   DATASET=1 tools/loadgen/bench.sh
#   ENGINES=postgres DATASET=1 MATRIX=0 DATASET_SCENARIOS="counts counts-product" tools/loadgen/bench.sh
#   MIXED=1 MATRIX=0 DURATION=10s tools/loadgen/bench.sh
#   CEILING=1 ENGINES=sqlite tools/loadgen/bench.sh
#   ENGINES=sqlite SCENARIOS=status CEILING=1 tools/loadgen/bench.sh
#
# With PROFILE=DIR the server's profiler listens on DEBUG_LISTEN and each
# status, renew and activate run leaves a CPU profile and an allocation profile
# of 8 seconds from its middle in DIR (NAME.cpu, NAME.allocs), for
# go tool pprof. Profiling costs the server some CPU: take figures from
# runs without it.
set -euo pipefail

ENGINES=${ENGINES:-"sqlite postgres"}
DURATION=${DURATION:-20s}
CONCURRENCY=${CONCURRENCY:-16}          # enough to saturate two cores
ACTIVATE_CONCURRENCY=${ACTIVATE_CONCURRENCY:-8}
MACHINES=${MACHINES:-1000}
KEYS=${KEYS:-20}
PG=${PG:-postgres://postgres@127.0.0.1:5432}
DATASET=${DATASET:-}
MIXED=${MIXED:-}
MATRIX=${MATRIX:-1}
SCENARIOS=${SCENARIOS:-"status status-half renew activate"} # the matrix's runs, of these four
CEILING=${CEILING:-}
DATASET_N=${DATASET_N:-1000000}
DATASET_PRODUCT=${DATASET_PRODUCT:-dataset}
DATASET_SCENARIOS=${DATASET_SCENARIOS:-"find find-q find-ref read issue revoke counts counts-product"}
DATALOAD_ARGS=${DATALOAD_ARGS:-} # more tools/dataload flags, such as -activations
# 20 keys allow 100 requests a second on each route. find, find-q and
# find-ref share one route with the id sampling of read and revoke, so the
# rate stays well below it.
ADMIN_RATE=${ADMIN_RATE:-40}
SAMPLE=${SAMPLE:-1000}
OUT=${OUT:-$(mktemp -d /tmp/loadgen-bench.XXXXXX)}
PROFILE=${PROFILE:-}
DEBUG_LISTEN=${DEBUG_LISTEN:-127.0.0.1:6061}

# wants NAME reports whether SCENARIOS names the matrix's run NAME.
wants() { [[ " $SCENARIOS " == *" $1 "* ]]; }

for s in $SCENARIOS; do
	case $s in
	status | status-half | renew | activate) ;;
	*) echo "SCENARIOS: no run named $s (status, status-half, renew, activate)" >&2; exit 2 ;;
	esac
done
if wants status-half && ! wants status; then
	echo "SCENARIOS: status-half takes its rate from status, which it does not name" >&2
	exit 2
fi

cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
echo "results in $OUT"
# SERVER_BIN names a licentia binary to measure instead of building one
# from this tree, to compare two builds with the same load generator;
# DATALOAD_BIN likewise names a tools/dataload binary.
if [[ -n ${SERVER_BIN:-} ]]; then
	cp "$SERVER_BIN" /tmp/licentia
else
	go build -o /tmp/licentia ./cmd/licentia
fi
go build -o /tmp/loadgen ./tools/loadgen

server_pid=""
work=""
db=""
runs=()

psql_admin() { psql -h 127.0.0.1 -U postgres -d postgres -qAtc "$1"; }

# halt stops the server process.
halt() {
	if [[ -n $server_pid ]]; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		server_pid=""
	fi
}

# discard stops the server and drops its database and data directory.
discard() {
	halt
	if [[ -n $db ]]; then
		psql_admin "DROP DATABASE IF EXISTS $db" || true
		db=""
	fi
	if [[ -n $work ]]; then
		rm -rf "$work"
		work=""
	fi
}
trap discard EXIT

# fresh ENGINE makes an empty data directory, and database for
# PostgreSQL, and sets db_url and db_pid.
fresh() {
	work=$(mktemp -d /tmp/licentia-bench.XXXXXX)
	export LICENTIA_DATA_DIR=$work
	export LICENTIA_TRUSTED_PROXIES=127.0.0.1/32
	export LICENTIA_LISTEN=127.0.0.1:0
	if [[ -n $PROFILE ]]; then
		mkdir -p "$PROFILE"
		export LICENTIA_DEBUG_LISTEN=$DEBUG_LISTEN
	fi
	db_pid=""
	if [[ $1 == postgres ]]; then
		db=licentia_bench_$$_$RANDOM
		psql_admin "CREATE DATABASE $db"
		db_url=$PG/$db?sslmode=disable
		export LICENTIA_DATABASE_URL=$db_url
		# The postmaster is the checkpointer's parent; -db-pid reads the
		# CPU time of it, its background processes and the backends of
		# this database (-db-name), not those of other clients.
		local ckpt
		ckpt=$(psql_admin "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'" || true)
		if [[ -n $ckpt ]]; then
			db_pid=$(ps -o ppid= -p "$ckpt" | tr -d ' ')
		fi
	else
		unset LICENTIA_DATABASE_URL
		db_url=sqlite:$work/licentia.db
	fi
}

# launch starts the server on a free port and sets server and server_pid.
launch() {
	local log=$work/server.log
	local from=1
	[[ -f $log ]] && from=$(($(wc -l <"$log") + 1))
	/tmp/licentia serve 2>>"$log" &
	server_pid=$!
	local addr=""
	for _ in $(seq 100); do
		addr=$(tail -n +"$from" "$log" | grep -o '"msg":"licentia listening","addr":"[^"]*"' | sed 's/.*"addr":"\([^"]*\)"/\1/' || true)
		[[ -n $addr ]] && break
		kill -0 "$server_pid" 2>/dev/null || { cat "$log"; exit 1; }
		sleep 0.1
	done
	[[ -n $addr ]] || { echo "server did not start" >&2; cat "$log"; exit 1; }
	server=http://$addr
	curl -fsS "$server/healthz" >/dev/null
	echo "server pid $server_pid on $server"
}

# make_org creates the organization and KEYS keys, one a line in $work/keys.
make_org() {
	/tmp/licentia org create --name Bench --slug bench --plan business --owner-email owner@bench.example >/dev/null
	: >"$work/keys"
	for i in $(seq "$KEYS"); do
		/tmp/licentia apikey create --org bench --scopes products:write,licences:write,licences:read --name "bench-$i" |
			sed -n 's/.*"key":"\([^"]*\)".*/\1/p' >>"$work/keys"
	done
	[[ $(wc -l <"$work/keys") -eq $KEYS ]] || { echo "could not create $KEYS keys" >&2; exit 1; }
}

# lg NAME ARGS... runs loadgen against the server, keeping its JSON as
# OUT/NAME.json and its table as OUT/NAME.txt.
lg() {
	local name=$1
	shift
	local db_flag=()
	[[ -n $db_pid ]] && db_flag=(-db-pid "$db_pid" -db-name "$db")
	echo "== $name"
	local profiler=""
	if [[ -n $PROFILE && $name =~ -(status|renew|activate)$ ]]; then
		profile "$name" &
		profiler=$!
	fi
	/tmp/loadgen -server "$server" -keys-file "$work/keys" -pid "$server_pid" "${db_flag[@]}" "$@" \
		>"$OUT/$name.json" 2>"$OUT/$name.txt" || { cat "$OUT/$name.txt"; return 1; }
	[[ -n $profiler ]] && wait "$profiler"
	grep -v '^setting up\|^driving' "$OUT/$name.txt"
	runs+=("$OUT/$name.json")
}

# profile NAME waits for loadgen to set up and reach full load, then takes
# the server's CPU and allocation profiles over the same 8 seconds.
profile() {
	local base=http://$DEBUG_LISTEN/debug/pprof
	for _ in $(seq 600); do
		grep -q '^driving' "$OUT/$1.txt" 2>/dev/null && break
		sleep 0.1
	done
	sleep 2
	curl -fsS -o "$PROFILE/$1.cpu" "$base/profile?seconds=8" &
	curl -fsS -o "$PROFILE/$1.allocs" "$base/allocs?seconds=8"
	wait
}

# throughput FILE is the run's requests a second.
throughput() { grep -m1 '"throughput_rps"' "$1" | tr -dc '0-9.'; }

matrix() {
	local e=$1
	if wants status; then
		lg "$e-status" -scenario status -machines "$MACHINES" -concurrency "$CONCURRENCY" -duration "$DURATION" -floor ${CEILING:+-ceiling}
	fi
	if wants status-half; then
		local half
		half=$(awk -v r="$(throughput "$OUT/$e-status.json")" 'BEGIN { printf "%.0f", r / 2 }')
		lg "$e-status-half" -scenario status -machines "$MACHINES" -rate "$half" -concurrency "$CONCURRENCY" -duration "$DURATION" -floor
	fi
	if wants renew; then
		lg "$e-renew" -scenario renew -machines "$MACHINES" -concurrency "$CONCURRENCY" -duration "$DURATION"
	fi
	if wants activate; then
		lg "$e-activate" -scenario activate -concurrency "$ACTIVATE_CONCURRENCY" -duration "$DURATION"
	fi
}

dataset() {
	local e=$1
	if [[ -n ${DATALOAD_BIN:-} ]]; then
		cp "$DATALOAD_BIN" /tmp/dataload
	elif ! go build -o /tmp/dataload ./tools/dataload 2>"$OUT/dataload-build.txt"; then
		echo "tools/dataload does not build (see $OUT/dataload-build.txt): no data set runs"
		return 0
	fi
	curl -fsS -o /dev/null -X POST "$server/v1/admin/products" -H "Authorization: Bearer $(head -1 "$work/keys")" \
		-H 'Content-Type: application/json' \
		-d "{\"id\":\"$DATASET_PRODUCT\",\"name\":\"Data set\",\"key_prefix\":\"DSET\",\"current_major\":1}"
	echo "loading $DATASET_N licences into $e"
	# The loader takes SQLite's one write lock for each batch: the server
	# stops meanwhile. PostgreSQL's server only waits for the batches.
	[[ $e == sqlite ]] && halt
	# shellcheck disable=SC2086 # DATALOAD_ARGS holds several flags
	time /tmp/dataload -database-url "$db_url" -org bench -product "$DATASET_PRODUCT" -licences "$DATASET_N" $DATALOAD_ARGS
	[[ -n $server_pid ]] || launch
	local s
	for s in $DATASET_SCENARIOS; do
		lg "$e-ds-$s" -scenario "$s" -dataset "$DATASET_N" -dataset-product "$DATASET_PRODUCT" -sample "$SAMPLE" \
			-rate "$ADMIN_RATE" -concurrency 8 -duration "$DURATION"
	done
}

for e in $ENGINES; do
	echo "== $e"
	fresh "$e"
	launch
	make_org
	if [[ $MATRIX != 0 ]]; then matrix "$e"; fi
	if [[ -n $MIXED ]]; then lg "$e-mixed" -scenario mixed -concurrency "$CONCURRENCY" -duration "$DURATION"; fi
	if [[ -n $DATASET ]]; then dataset "$e"; fi
	discard
done

echo
echo "summary (x: ratio to the floor; ceiling x: the empty server's ratio to it; cpu: server process only, db cpu: PostgreSQL, its background processes and this database's backends; rss, peak: server at the run's end)"
/tmp/loadgen summary "${runs[@]}"
