package direct_test

import (
	"testing"

	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/direct"
)

// TestConformance runs the shared conformance suite of package codectest.
func TestConformance(t *testing.T) {
	codectest.Conformance(t, direct.Codec)
}
