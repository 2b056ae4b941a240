# make test   everything CI runs (.ci/run), from a fresh machine: formatting,
#             vet, unit tests, then the integration tests against a real sqld
#             in a container (installs and starts Docker if needed).
# make demo   runs examples/quickstart against a throwaway local sqld.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c

IMAGE ?= gohrana/sqld:0.24.32
ITEST_TIMEOUT ?= 15m
# The integration tests run the local image with host networking on
# 127.0.0.1; Ryuk (the reaper container) cannot be pulled here and the tests
# terminate their containers themselves.
ITEST_ENV := LIBSQL_ITEST_IMAGE=$(IMAGE) LIBSQL_ITEST_NETWORK=host \
	TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1

.PHONY: test fmt-check vet unit itest docker image demo

test: fmt-check vet unit itest

fmt-check:
	@files=$$(gofmt -l .); \
	if [ -n "$$files" ]; then echo "gofmt needed on:"; echo "$$files"; exit 1; fi

vet:
	go vet ./...
	cd itest && go vet ./...

unit:
	go test -race -timeout 10m ./...

docker:
	scripts/docker.sh

image: docker
	scripts/image.sh $(IMAGE)

itest: image
	cd itest && $(ITEST_ENV) go test -race -count=1 -timeout $(ITEST_TIMEOUT) ./...

demo:
	scripts/demo.sh

# make perf-compare BASE=<git rev>: builds bench/cmd/libsql-perf against BASE
# and the working tree, runs three interleaved rounds and prints a Markdown
# table of the deltas (see docs/PERF.md; PERF_ARGS passes flags through).
.PHONY: perf-compare
perf-compare:
	@if [ -z "$(BASE)" ]; then echo "usage: make perf-compare BASE=<git rev>" >&2; exit 2; fi
	scripts/perf-compare.sh $(BASE)

# make fuzz   runs every fuzz target for FUZZTIME each (CI runs only their
#             seed corpora, as part of the unit tests).
FUZZTIME ?= 2m
FUZZ_TARGETS := \
	./codec/codectest:FuzzDifferential \
	./codec/codectest:FuzzEncodeRoundTrip \
	./codec/direct:FuzzDecodePipeline \
	./codec/direct:FuzzDecodeOther \
	./codec/direct:FuzzEncodeRoundTrip \
	./internal/h1:FuzzReadResponse \
	.:FuzzDSN

.PHONY: fuzz
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name ($$pkg, $(FUZZTIME))"; \
		go test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s -parallel 2 $$pkg || exit 1; \
	done

# make bench-e2e   end-to-end comparison with github.com/tursodatabase/libsql-client-go
#                  against a throwaway local sqld (module bench/e2e; see docs/E2E.md).
#                  Extra flags: make bench-e2e E2E_FLAGS='-rounds 5 -json /tmp/e2e.json'
.PHONY: bench-e2e
bench-e2e:
	cd bench/e2e && go run ./cmd/e2e-run $(E2E_FLAGS)
