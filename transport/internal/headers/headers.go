// Package headers builds what every request of a transport carries (the
// caller's headers and the namespace headers) and keeps the secrets among
// them, the auth token and the header values, so that text the server
// echoes can be redacted before it reaches an error.
package headers

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync"
)

// The headers that name the namespace (database) of a request to a sqld that
// serves several. sqld 0.24 reads only Namespace64, the name in unpadded
// standard base64; later versions and Turso document Namespace, the name as
// is. Both are sent.
const (
	Namespace   = "X-Namespace"
	Namespace64 = "X-Namespace-Bin"
)

// minSecret is the shortest header value treated as a secret: a short one
// (a "1" flag) would redact half a message.
const minSecret = 8

// Set is the headers of a transport's requests and the secrets to redact.
// It is safe for concurrent use.
type Set struct {
	// Header is sent with every request; nil when there is nothing to send.
	// It is shared: callers copy values out, never write to it.
	Header  http.Header
	secrets []string
	// tokens are the tokens a TokenSource gave, the latest last: they are
	// redacted too.
	mu     sync.Mutex
	tokens []string
}

// maxTokens is how many of a TokenSource's latest tokens are redacted.
const maxTokens = 4

// Remember adds a token that a TokenSource gave to the secrets redacted
// (the latest few: an older one no longer reaches a server).
func (s *Set) Remember(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.tokens); n > 0 && s.tokens[n-1] == token {
		return
	}
	s.tokens = append(s.tokens, token)
	if len(s.tokens) > maxTokens {
		s.tokens = append(s.tokens[:0], s.tokens[len(s.tokens)-maxTokens:]...)
	}
}

// New returns the Set for an auth token, the caller's extra headers (copied)
// and a namespace. The namespace is not a secret: an error naming it must
// keep it.
func New(token string, extra http.Header, namespace string) *Set {
	s := &Set{}
	if token != "" {
		s.secrets = append(s.secrets, token)
	}
	if len(extra) == 0 && namespace == "" {
		return s
	}
	s.Header = extra.Clone()
	if s.Header == nil {
		s.Header = http.Header{}
	}
	for _, vs := range s.Header {
		for _, v := range vs {
			if len(v) >= minSecret {
				s.secrets = append(s.secrets, v)
			}
		}
	}
	if namespace != "" {
		s.Header.Set(Namespace, namespace)
		s.Header.Set(Namespace64, base64.RawStdEncoding.EncodeToString([]byte(namespace)))
	}
	return s
}

// Redact replaces every secret in text with [REDACTED].
func (s *Set) Redact(text string) string {
	for _, secret := range s.secrets {
		if strings.Contains(text, secret) {
			text = strings.ReplaceAll(text, secret, "[REDACTED]")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tok := range s.tokens {
		if tok != "" && strings.Contains(text, tok) {
			text = strings.ReplaceAll(text, tok, "[REDACTED]")
		}
	}
	return text
}

// Scrub returns err, or an error of the same text redacted if that text holds
// a secret (its chain is then lost, which only a proxy that echoes
// credentials costs).
func (s *Set) Scrub(err error) error {
	if err == nil {
		return err
	}
	if text := err.Error(); s.Redact(text) != text {
		return errors.New(s.Redact(text))
	}
	return err
}
