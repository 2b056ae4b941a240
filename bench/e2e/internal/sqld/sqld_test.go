package sqld

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeEnv makes the test binary, started as sqld, act as a fake one: with
// "serve", it answers GET /health on --http-listen-addr until killed; with
// "fail", it prints a line and exits 1.
const fakeEnv = "SQLD_TEST_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		if err := fakeSqld(mode, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeSqld(mode string, args []string) error {
	if len(args) == 1 && args[0] == "--version" {
		fmt.Println("sqld fake 1.0")
		return nil
	}
	if mode == "fail" {
		return errors.New("boom: the fake sqld fails on purpose")
	}
	var addr, db string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--http-listen-addr":
			addr = args[i+1]
		case "-d":
			db = args[i+1]
		}
	}
	if _, err := os.Stat(filepath.Dir(db)); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
		}
	}))
}

func TestFind(t *testing.T) {
	ctx := context.Background()
	t.Setenv("SQLD", "/from/env/sqld")
	if got, err := Find(ctx, "/from/flag/sqld"); err != nil || got != "/from/flag/sqld" {
		t.Errorf("with a path: %q, %v", got, err)
	}
	if got, err := Find(ctx, ""); err != nil || got != "/from/env/sqld" {
		t.Errorf("with $SQLD: %q, %v", got, err)
	}

	t.Setenv("SQLD", "")
	root := t.TempDir()
	sub := filepath.Join(root, "bench", "e2e")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	if _, err := Find(ctx, ""); err == nil || !strings.Contains(err.Error(), "no scripts/sqld.sh") {
		t.Errorf("without a script: %v", err)
	}
	if err := os.Mkdir(filepath.Join(root, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho /from/script/sqld\n"
	if err := os.WriteFile(filepath.Join(root, "scripts", "sqld.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(ctx, ""); err != nil || got != "/from/script/sqld" {
		t.Errorf("with scripts/sqld.sh two levels up: %q, %v", got, err)
	}
}

func TestVersion(t *testing.T) {
	t.Setenv(fakeEnv, "serve")
	if got := Version(context.Background(), os.Args[0]); got != "sqld fake 1.0" {
		t.Errorf("Version = %q", got)
	}
	if got := Version(context.Background(), filepath.Join(t.TempDir(), "missing")); got != "?" {
		t.Errorf("Version of a missing binary = %q", got)
	}
}

// TestStartStop starts the fake twice, ending one with Stop and one with
// Kill: each serves /health while it runs, in a directory of its own, and
// leaves neither the process nor the directory behind.
func TestStartStop(t *testing.T) {
	t.Setenv(fakeEnv, "serve")
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for name, end := range map[string]func(*Server){"Stop": (*Server).Stop, "Kill": (*Server).Kill} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, err := Start(ctx, os.Args[0])
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Get(s.URL + "/health")
			if err != nil {
				s.Kill()
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET /health: %s", resp.Status)
			}
			end(s)
			select {
			case <-s.done:
			default:
				t.Error("the process is still running")
			}
			if _, err := os.Stat(s.dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the directory %s is still there: %v", s.dir, err)
			}
			if _, err := client.Get(s.URL + "/health"); err == nil {
				t.Error("GET /health still answered after the server ended")
			}
		})
	}
}

func TestStartFails(t *testing.T) {
	t.Setenv(fakeEnv, "fail")
	s, err := Start(context.Background(), os.Args[0])
	if err == nil {
		s.Kill()
		t.Fatal("Start succeeded")
	}
	if !strings.Contains(err.Error(), "exited before becoming healthy") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("the error says neither why nor what sqld logged: %v", err)
	}
}
