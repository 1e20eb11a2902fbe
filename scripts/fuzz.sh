#!/usr/bin/env bash
# Runs every fuzz target in the repository, one at a time, for FUZZTIME
# each, and exits 1 if any found a failure (the failing input is written
# by go test under the package's testdata/fuzz/FuzzXxx/; commit it with the
# fix so it stays a regression test).
#
#   scripts/fuzz.sh                     # 10s per target (CI)
#   FUZZTIME=5m scripts/fuzz.sh         # the long run, before a release
#   FUZZPKGS="./profiles/gguf ./calibrate/..." scripts/fuzz.sh
#   FUZZMATCH='^FuzzRead$' scripts/fuzz.sh   # only the targets matching
#   KEEP_CORPUS=1 scripts/fuzz.sh       # also copy the inputs the fuzzer
#                                       # found interesting into testdata/fuzz
#
# Targets are discovered with `go test -list '^Fuzz'` per package, so a new
# target is fuzzed without editing this script. Environment: FUZZTIME (go
# test -fuzztime, default 10s), FUZZPKGS (package patterns, default ./...),
# FUZZTIMEOUT (go test -timeout per target, default 30m), FUZZPARALLEL
# (go test -parallel, default 1: CI machines are shared), FUZZMINIMIZE
# (go test -fuzzminimizetime, default 1x: no minimizing).
#
# Why no minimizing: go's fuzzer minimizes every input that finds new
# coverage, in the worker and before it counts the input, for up to
# -fuzzminimizetime (60s by default). In a run of a few seconds the first
# such input takes the rest of it. In a cold CI run of 2026-11-28 (5s
# runs, a 5s limit), 22 of the 44 targets spent their last seconds
# minimizing (no executions) and 8 never got past their seed corpus
# (3-111 executions: the importers' llama-bench, batched-bench, TGI,
# happy_vllm and vllm-text targets, the measurements reader). With 1x none stalled: the
# fewest executions was 779 (FuzzShellQuote starts a shell per input),
# the median 36,569 against 20,835. Minimizing only shrinks
# what the fuzzer keeps (a failing input is written either way), so a
# long run that wants small reproducers can set FUZZMINIMIZE=30s.
set -uo pipefail
cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-10s}
FUZZPKGS=${FUZZPKGS:-./...}
FUZZTIMEOUT=${FUZZTIMEOUT:-30m}
FUZZPARALLEL=${FUZZPARALLEL:-1}
FUZZMINIMIZE=${FUZZMINIMIZE:-1x}
FUZZMATCH=${FUZZMATCH:-^Fuzz}
export CGO_ENABLED=${CGO_ENABLED:-0}
export GHW_DISABLE_WARNINGS=1

# fuzz_one PKG TARGET runs one target. The go command sometimes ends a
# short run with "context deadline exceeded" and no failing input when the
# time runs out while a worker is busy (a toolchain race, not a finding:
# nothing is written under testdata/fuzz: golang/go#75804, the coordinator
# reporting its own -fuzztime deadline, fixed in Go 1.27); such a run is
# tried once more, and a second one is reported as a warning, not a
# failure.
fuzz_one() {
	local log rc
	log=$(mktemp)
	for try in 1 2; do
		go test -tags ci -run '^$' -fuzz "^${2}\$" -fuzztime "$FUZZTIME" \
			-fuzzminimizetime "$FUZZMINIMIZE" -parallel "$FUZZPARALLEL" -timeout "$FUZZTIMEOUT" "$1" 2>&1 | tee "$log"
		rc=${PIPESTATUS[0]}
		if [ "$rc" -eq 0 ]; then
			rm -f "$log"
			return 0
		fi
		if grep -q 'Failing input written\|panic:' "$log" || ! grep -q 'context deadline exceeded' "$log"; then
			rm -f "$log"
			return 1
		fi
		echo "== fuzz: $2 stopped with 'context deadline exceeded' and no failing input (try $try)" >&2
	done
	rm -f "$log"
	echo "== fuzz: warning: $2 ended without a finding but not cleanly twice; not counted as a failure" >&2
	return 0
}

# shellcheck disable=SC2086 # FUZZPKGS is a list of patterns
pkgs=$(go list -tags ci $FUZZPKGS) || { echo "fuzz: go list failed" >&2; exit 2; }
cache=$(go env GOCACHE)/fuzz
failed=()
ran=0
t0=$(date +%s)
for pkg in $pkgs; do
	dir=$(go list -tags ci -f '{{.Dir}}' "$pkg")
	# Only packages with test files can hold fuzz targets.
	if [ -z "$(go list -tags ci -f '{{.TestGoFiles}}{{.XTestGoFiles}}' "$pkg" | tr -d '[]')" ]; then
		continue
	fi
	if ! targets=$(go test -tags ci -list "$FUZZMATCH" "$pkg" 2>&1); then
		printf '%s\n' "$targets" >&2
		failed+=("$pkg (does not build)")
		continue
	fi
	for t in $(printf '%s\n' "$targets" | grep '^Fuzz' || true); do
		ran=$((ran + 1))
		printf '== fuzz %s %s for %s (%ds)\n' "$pkg" "$t" "$FUZZTIME" "$(($(date +%s) - t0))"
		if ! fuzz_one "$pkg" "$t"; then
			failed+=("$pkg $t")
			printf '== FAILED: %s %s (input saved under %s/testdata/fuzz/%s)\n' "$pkg" "$t" "$dir" "$t" >&2
		fi
		if [ "${KEEP_CORPUS:-}" = 1 ] && [ -d "$cache/$pkg/$t" ]; then
			mkdir -p "$dir/testdata/fuzz/$t"
			cp -n "$cache/$pkg/$t"/* "$dir/testdata/fuzz/$t/" 2>/dev/null || true
		fi
	done
done

printf '\n== %d fuzz targets, %s each, %ds\n' "$ran" "$FUZZTIME" "$(($(date +%s) - t0))"
if [ "$ran" -eq 0 ]; then
	echo "fuzz: no fuzz targets found in $FUZZPKGS" >&2
	exit 2
fi
if [ ${#failed[@]} -gt 0 ]; then
	printf '== FAILED: %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "== all fuzz targets passed"
