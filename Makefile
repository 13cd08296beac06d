# gapbench: `make bench` runs the main comparison, `make test` runs every check.
# Both work on a fresh clone: they install what they need themselves.

GO ?= go
# Library packages run under the race detector; commands and examples without it
# (their tests build and run child processes and are slow under -race).
LIBPKGS = ./decodegap/... ./hostmon/... ./nullband/... ./internal/...
OTHERPKGS = ./cmd/... ./examples/...

.PHONY: test bench fmtcheck vet staticcheck unit deps

test: deps fmtcheck vet staticcheck unit

deps:
	$(GO) mod download
	bash scripts/fetch-ort.sh

fmtcheck:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) tool staticcheck ./...

unit:
	$(GO) test -race -count=1 $(LIBPKGS)
	$(GO) test -count=1 $(OTHERPKGS)

bench: deps
	cd examples/basic && $(GO) test -run '^$$' -bench . -benchtime=2000x -count 5 | tee ../../bench.txt
	$(GO) tool benchstat bench.txt
