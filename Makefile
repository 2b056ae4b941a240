# make test   everything CI runs (.ci/run), from a fresh machine: formatting,
#             build + vet + staticcheck of every module, a build + vet of the
#             root module with the oldest Go it supports (compat), unit tests,
#             the examples per tool against a throwaway sqld (examples), the
#             embedded replica's and the OpenTelemetry adapter's tests
#             against sqld processes of their own (embedded, otel) and, at
#             the same time (make servers), the integration tests against a
#             real sqld in a container (installs and starts Docker if
#             needed).
# make demo   runs examples/quickstart against a throwaway local sqld.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c

IMAGE ?= gohrana/sqld:0.24.32
ITEST_TIMEOUT ?= 30m
# The integration tests run the local image with host networking on
# 127.0.0.1; Ryuk (the reaper container) cannot be pulled here and the tests
# terminate their containers themselves.
ITEST_ENV := LIBSQL_ITEST_IMAGE=$(IMAGE) LIBSQL_ITEST_NETWORK=host \
	TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1

.PHONY: test docker-early fmt-check size-check tidy-check build vet lint compat unit itest docker image demo embedded otel fetch-check

test: docker-early fmt-check size-check tidy-check build vet lint compat servers

# make servers   the tests, in two groups at once (each group's in order;
#                scripts/together.sh prefixes each line with its group):
#                the unit tests, the examples, the embedded replica's, the
#                OpenTelemetry adapter's and fetch-check, beside the
#                integration tests, which spend most of their time waiting.
.PHONY: servers
servers:
	@scripts/together.sh "unit examples embedded otel fetch-check" "itest"

# docker-early starts the Docker engine in the background (installing it if
# need be; log in .cache/docker-early.log) while the checks before itest
# run, so that it is up when itest needs it. scripts/docker.sh takes a
# lock, so make docker waits for this start rather than racing it, and
# reports its failure if it failed.
docker-early:
	@mkdir -p .cache; scripts/docker.sh > .cache/docker-early.log 2>&1 </dev/null &

# Every module of the repository: the driver (root) and the ones with their
# own go.mod, which the root's ./... does not reach.
MODULES := . itest itest/cmd/capture-ws bench codec/protobuf/prototest embedded otel scripts/fetchcheck

fmt-check:
	@files=$$(gofmt -l .); \
	if [ -n "$$files" ]; then echo "gofmt needed on:"; echo "$$files"; exit 1; fi

# No tracked file over 1 MB outside testdata/ (a committed binary, a stray
# dump): the repository stays quick to clone.
MAX_FILE_BYTES := 1048576

size-check:
	@big=$$(git ls-files -z | xargs -0 stat -c '%s %n' 2>/dev/null | \
		awk -v max=$(MAX_FILE_BYTES) '$$1 > max && $$2 !~ /(^|\/)testdata\// { print $$2 " (" $$1 " bytes)" }'); \
	if [ -n "$$big" ]; then echo "tracked files over $(MAX_FILE_BYTES) bytes outside testdata/:"; echo "$$big"; exit 1; fi

# Every go.mod and go.sum is as go mod tidy leaves it (examples' too).
tidy-check:
	@failed=; \
	for m in $(MODULES); do \
		(cd $$m && go mod tidy -diff >/dev/null) || failed="$$failed $$m"; \
	done; \
	if [ -n "$$failed" ]; then echo "go mod tidy needed in:$$failed (go mod tidy -diff shows what)" >&2; exit 1; fi

# -o /dev/null: compile and link every package, commands included, but leave
# no binary behind in the tree (a lone main package would otherwise be
# written next to its go.mod).
build:
	@for m in $(MODULES); do echo "== go build ($$m)"; (cd $$m && go build -o /dev/null ./...); done

# vet also type-checks the _test.go files, so test code that no longer
# compiles fails here even in modules whose tests CI does not run.
vet:
	@for m in $(MODULES); do echo "== go vet ($$m)"; (cd $$m && go vet ./...); done

# staticcheck, pinned. `go run pkg@version` needs nothing but the Go module
# proxy on a fresh machine, resolves the same dependency versions everywhere
# (the tool's own go.mod, checked against the checksum database), leaves no
# tools go.mod in this repository to keep in step, and from Go 1.24 on caches
# the linked binary in the build cache, so a rerun starts it in under a second;
# its analysis results are cached too (~/.cache/staticcheck). The build cache
# is per user, not per clone, so CI's fresh clones reuse it as well.
# Every module is checked before failing, so one run lists all findings.
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK := go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint:
	@failed=; \
	for m in $(MODULES); do \
		echo "== staticcheck $(STATICCHECK_VERSION) ($$m)"; \
		(cd $$m && $(STATICCHECK) ./...) || failed="$$failed $$m"; \
	done; \
	if [ -n "$$failed" ]; then echo "staticcheck findings in:$$failed" >&2; exit 1; fi

