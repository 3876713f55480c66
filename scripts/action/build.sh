#!/usr/bin/env bash
# Builds the ooda binary from the action's own source tree, so a workflow
# runs exactly the ooda of the ref it names in `uses: ooda-loop/ooda@REF`.
#
# Environment:
#   OODA_OUT         where to write the binary (required)
#   OODA_ACTION_REF  the ref the workflow used (github.action_ref); a tag
#                    such as v1.4.0 becomes the version `ooda version` prints
#
# The go on PATH builds it; with GOTOOLCHAIN=auto (Go's default) it fetches
# the toolchain go.mod asks for into the module cache, leaving the go that
# later steps, and the project's own skills, find on PATH untouched.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
out=${OODA_OUT:?OODA_OUT must name the file to build}
ref=${OODA_ACTION_REF:-}

if ! command -v go >/dev/null 2>&1; then
  echo "::error title=ooda::no go on PATH to build ooda with: add actions/setup-go before this action, or set the action's ooda-path input to a prebuilt binary"
  exit 1
fi

ldflags="-s -w"
# Only a release tag names a version; a branch or a commit would print as a
# version it is not, so those builds keep the build information's answer.
if [[ $ref =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
  ldflags="$ldflags -X github.com/ooda-loop/ooda/internal/cli.Version=$ref"
fi

# "local" would hold the build to an older go on PATH than go.mod needs.
case ${GOTOOLCHAIN:-} in
"" | local) export GOTOOLCHAIN=auto ;;
esac

mkdir -p "$(dirname "$out")"
cd "$src"
# Static, like the image: no dependence on the runner's libc, and no
# dynamic loader at each of the loop's process starts.
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out" ./cmd/ooda
"$out" --version
