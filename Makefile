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