# The oldest Go the root module (the driver users import) is checked to
# build and vet with, so that raising the floor by accident fails CI.
# GOTOOLCHAIN=goX.Y.Z fetches that toolchain from the Go module proxy once
# (into the module cache) and reuses it after. The check reads a copy of
# go.mod whose go line is lowered to COMPAT_GO's language version (through
# -modfile, so the tree is not copied and go.mod is not touched); a go.mod
# that already says that version or less is checked as it is. Raise
# COMPAT_GO only together with the go line users are promised.
COMPAT_GO ?= 1.24.13
COMPAT_LANG := $(word 1,$(subst ., ,$(COMPAT_GO))).$(word 2,$(subst ., ,$(COMPAT_GO)))
COMPAT_MOD := .cache/compat/go.mod

compat:
	@mkdir -p $(dir $(COMPAT_MOD)); \
	cur=$$(sed -n 's/^go //p' go.mod); \
	if [ "$$(printf '%s\n' "$$cur" $(COMPAT_LANG) | sort -V | head -n1)" = "$$cur" ]; then \
		cp go.mod $(COMPAT_MOD); \
	else \
		echo "note: go.mod says go $$cur; checking with go $(COMPAT_LANG) in a copy"; \
		sed -e 's/^go .*/go $(COMPAT_LANG)/' -e '/^toolchain /d' go.mod > $(COMPAT_MOD); \
	fi; \
	cp go.sum $(COMPAT_MOD:.mod=.sum)
	@echo "== go build + go vet (root) with go$(COMPAT_GO)"
	GOTOOLCHAIN=go$(COMPAT_GO) go build -modfile=$(COMPAT_MOD) -o /dev/null ./...
	GOTOOLCHAIN=go$(COMPAT_GO) go vet -modfile=$(COMPAT_MOD) ./...

# The unit tests of the driver module and of the modules whose tests need
# no server: the Protobuf reference (prototest) and the benchmark harnesses
# (their report and fixture tests); and of itest's one package that needs
# none, sqlscandiff (sqlscan against SQLite's C API).
UNIT_MODULES := . codec/protobuf/prototest bench itest/sqlscandiff

unit:
	@for m in $(UNIT_MODULES); do echo "== go test ($$m)"; (cd $$m && go test -race -timeout 10m ./...); done

# make embedded   the embedded replica's module (embedded/, modernc.org/sqlite):
#                 unit tests and the integration tests, which start sqld
#                 processes of their own from the binary of scripts/sqld.sh
#                 (no Docker). EMBEDDED_FLAGS passes more go test flags.
EMBEDDED_FLAGS ?=

embedded:
	@sqld=$$(scripts/sqld.sh); \
	cd embedded && LIBSQL_EMBEDDED_SQLD=$$sqld go test -race -count=1 -timeout 10m $(EMBEDDED_FLAGS) ./...

# make otel   the OpenTelemetry adapter's module (otel/): its tests against
#             the scripted fake, through XSAM/otelsql, and against a sqld
#             process of their own from the binary of scripts/sqld.sh, over
#             HTTP and WebSocket (a few seconds). OTEL_FLAGS passes more go
#             test flags.
OTEL_FLAGS ?=

otel:
	@sqld=$$(scripts/sqld.sh); \
	cd otel && LIBSQL_OTEL_SQLD=$$sqld go test -race -count=1 -timeout 5m $(OTEL_FLAGS) ./...

# make fetch-check   the published modules (embedded, otel) build as
#                    dependencies of a program outside the repository, with
#                    no replace directive: scripts/fetchcheck serves this
#                    commit's modules (HEAD: commit first) from a file-based
#                    module proxy, builds a throwaway module that requires
#                    them and runs it against a sqld of its own (~30 s with
#                    a warm build cache). docs/dev/RELEASING.md says why.
fetch-check:
	@sqld=$$(scripts/sqld.sh); \
	cd scripts/fetchcheck && go run . -repo ../.. -sqld "$$sqld"

docker:
	scripts/docker.sh

image: docker
	scripts/image.sh $(IMAGE)

# ITEST_FLAGS passes more go test flags, e.g. ITEST_FLAGS=-json for a
# report of every test's time, or ITEST_FLAGS='-run TestX'.
ITEST_FLAGS ?=

# itest's TestProxy runs a real forward proxy: Debian's tinyproxy.
itest: image
	@command -v tinyproxy >/dev/null || scripts/apt-install.sh tinyproxy
	cd itest && $(ITEST_ENV) go test -race -count=1 -timeout $(ITEST_TIMEOUT) $(ITEST_FLAGS) ./...

