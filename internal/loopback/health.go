package loopback

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// pollInterval is how often WaitHealthy looks again.
const pollInterval = 50 * time.Millisecond

// GetHealth returns nil if GET baseURL/health answers 200.
func GetHealth(ctx context.Context, client *http.Client, baseURL string) error {
	url := baseURL + "/health"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// waitFor is WaitHealthy's loop, the same on every platform: it calls try
// with a health-check client and the base URL of 127.0.0.1:port every
// pollInterval until try returns nil, returning early with alive's error
// if alive, called before each try, reports one, and when ctx ends with an
// error that wraps both ctx's and try's last. waiting names what is waited
// for in that error, given the base URL.
func waitFor(ctx context.Context, alive func(context.Context) error, port int, waiting func(baseURL string) string,
	try func(client *http.Client, baseURL string) error) error {
	client := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
	}
	defer client.CloseIdleConnections()
	baseURL := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last error
	for {
		if err := alive(ctx); err != nil {
			return err
		}
		if last = try(client, baseURL); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %w)", waiting(baseURL), ctx.Err(), last)
		case <-tick.C:
		}
	}
}
