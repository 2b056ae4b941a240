package main

import (
	"slices"
	"testing"
)

func TestVariantDSN(t *testing.T) {
	const base = "http://127.0.0.1:8080"
	for _, c := range []struct {
		v    variant
		want string
	}{
		{direct, base + "?codec=direct"},
		{directDeferred, base + "?codec=direct&deferredExec=1"},
		{peer, base},
		{ceiling, base},
		{peerWS, "ws://127.0.0.1:8080"},
		{oursWS, "ws://127.0.0.1:8080?codec=direct"},
		{oursWSProtobuf, "ws://127.0.0.1:8080?codec=protobuf"},
		{pointFloorWS, "ws://127.0.0.1:8080"},
	} {
		if got := c.v.dsn(base); got != c.want {
			t.Errorf("%s: dsn %q, want %q", c.v.name, got, c.want)
		}
	}
}

// TestWorkloadVariants checks that every workload runs both peers and
// every variant of ours, over both transports, and that the variants over
// WebSocket name their twin over HTTP.
func TestWorkloadVariants(t *testing.T) {
	for _, w := range workloads() {
		have := map[string]bool{}
		for _, v := range w.variants {
			if have[v.name] {
				t.Errorf("%s: variant %s twice", w.name, v.name)
			}
			have[v.name] = true
		}
		for _, v := range append(append(append([]variant{}, ours...), oursWSAll...), peer, peerWS) {
			if !have[v.name] {
				t.Errorf("%s lacks variant %s", w.name, v.name)
			}
		}
	}
	for _, v := range oursWSAll {
		if tw := twinOf(v.name); !v.ws || !slices.Contains(names(ours), tw) {
			t.Errorf("%s: twin %q is not one of ours over HTTP", v.name, tw)
		}
	}
}
