#!/usr/bin/env bash
# Builds the image from the repository's Dockerfile and starts it, as CI does.
#
#   scripts/container-check.sh            # run the check
#   scripts/container-check.sh --clean    # then also remove the stand-in base images and
#                                         # Docker's build cache (the next run is cold)
#
# The CI machines reach Debian's packages and the Go module proxy but no image
# registry, so the Dockerfile's base images are replaced (through its GO_IMAGE
# and RUN_IMAGE build arguments) by stand-ins made here from this machine's
# files: a build image with this machine's Go toolchain and a POSIX shell, and
# a run image with what distroless/static:nonroot holds that the service uses
# (CA certificates, /etc/passwd and /etc/group with nonroot, uid 65532) and no
# shell. The stand-ins are kept between runs, tagged by the Go version and
# this script's recipe, so a second run reuses them and Docker's build cache.
#
# It checks that:
#   - the image builds, with VERSION, COMMIT and BUILT as build arguments;
#   - its user is nonroot and its HEALTHCHECK is `/licentia healthcheck`;
#   - it has no shell (`docker run --entrypoint /bin/sh` fails);
#   - a container with a volume on /data and a published port becomes healthy
#     by Docker's health check, answers GET /healthz naming the version built
#     and GET /readyz with 200, and its process runs as uid 65532;
#   - it stops on SIGTERM with exit code 0;
#   - a second container on the same volume becomes healthy with the same
#     master key, finds the organization the first one created, and passes
#     `licentia verify`.
# The containers, volume and image it made are removed at the end.
#
# It installs Debian's docker.io (and curl) when missing and starts dockerd
# when none runs (stopping it at the end). It needs root.
set -euo pipefail
cd "$(dirname "$0")/.."

clean_bases=false
case "${1:-}" in
"") ;;
--clean) clean_bases=true ;;
*) echo "usage: $0 [--clean]" >&2; exit 2 ;;
esac

# Bump when the stand-ins' contents change, so old ones are not reused.
recipe=1
name=licentia-check-$$
image=licentia-check:$$
volume=$name-data
started=$(date +%s)
tmp=$(mktemp -d)
dockerd_pid=""

say() { echo "container-check: $*"; }
fail() {
  echo "container-check: FAIL: $*" >&2
  exit 1
}

# remove_stand_ins [KEEP...]: the stand-in base images this script made, but for KEEP.
remove_stand_ins() {
  local ref
  for ref in $("$docker" images --format '{{.Repository}}:{{.Tag}}' --filter 'reference=licentia-check/*'); do
    case " $* " in *" $ref "*) ;; *) "$docker" rmi "$ref" >/dev/null 2>&1 || true ;; esac
  done
}

cleanup() {
  local code=$?
  set +e
  if [ -n "${docker:-}" ] && "$docker" info >/dev/null 2>&1; then
    if [ "$code" -ne 0 ]; then
      for c in "$name-1" "$name-2"; do
        if "$docker" inspect "$c" >/dev/null 2>&1; then
          echo "--- $c: docker logs (last 30 lines)" >&2
          "$docker" logs --tail 30 "$c" 2>&1 | sed 's/^/    /' >&2
        fi
      done
    fi
    "$docker" rm -f "$name-1" "$name-2" >/dev/null 2>&1
    "$docker" volume rm -f "$volume" >/dev/null 2>&1
    "$docker" rmi -f "$image" >/dev/null 2>&1
    if $clean_bases; then
      remove_stand_ins
      "$docker" builder prune -af >/dev/null 2>&1
    fi
  fi
  if [ -n "$dockerd_pid" ]; then
    say "stopping the dockerd it started"
    kill "$dockerd_pid" 2>/dev/null
    for _ in $(seq 30); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 1; done
  fi
  rm -rf "$tmp"
  say "$([ "$code" -eq 0 ] && echo passed || echo failed) in $(($(date +%s) - started))s"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ "$(id -u)" -eq 0 ] || fail "needs root (to install and start Docker and read the container's /proc entry)"

# Docker: Debian's docker.io. Its client has BuildKit built in; a newer client
# without the buildx plugin refuses DOCKER_BUILDKIT=1, and the classic builder
# cannot run the Dockerfile's RUN --mount caches, so Debian's client is
# preferred to any other docker on PATH.
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v curl >/dev/null || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get install -y --no-install-recommends "${missing[@]}" ||
    { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; }; } >/dev/null ||
    fail "could not install ${missing[*]}"
fi
if [ -x /usr/bin/docker ]; then docker=/usr/bin/docker; else docker=$(command -v docker) || fail "no docker client"; fi
export DOCKER_BUILDKIT=1

