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
# Vet once per GOOS: the repository has no GOARCH-specific files (no
# _amd64/_arm64 names, no architecture build tags), so vetting darwin/amd64
# after darwin/arm64 repeated the same packages under the same build tags
# (26 s of a cold CI run), and linux/arm64 repeated scripts/test.sh's own
# `go vet` of the host's OS (65 s; the files that build only without cgo
# and without the ci tag, cmd/headroom/gui_noapp.go, are vetted with the
# windows target). Every target is still built. CROSS_VET_ALL=1
# vets every target (for a tree that gains architecture-specific files).
vetted=" "
if [ "${CROSS_VET_ALL:-}" != 1 ]; then
	vetted=" $(go env GOHOSTOS) "
fi
for t in "${targets[@]}"; do
	goos=${t%/*} goarch=${t#*/}
	ext=""
	[ "$goos" = windows ] && ext=.exe
	steps="build vet"
	case "$vetted" in *" $goos "*)
		steps=build
		echo "cross: $t vet: skipped ($goos vetted above, or by go vet on this $goos host)"
		;;
	esac
	vetted="$vetted$goos "
	for step in $steps; do
		log="$out/$goos-$goarch-$step.log"
		start=$SECONDS
		if [ $step = build ]; then
			GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go build -o "$out/headroom-$goos-$goarch$ext" ./cmd/headroom >"$log" 2>&1
		else
			# Fyne needs cgo on macOS (its Cocoa/Metal driver and parts of
			# internal/widget are cgo-only), so packages that import it
			# cannot be compiled, let alone vetted, without cgo there: they
			# are named and skipped. The CLI build above still needs
			# ./cmd/headroom to build without them.
			# A package whose tests import ui (cmd/headroom's) pulls in Fyne too.
			pkgs=$(GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go list -e -f '{{.ImportPath}} {{join .Deps " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
				awk -v goos="$goos" '{fy=0; for (i = 2; i <= NF; i++) if ($i ~ /^fyne\.io\/fyne\/v2/ || $i == "github.com/headroom-planner/headroom/ui") fy=1;
					if (fy && goos == "darwin") print "skip " $1 > "/dev/stderr"; else print $1}' 2>"$out/skipped")
			sed "s/^/cross: $goos\/$goarch vet: /; s/\$/ (imports Fyne, which needs cgo on macOS)/" "$out/skipped"
			GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go vet $pkgs >"$log" 2>&1
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
