#!/usr/bin/env bash
# Load test of `headroom serve` (loopback only, bounded): 200 concurrent
# plan requests against a server on 127.0.0.1 must all answer 200; prints
# p50/p99 latency and peak heap and RSS. HEADROOM_LOAD_N changes the count
# (at most 2000).
set -euo pipefail
cd "$(dirname "$0")/.."
export LANG=en_US.UTF-8 GHW_DISABLE_WARNINGS=1 CGO_ENABLED=0 HEADROOM_LOAD_TEST=1
exec go test -tags ci -count=1 -run '^TestLoad$' -v -timeout 15m ./server/