if ! "$docker" info >/dev/null 2>&1; then
  say "starting dockerd"
  dockerd >"$tmp/dockerd.log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 60); do "$docker" info >/dev/null 2>&1 && break; sleep 0.5; done
  "$docker" info >/dev/null 2>&1 || fail "dockerd did not start: $(tail -n 20 "$tmp/dockerd.log")"
fi

# The stand-in base images.
goroot=$(go env GOROOT)
goversion=$(go env GOVERSION)
go_image=licentia-check/go:$goversion-r$recipe
run_image=licentia-check/static:nonroot-r$recipe

# Those of another Go release or recipe are not used again.
remove_stand_ins "$go_image" "$run_image"

# copy_with_libs ROOT FILE...: each file and the shared libraries it loads, at
# the same paths under ROOT.
copy_with_libs() {
  local root=$1 f
  shift
  for f in "$@" $(ldd "$@" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\/.*[^:]$/ {print $1}' | sort -u); do
    mkdir -p "$root$(dirname "$f")"
    cp -L "$f" "$root$f"
  done
}

# make_root DIR: an empty file system laid out like Debian's (merged /usr).
make_root() {
  mkdir -p "$1"/usr/bin "$1"/usr/lib "$1"/usr/lib64 "$1"/etc/ssl/certs "$1"/tmp
  ln -s usr/bin "$1"/bin
  ln -s usr/lib "$1"/lib
  ln -s usr/lib64 "$1"/lib64
  chmod 1777 "$1"/tmp
  cp /etc/ssl/certs/ca-certificates.crt "$1"/etc/ssl/certs/
}

if ! "$docker" image inspect "$go_image" >/dev/null 2>&1; then
  say "making $go_image from $goroot"
  t=$(date +%s)
  root=$tmp/go-root
  make_root "$root"
  # sh runs the Dockerfile's RUN lines; mkdir is the only other command they use.
  copy_with_libs "$root" /bin/sh /bin/mkdir
  mkdir -p "$root"/usr/local "$root"/go "$root"/root
  tar -C "$goroot" -c --exclude=./test . | { mkdir -p "$root"/usr/local/go && tar -C "$root"/usr/local/go -x; }
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root"/etc/passwd
  printf 'root:x:0:\n' >"$root"/etc/group
  tar -C "$root" -c . | "$docker" import \
    --change 'ENV PATH=/go/bin:/usr/local/go/bin:/usr/bin:/bin GOPATH=/go GOTOOLCHAIN=local' \
    --change 'WORKDIR /go' \
    --change 'CMD ["/bin/sh"]' \
    - "$go_image" >/dev/null || fail "could not import $go_image"
  rm -rf "$root"
  say "made $go_image in $(($(date +%s) - t))s"
fi

if ! "$docker" image inspect "$run_image" >/dev/null 2>&1; then
  say "making $run_image"
  root=$tmp/run-root
  make_root "$root"
  mkdir -p "$root"/home/nonroot
  chown 65532:65532 "$root"/home/nonroot
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >"$root"/etc/passwd
  printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' >"$root"/etc/group
  tar -C "$root" --numeric-owner -c . | "$docker" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    --change 'USER 65532' \
    --change 'WORKDIR /home/nonroot' \
    - "$run_image" >/dev/null || fail "could not import $run_image"
  rm -rf "$root"
fi

# The image, from the repository's Dockerfile as users build it, but for the
# base images. The build's RUN lines download Go modules from the module
# proxy, which the containers reach as the host does.
version=check-$(git describe --tags --always --dirty 2>/dev/null || echo unknown)
commit=$(git rev-parse HEAD 2>/dev/null || echo "")
built=$(git log -1 --format=%cI 2>/dev/null || echo "")
say "building $image (VERSION=$version)"
t=$(date +%s)
# A cold build takes about 5 minutes on two cores; a hung one fails.
timeout 1200 "$docker" build --progress=plain -t "$image" \
  --build-arg GO_IMAGE="$go_image" --build-arg RUN_IMAGE="$run_image" \
  --build-arg VERSION="$version" --build-arg COMMIT="$commit" --build-arg BUILT="$built" \
  . >"$tmp/build.log" 2>&1 || {
  tail -n 40 "$tmp/build.log" | sed 's/^/    /' >&2
  fail "docker build failed (or took over 20 minutes)"
}
say "built in $(($(date +%s) - t))s"

[ "$("$docker" image inspect -f '{{.Config.User}}' "$image")" = nonroot:nonroot ] ||
  fail "the image's user is $("$docker" image inspect -f '{{.Config.User}}' "$image"), want nonroot:nonroot"
healthcmd=$("$docker" image inspect -f '{{json .Config.Healthcheck.Test}}' "$image")
[ "$healthcmd" = '["CMD","/licentia","healthcheck"]' ] || fail "the image's HEALTHCHECK is $healthcmd"
# No shell: running /bin/sh must fail for want of the file, not for another reason.
if out=$("$docker" run --rm --entrypoint /bin/sh "$image" -c true 2>&1); then
  fail "the image has a shell (/bin/sh ran)"
fi
case $out in *"no such file or directory"*) ;; *) fail "docker run --entrypoint /bin/sh failed otherwise than for want of a shell: $out" ;; esac

