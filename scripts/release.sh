#!/usr/bin/env bash
# Builds the licentia release: static binaries for linux, darwin and windows
# on amd64 and arm64, their archives and SHA256SUMS, in dist/<version>/.
#
#   scripts/release.sh [VERSION]    VERSION defaults to `git describe --tags --always --dirty`
#   scripts/release.sh --check      one target (this machine's) into a temporary directory,
#                                   then the checksums verified and the binary's version read back
#
# Running it again for the same version replaces dist/<version>/ with the same files: the
# archives carry the commit's time and no owner, so only the binaries' content can differ.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64)
check=false
if [ "${1:-}" = "--check" ]; then
  check=true
  shift
  targets=("$(go env GOOS)/$(go env GOARCH)")
fi
[ $# -le 1 ] || { echo "usage: scripts/release.sh [--check] [VERSION]" >&2; exit 2; }

version=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
commit=$(git rev-parse HEAD 2>/dev/null || echo "")
built=$(git log -1 --format=%cI 2>/dev/null || echo "")
epoch=$(git log -1 --format=%ct 2>/dev/null || echo 0)
pkg=github.com/licentia/licentia/internal/build
ldflags="-s -w -X $pkg.version=$version -X $pkg.commit=$commit -X $pkg.built=$built"

work=$(mktemp -d)
cleanup=("$work")
if $check; then
  out=$(mktemp -d)
  cleanup+=("$out")
else
  out=dist/$version
  rm -rf "$out"
fi
trap 'rm -rf "${cleanup[@]}"' EXIT
mkdir -p "$out"

for target in "${targets[@]}"; do
  os=${target%/*} arch=${target#*/}
  name=licentia_${version}_${os}_${arch}
  exe=licentia
  [ "$os" = windows ] && exe=licentia.exe
  mkdir -p "$work/$name"
  echo "release: building $name" >&2
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "$ldflags" -o "$work/$name/$exe" ./cmd/licentia
  cp README.md "$work/$name/"
  # The commit's time on every file, so that the archives are the same on every run.
  find "$work/$name" -exec touch -h -d "@$epoch" {} +
  if [ "$os" = windows ] && command -v zip >/dev/null; then
    (cd "$work" && rm -f "$name.zip" && zip -q -X -r "$OLDPWD/$out/$name.zip" "$name")
  else
    tar -C "$work" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -cf - "$name" |
      gzip -n -9 >"$out/$name.tar.gz"
  fi
done

(cd "$out" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)

if $check; then
  (cd "$out" && sha256sum --quiet -c SHA256SUMS)
  got=$("$work/$name/$exe" version)
  case $got in
    *"\"version\":\"$version\""*) echo "release: check passed: $got" ;;
    *) echo "release: licentia version printed $got, want version $version" >&2; exit 1 ;;
  esac
  exit 0
fi
echo "release: $(ls "$out" | wc -l) files in $out" >&2
