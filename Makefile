# gapbench: `make bench` runs the main comparison, `make test` runs every check.
# Both work on a fresh clone: they install what they need themselves.

GO ?= go
# Library packages run under the race detector; commands and examples without it
# (their tests build and run child processes and are slow under -race).
LIBPKGS = ./decodegap/... ./hostmon/... ./nullband/... ./interleave/... ./internal/...
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

# bench: the main job. `deps` installs ONNX Runtime and the Silero VAD model;
# examples/vad/bench.sh then runs BenchmarkVAD (1 or 2 intra-op threads ×
# spinning on or off, and the null arm, at gaps of 0, 100 µs and 2 ms, in
# interleaved rounds) and BenchmarkVADCensus (where the CPU goes at 2 ms),
# writes everything to bench.txt (git ignores it) and prints
# `go tool benchstat -col /arm` of the main metrics, the verdicts and the
# census. -count 8 is the fewest rounds that leave the verdict's confidence
# interval (6 accepted rounds) room for a rejected round or two;
# -benchtime=4000x at 0 and 100 µs and 600x at 2 ms make each block last
# about 0.5-1.5 s, long enough that one burst of a co-tenant's CPU does not
# decide a block's mean. About three minutes on 2 cores; override
# with BENCH_COUNT, BENCH_STEPS and BENCH_STEPS_2MS (see bench.sh).
bench: deps
	GO=$(GO) BENCH_OUT=$(CURDIR)/bench.txt bash examples/vad/bench.sh