demo:
	scripts/demo.sh

# make examples   vets and tests every example module (examples/*/go.mod:
#                 GORM, sqlx, goose, golang-migrate, bun, vectors, and the check that
#                 the Go snippets of README.md, examples/README.md,
#                 docs/*.md and docs/dev/*.md compile and that every
#                 Markdown file's relative links resolve) against one throwaway
#                 local sqld, two modules at a time (EXAMPLES_JOBS). Each
#                 module has its own go.mod, so the tools stay out of the
#                 driver's; they are built, vetted and linted with the others.
EXAMPLE_MODULES := $(patsubst %/go.mod,%,$(wildcard examples/*/go.mod))
MODULES += $(EXAMPLE_MODULES)

.PHONY: examples
examples:
	scripts/examples.sh

# make perf-compare BASE=<git rev>: builds bench/cmd/libsql-perf against BASE
# and the working tree, runs three interleaved rounds and prints a Markdown
# table of the deltas (see docs/dev/PERF.md; PERF_ARGS passes flags through).
.PHONY: perf-compare
perf-compare:
	@if [ -z "$(BASE)" ]; then echo "usage: make perf-compare BASE=<git rev>" >&2; exit 2; fi
	scripts/perf-compare.sh $(BASE)

# make fuzz   runs every fuzz target for FUZZTIME each (CI runs only their
#             seed corpora, as part of the unit tests).
FUZZTIME ?= 2m
# Each target is package:Name, the package relative to the root module or,
# for another module, module-dir/package (the module is the nearest
# directory up from the package with a go.mod).
FUZZ_TARGETS := \
	./codec/codectest:FuzzDifferential \
	./codec/codectest:FuzzDifferentialServerMsg \
	./codec/codectest:FuzzEncodeRoundTrip \
	./codec/direct:FuzzDecodePipeline \
	./codec/direct:FuzzDecodeOther \
	./codec/direct:FuzzDecodeServerMsg \
	./codec/direct:FuzzEncodeRoundTrip \
	./codec/gojson:FuzzDecodeServerMsg \
	./codec/protobuf:FuzzDecodePipeline \
	./codec/protobuf:FuzzDecodeCursor \
	./codec/protobuf:FuzzDecodeServerMsg \
	./codec/protobuf/prototest:FuzzDifferential \
	./codec/protobuf/prototest:FuzzEncodeRoundTrip \
	./internal/http1:FuzzReadResponse \
	./sqlscan:FuzzScan \
	./sqlscan:FuzzScanClassify \
	./sqlscan:FuzzAnalyze \
	./itest/sqlscandiff:FuzzSQLScanDifferential \
	./transport/ws:FuzzServerMessage \
	./embedded/internal/replog:FuzzDecoders \
	./embedded/internal/replog:FuzzStream \
	./embedded/internal/replica:FuzzSyncGarbage \
	./embedded/internal/vector:FuzzVectorFunctions \
	./embedded:FuzzDecodeTxn \
	.:FuzzDSN \
	.:FuzzVectorBlob \
	.:FuzzVectorText

.PHONY: fuzz
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; dir=$$pkg; \
		while [ "$$dir" != . ] && [ ! -f "$$dir/go.mod" ]; do dir=$$(dirname $$dir); done; \
		if [ "$$dir" = "$$pkg" ]; then pkg=.; elif [ "$$dir" != . ]; then pkg=./$${pkg#$$dir/}; fi; \
		echo "== $$name ($$dir $$pkg, $(FUZZTIME))"; \
		(cd $$dir && go test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s -parallel 2 $$pkg) || exit 1; \
	done

# make bench-e2e   end-to-end comparison with github.com/tursodatabase/libsql-client-go
#                  against a throwaway local sqld (bench/e2e, in the bench module; see docs/dev/E2E.md).
#                  Extra flags: make bench-e2e E2E_FLAGS='-rounds 5 -json /tmp/e2e.json'
.PHONY: bench-e2e
bench-e2e:
	cd bench/e2e && go run ./cmd/e2e-run $(E2E_FLAGS)

# make bench-writers   concurrent autocommit writers per set of DSN parameters
#                      (issue 11, maxWriters), each sample on a throwaway sqld
#                      (bench/e2e/cmd/writers; see docs/dev/RELIABILITY.md and
#                      docs/dev/PERF.md). WRITERS_FLAGS says which measurement:
#                      make bench-writers WRITERS_FLAGS="-runs 8 -params ';maxWriters=0'"
#                      make bench-writers WRITERS_FLAGS='-rounds 7 -seconds 2'
WRITERS_FLAGS ?= -rounds 3
.PHONY: bench-writers
bench-writers:
	cd bench/e2e && go run ./cmd/writers $(WRITERS_FLAGS)
