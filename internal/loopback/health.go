package loopback

import (
	"context"
	"fmt"
	"io"
	"net/http"
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