# start N: a container on the volume, its port published on loopback. The
# image's HEALTHCHECK command runs every second rather than every 15 seconds,
# to keep the check short.
start() {
  "$docker" run -d --name "$name-$1" -v "$volume:/data" -p 127.0.0.1::8080 \
    --health-interval=1s --health-start-period=30s "$image" >/dev/null ||
    fail "docker run $name-$1 failed"
}

# wait_healthy N: until Docker's health check reports healthy; then the port.
wait_healthy() {
  local c=$name-$1 status=""
  for _ in $(seq 60); do
    status=$("$docker" inspect -f '{{.State.Health.Status}}' "$c")
    [ "$status" = healthy ] && break
    [ "$("$docker" inspect -f '{{.State.Running}}' "$c")" = true ] || fail "$c exited ($("$docker" inspect -f '{{.State.ExitCode}}' "$c"))"
    sleep 1
  done
  [ "$status" = healthy ] || fail "$c is $status after 60s: $("$docker" inspect -f '{{json .State.Health.Log}}' "$c")"
  [ "$("$docker" inspect -f '{{json .Config.Healthcheck.Test}}' "$c")" = "$healthcmd" ] ||
    fail "$c ran another health check than the image's"
  port=$("$docker" port "$c" 8080/tcp | head -1)
  port=${port##*:}
}

# get URL WANT: the body of GET URL, failing unless it answers 200 and contains WANT.
get() {
  local body
  body=$(curl -fsS --max-time 5 "$1") || fail "GET $1 did not answer 200"
  case $body in *"$2"*) ;; *) fail "GET $1 answered $body, want $2" ;; esac
}

start 1
wait_healthy 1
say "$name-1 healthy on 127.0.0.1:$port"
get "http://127.0.0.1:$port/healthz" "\"version\":\"$version\""
get "http://127.0.0.1:$port/readyz" '"status":"ready"'

pid=$("$docker" inspect -f '{{.State.Pid}}' "$name-1")
uid=$(stat -c %u "/proc/$pid")
[ "$uid" = 65532 ] || fail "the service runs as uid $uid, want 65532"
grep -Eq '^Uid:\s+65532\s+65532\s+65532\s+65532$' "/proc/$pid/status" ||
  fail "the service's uids are $(grep '^Uid:' "/proc/$pid/status"), want 65532 throughout"

# Data for the second container to find: an organization in the SQLite
# database, and the master key generated at first start.
"$docker" exec "$name-1" /licentia org create --name "Check Software" --slug check --plan indie \
  --owner-email owner@check.example >/dev/null || fail "licentia org create failed in $name-1"
data=$("$docker" volume inspect -f '{{.Mountpoint}}' "$volume")
[ -f "$data/licentia.db" ] || fail "no licentia.db in the volume"
[ -f "$data/master.key" ] || fail "no master.key in the volume"
[ "$(stat -c %u "$data/master.key")" = 65532 ] || fail "master.key in the volume is not owned by 65532"
key_sum=$(sha256sum <"$data/master.key")

"$docker" stop -t 20 "$name-1" >/dev/null
code=$("$docker" inspect -f '{{.State.ExitCode}}' "$name-1")
[ "$code" = 0 ] || fail "$name-1 exited $code on SIGTERM, want 0"
"$docker" rm "$name-1" >/dev/null

start 2
wait_healthy 2
say "$name-2 healthy on 127.0.0.1:$port, on the same volume"
[ "$(sha256sum <"$data/master.key")" = "$key_sum" ] || fail "the master key changed between containers"
"$docker" exec "$name-2" /licentia apikey list --org check >/dev/null ||
  fail "$name-2 does not find the organization $name-1 created"
"$docker" exec "$name-2" /licentia verify >/dev/null || fail "licentia verify failed in $name-2"
"$docker" stop -t 20 "$name-2" >/dev/null
