#!/usr/bin/env bash
# The project's test command (README.md, "Run the tests"). It configures
# what the tests need (a git identity for the temporary repositories they
# create) without touching the user's global git configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
export GIT_AUTHOR_NAME="${GIT_AUTHOR_NAME:-ooda tests}"
export GIT_AUTHOR_EMAIL="${GIT_AUTHOR_EMAIL:-ooda-tests@example.invalid}"
export GIT_COMMITTER_NAME="${GIT_COMMITTER_NAME:-$GIT_AUTHOR_NAME}"
export GIT_COMMITTER_EMAIL="${GIT_COMMITTER_EMAIL:-$GIT_AUTHOR_EMAIL}"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...
scripts/browser.sh; if command -v chromium >/dev/null 2>&1; then export OODA_BROWSER_TESTS=required; fi
export OODA_ARTIFACTS="${OODA_ARTIFACTS:-$PWD/test-artifacts}"
go test -race -count=1 ./...
# The validator's copy (third_party/jsonschema) is a module of its own,
# which ./... does not reach.
go test -race -count=1 github.com/santhosh-tekuri/jsonschema/v6/...
