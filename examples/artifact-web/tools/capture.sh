#!/bin/sh
# The rubric's capture command: starts the service as built, puts a small
# load on it and prints the load's JSON ({"p95_ms": ..., "error_rate": ...}).
# It lives under a protected path (safety.protected_paths), so the loop
# cannot change how it is measured.
set -eu
tmp=$(mktemp -d)
bin/server -config service.json -addr-file "$tmp/addr" &
pid=$!
trap 'kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
tries=0
until [ -s "$tmp/addr" ]; do
  kill -0 "$pid" 2>/dev/null || { echo "the service did not start" >&2; exit 1; }
  tries=$((tries + 1))
  [ "$tries" -le 100 ] || { echo "the service did not listen within 10s" >&2; exit 1; }
  sleep 0.1
done
bin/load -url "http://$(cat "$tmp/addr")/quote?item=tea" -n 20 -c 10
