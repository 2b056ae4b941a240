package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFlagsStressDefaults(t *testing.T) {
	c, err := parseFlags([]string{"-runs", "8"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.runs != 8 || c.rounds != 0 || c.workers != 32 || c.per != 50 || c.busy != runtime.NumCPU() || c.deadline != time.Minute {
		t.Errorf("config %+v", c)
	}
	if c.variant.Name != "direct" || c.variant.WS() {
		t.Errorf("variant %v, want direct over HTTP", c.variant)
	}
	if len(c.sets) != 1 || c.sets[0].label != "" || c.sets[0].params != nil || c.sets[0].name() != "(defaults)" {
		t.Errorf("sets %+v, want the driver's defaults alone", c.sets)
	}
}

func TestParseFlagsThroughputDefaults(t *testing.T) {
	c, err := parseFlags([]string{"-rounds", "5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.rounds != 5 || c.runs != 0 || c.sample != 3*time.Second || c.latency != 0 {
		t.Errorf("config %+v", c)
	}
	var labels []string
	for _, s := range c.sets {
		labels = append(labels, s.label)
	}
	if want := []string{"maxWriters=0", "maxWriters=1", "maxWriters=2", "maxWriters=4"}; !slices.Equal(labels, want) {
		t.Errorf("sets %q, want %q", labels, want)
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"-rounds", "1", "-seconds", "2", "-latency", "10ms", "-codec", "protobuf", "-transport", "ws",
		"-params", "maxWriters=0; maxWriters=1, compression=gzip", "-sqld", "/opt/sqld"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.sample != 2*time.Second || c.latency != 10*time.Millisecond || c.sqld != "/opt/sqld" {
		t.Errorf("config %+v", c)
	}
	if c.variant.Name != "ws_protobuf" {
		t.Errorf("variant %v, want ws_protobuf", c.variant)
	}
	if len(c.sets) != 2 || c.sets[1].label != "maxWriters=1, compression=gzip" ||
		!slices.Equal(c.sets[1].params, []string{"maxWriters=1", "compression=gzip"}) {
		t.Errorf("sets %+v", c.sets)
	}

	c, err = parseFlags([]string{"-runs", "1", "-params", ";maxWriters=0", "-workers", "8", "-per", "20", "-busy", "0", "-deadline", "5s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.workers != 8 || c.per != 20 || c.busy != 0 || c.deadline != 5*time.Second {
		t.Errorf("config %+v", c)
	}
	if len(c.sets) != 2 || c.sets[0].name() != "(defaults)" || c.sets[1].name() != "maxWriters=0" {
		t.Errorf("sets %+v", c.sets)
	}
}

func TestParseFlagsErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "either -runs or -rounds"},
		{[]string{"-runs", "1", "-rounds", "1"}, "either -runs or -rounds"},
		{[]string{"-runs", "-1"}, "must not be negative"},
		{[]string{"-runs", "1", "-latency", "1ms"}, "-latency does not apply to -runs"},
		{[]string{"-runs", "1", "-seconds", "1"}, "-seconds does not apply to -runs"},
		{[]string{"-rounds", "1", "-workers", "4"}, "-workers does not apply to -rounds"},
		{[]string{"-rounds", "1", "-busy", "1"}, "-busy does not apply to -rounds"},
		{[]string{"-rounds", "1", "-seconds", "0"}, "must be positive"},
		{[]string{"-runs", "1", "-per", "0"}, "must be positive"},
		{[]string{"-runs", "1", "-codec", "xml"}, `-codec "xml"`},
		{[]string{"-runs", "1", "-transport", "udp"}, `-transport "udp"`},
		{[]string{"-runs", "1", "-params", "maxWriters"}, `"maxWriters" is not key=value`},
		{[]string{"-runs", "1", "-params", "maxWriters=lots"}, "maxWriters: want auto or a whole number"},
		{[]string{"-runs", "1", "-params", "maxWriter=1"}, "unknown parameter"},
		{[]string{"-runs", "1", "extra"}, "unexpected arguments"},
	} {
		_, err := parseFlags(c.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one saying %q", c.args, err, c.want)
		}
	}
}

func TestRunUsage(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(nil, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "either -runs or -rounds") {
		t.Errorf("no flags: exit %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	if _, err := parseFlags([]string{"-h"}, &stderr); !errors.Is(err, flag.ErrHelp) || !strings.Contains(stderr.String(), "-latency") {
		t.Errorf("-h: %v, stderr %q", err, stderr.String())
	}
	if code := run([]string{"-h"}, io.Discard, io.Discard); code != 0 {
		t.Errorf("-h: exit %d", code)
	}
}
