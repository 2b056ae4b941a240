package libsql

import "testing"

// MaxWritersAuto bounds writes to a loopback server only.
func TestMaxWritersAuto(t *testing.T) {
	for _, tt := range []struct {
		url  string
		n    int
		want int
	}{
		{"http://127.0.0.1:8080", MaxWritersAuto, LoopbackMaxWriters},
		{"http://localhost:8080", MaxWritersAuto, LoopbackMaxWriters},
		{"http://[::1]:8080", MaxWritersAuto, LoopbackMaxWriters},
		{"https://db.example.com", MaxWritersAuto, 0},
		{"http://10.1.2.3", MaxWritersAuto, 0},
		{"http://127.0.0.1", 0, 0},
		{"https://db.example.com", 3, 3},
	} {
		if got := maxWriters(&Config{URL: tt.url, MaxWriters: tt.n}); got != tt.want {
			t.Errorf("%s with %d: got %d, want %d", tt.url, tt.n, got, tt.want)
		}
	}
}

func TestWantCompression(t *testing.T) {
	for _, tt := range []struct {
		url, mode string
		want      bool
	}{
		{"http://127.0.0.1:8080", "", false},
		{"http://localhost:8080", "", false},
		{"http://[::1]:8080", "", false},
		{"https://db.example.com", "", true},
		{"http://10.1.2.3", "", true},
		{"http://127.0.0.1", "gzip", true},
		{"https://db.example.com", "none", false},
	} {
		if got := wantCompression(&Config{URL: tt.url, Compression: tt.mode}); got != tt.want {
			t.Errorf("%s with %q: got %v, want %v", tt.url, tt.mode, got, tt.want)
		}
	}
}
