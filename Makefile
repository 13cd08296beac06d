# gapbench: `make bench` runs the main comparison, `make test` runs every check
# (CI runs `make test` from .ci/run). Both work on a fresh clone: they install
# what they need themselves.

GO ?= go
STEP = bash scripts/step.sh
# Packages tested under the race detector: the library packages, whose code
# and tests run goroutines and threads; all of internal/ but traceplot, which
# draws on one goroutine and would alone pull gonum/plot with its font, PDF
# and LaTeX modules into the second, instrumented build that -race needs.
# Commands and examples run without it (their tests build and run child
# processes and are slow under -race).
RACEPKGS = ./decodegap/... ./hostmon/... ./nullband/... \
	$$($(GO) list ./internal/... | grep -v -e '/internal/traceplot$$' -e '/internal/prreport$$' -e '/internal/chaos$$')
OTHERPKGS = ./internal/traceplot ./internal/prreport ./internal/chaos ./cmd/... ./examples/...

.PHONY: test test-intro bench fmtcheck vet staticcheck unit deps

# Each step says what it does before it starts and how long it took. The
# first run on a fresh machine compiles for a long time: vet and staticcheck
# compile every package and dependency (they share Go's build cache, so the
# second reuses the first's compiled dependencies, but staticcheck also
# builds itself and analyses every dependency's source), and -race compiles
# the standard library and dependencies a second time, instrumented. Later
# runs reuse the caches. Unit tests pass -vet=off: the vet step already ran
# every analyser that go test would. Measured figures: docs/make-test-timing.md.
test: test-intro deps fmtcheck vet staticcheck unit
	@echo "make test: every check passed"

test-intro:
	@echo "make test: 5 steps (deps, fmtcheck, vet, staticcheck, unit). On fresh caches the"
	@echo "first run compiles for 10 to 20 minutes on 2 cores, with minutes of silence"
	@echo "inside vet, staticcheck and unit; later runs reuse the caches."

deps:
	@$(STEP) deps "go mod download and scripts/fetch-ort.sh (ONNX Runtime and the Silero VAD model, once)" -- \
		bash -c '$(GO) mod download && bash scripts/fetch-ort.sh'

fmtcheck:
	@$(STEP) fmtcheck "gofmt -l on every .go file" -- bash -c '\
	out=$$(gofmt -l $$(git ls-files "*.go" 2>/dev/null || find . -name "*.go")); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi'

vet:
	@$(STEP) vet "go vet ./... (a first run compiles every package and dependency: several minutes)" -- \
		$(GO) vet ./...

staticcheck:
	@$(STEP) staticcheck "go tool staticcheck ./... (a first run builds staticcheck and analyses every dependency: several minutes)" -- \
		$(GO) tool staticcheck ./...

# Both halves run even when the first fails, so one run shows every failure.
# The library half runs under scripts/pg-test.sh: it starts a throwaway
# PostgreSQL server (installing Debian's package when missing) and sets
# GAPBENCH_PG_DSN, so internal/history's store tests run against it (under
# CI=true they fail without it).
unit:
	@status=0; \
	$(STEP) unit-race "go test -race on the library packages (a first run compiles the standard library and dependencies again, instrumented: several minutes; each package reports when it ends)" -- \
		bash scripts/pg-test.sh $(GO) test -race -vet=off -count=1 $(RACEPKGS) || status=1; \
	$(STEP) unit "go test on traceplot, prreport, the commands and the examples (they build and run real benchmarks: a few minutes)" -- \
		$(GO) test -vet=off -count=1 $(OTHERPKGS) || status=1; \
	exit $$status

# bench: the main job. `deps` installs ONNX Runtime and the Silero VAD model;
# examples/vad/bench.sh then runs BenchmarkVAD (1 or 2 intra-op threads ×
# spinning on or off, and the null arm, at gaps of 0, 100 µs and 2 ms, in
# interleaved rounds) and BenchmarkVADCensus (where the CPU goes at 2 ms),
# writes everything to bench.txt (git ignores it) and prints
# `go tool benchstat -col /arm` of the main metrics, the verdicts, how many
# of the 18 step-latency rows were decided, and the census. BenchmarkVAD
# runs within a time budget, BENCH_BUDGET (default 300 s, so that the whole
# of make bench fits 6 minutes on a quiet 2-core host): each gap stops once
# every verdict is decided or at the most rounds its share of the budget
# holds, and leaves what it did not spend to the gaps after it.
# -benchtime=4000x at 0 and 100 µs and 300x at 2 ms (docs/noise-levels.md:
# at 2 ms the noise is between blocks, so short blocks and more rounds pay).
# Override with BENCH_BUDGET, BENCH_COUNT (a fixed most rounds), BENCH_STEPS,
# BENCH_STEPS_2MS and BENCH_PLAN (a plan file from `decodegap calibrate
# -plan-out`); see bench.sh.
# The first build of the benchmark binary (go test -c with cgo for ONNX
# Runtime's Go binding) took 75 s on fresh caches at load 3-7, 2026-12-07.
bench: deps
	@echo "make bench: builds examples/vad's benchmark binary (on fresh caches about 75 s on 2 cores, silent), then runs BenchmarkVAD within BENCH_BUDGET (300 s) and the census"
	GO=$(GO) BENCH_OUT=$(CURDIR)/bench.txt bash examples/vad/bench.sh
