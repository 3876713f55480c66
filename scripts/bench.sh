#!/usr/bin/env bash
# Measures whole `ooda cycle` processes (and the cycles of an `ooda run`
# session, figure s, and the least a cycle process can cost, figures k
# and m)
# against the floors a cycle cannot go below (docs/benchmarks.md, "A cycle
# against its floors"). Every argument is passed to the Go program in
# scripts/bench, for example:
#
#   scripts/bench.sh                                  # build ./cmd/ooda, all figures
#   scripts/bench.sh --bin NEW --base OLD             # before/after, same rounds
#   scripts/bench.sh --only a,c --pairs 9 --cycles 200  # a quick look
#   scripts/bench.sh --help
#
# It needs go and git; strace, when present, counts the operations of a
# binary that writes no OODA_STATS file. The fixture repositories carry
# their own git identity, so nothing has to be configured first.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./scripts/bench "$@"
