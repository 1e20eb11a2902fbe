#!/usr/bin/env bash
# cross.sh: build the CLI and vet every package for the four release targets
# with CGO_ENABLED=0, as CI does. Prints one line per target and step, and
# exits non-zero if any fails. Usage: scripts/cross.sh [GOOS/GOARCH ...]
set -u
cd "$(dirname "$0")/.."
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	targets=(darwin/arm64 darwin/amd64 windows/amd64 linux/arm64)
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0
for t in "${targets[@]}"; do
	goos=${t%/*} goarch=${t#*/}
	ext=""
	[ "$goos" = windows ] && ext=.exe
	for step in build vet; do
		log="$out/$goos-$goarch-$step.log"
		start=$SECONDS
		if [ $step = build ]; then
			GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go build -o "$out/headroom-$goos-$goarch$ext" ./cmd/headroom >"$log" 2>&1
		else
			GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go vet ./... >"$log" 2>&1
		fi
		rc=$?
		if [ $rc -eq 0 ]; then
			echo "cross: $t $step ok ($((SECONDS - start)) s)"
		else
			echo "cross: $t $step FAILED ($((SECONDS - start)) s):"
			sed 's/^/    /' "$log" | head -20
			failed=1
		fi
	done
done
exit $failed
