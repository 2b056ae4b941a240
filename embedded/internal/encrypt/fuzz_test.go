package encrypt

import (
	"bytes"
	"testing"
)

// FuzzParseKeyFile: any bytes decode to bounded parameters or are
// refused, never a panic; a file newKeyFile writes decodes to its own
// parameters.
func FuzzParseKeyFile(f *testing.F) {
	good := make([]byte, 0, keyFileLen)
	good = append(good, keyFileMagic...)
	good = append(good, 0, 0, 0, argonTime, 0, 0, 0x4c, 0, argonThreads)
	good = append(good, bytes.Repeat([]byte{7}, saltLen+checkLen)...)
	f.Add(good)
	f.Add(good[:keyFileLen-1])
	f.Add([]byte(keyFileMagic))
	f.Add(bytes.Repeat([]byte{0xff}, keyFileLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		kp, ok := parseKeyFile(b)
		if !ok {
			return
		}
		if kp.memory > 256*1024 || kp.time > 16 || kp.threads > 16 || len(kp.salt) != saltLen || len(kp.check) != checkLen {
			t.Fatalf("unbounded parameters accepted: %+v", kp)
		}
	})
}

func TestNewKeyFileParses(t *testing.T) {
	kf := t.TempDir() + "/x-keycheck"
	k := &Key{}
	b, err := newKeyFile(kf, "pass", k)
	if err != nil {
		t.Fatal(err)
	}
	kp, ok := parseKeyFile(b)
	if !ok || kp.time != argonTime || kp.memory != argonMemory || kp.threads != argonThreads || !bytes.Equal(kp.check, k.check()) {
		t.Fatalf("%+v, %v", kp, ok)
	}
}
