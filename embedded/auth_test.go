package embedded_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gohrana/libsql/embedded"
	"github.com/gohrana/libsql/internal/sqldproc"
)

// jwt returns a compact EdDSA JWT of claims signed with key.
func jwt(t *testing.T, key ed25519.PrivateKey, claims map[string]any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "EdDSA", "typ": "JWT"})
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	signed := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	return signed + "." + enc.EncodeToString(ed25519.Sign(key, []byte(signed)))
}

// TestAuth: against a primary that checks JWTs, the token of
// WithAuthToken reaches both the statements and the replication calls;
// without it, writes and syncs fail and nothing is applied.
func TestAuth(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := sqlds.StartWith(t, sqldproc.Config{Env: []string{"SQLD_AUTH_JWT_KEY=" + base64.RawURLEncoding.EncodeToString(pub)}})
	token := jwt(t, priv, map[string]any{"iat": time.Now().Unix()})

	r := openReplica(t, "", p.URL(), embedded.WithAuthToken(token), embedded.WithSyncInterval(0))
	mustExec(t, r.db, "CREATE TABLE secret (v TEXT)")
	mustExec(t, r.db, "INSERT INTO secret VALUES ('ok')")
	if got := one[string](t, r.db, "SELECT v FROM secret"); got != "ok" {
		t.Errorf("read after write: %q", got)
	}

	anon := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0))
	if _, err := anon.c.Sync(testCtx(t)); err == nil {
		t.Error("a sync without a token succeeded")
	}
	if _, err := anon.db.Exec("INSERT INTO secret VALUES ('no')"); err == nil {
		t.Error("a write without a token succeeded")
	}
	if _, err := anon.db.Query("SELECT * FROM secret"); err == nil {
		t.Error("an unsynced replica has the table")
	}
}

// TestNamespace: a replica of one database of a sqld that serves several
// (the namespace in the DSN reaches the replication calls as
// x-namespace-bin) has that database's tables only.
func TestNamespace(t *testing.T) {
	p := sqlds.StartWith(t, sqldproc.Config{Args: []string{"--enable-namespaces"}, Listen: []string{sqldproc.AdminFlag}})
	for _, ns := range []string{"alpha", "beta"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.ListenAddr(sqldproc.AdminFlag)+"/v1/namespaces/"+ns+"/create", bytes.NewReader([]byte("{}")))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("create namespace %s: HTTP %d", ns, resp.StatusCode)
		}
	}
	beta := primaryDB(t, p.URL()+"?namespace=beta")
	mustExec(t, beta, "CREATE TABLE only_beta (v)")

	r := openReplica(t, "", p.URL()+"?namespace=alpha", embedded.WithSyncInterval(0))
	mustExec(t, r.db, "CREATE TABLE only_alpha (v)")
	mustExec(t, r.db, "INSERT INTO only_alpha VALUES (1)")
	if got := one[int](t, r.db, "SELECT count(*) FROM only_alpha"); got != 1 {
		t.Errorf("alpha: %d rows", got)
	}
	if got := one[string](t, localFile(t, r.path), "SELECT group_concat(name) FROM sqlite_schema"); got != "only_alpha" {
		t.Errorf("the local file has %q", got)
	}
}
