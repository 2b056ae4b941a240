// Package encrypt keeps an embedded replica's files enciphered at rest:
// an SQLite VFS for modernc.org/sqlite that enciphers the database (in 4
// KiB blocks), its WAL (in SQLite's units) and its journals with Adiantum
// (the HBSH construction of XChaCha12, AES-256 and NH-Poly1305, each unit
// tweaked by its offset), under a key derived from a passphrase with Argon2id and a
// random salt kept in a key file beside the database; a cipher for the
// replica's own page spools, under a random key of each spool; and the
// VFS's ciphers for code that reads the database and its WAL as files
// (offline writes' base, and its base file).
//
// Length-preserving encryption stores no nonce or tag: a file keeps its
// size and its pages keep their offsets. It hides the content; it does not
// hide the size of the files, which blocks change and when, nor does it
// detect tampering.
//
// vfs.go is the embedded module's only use of package unsafe: SQLite's VFS
// and file method tables, as modernc.org/sqlite translates them, hold C
// function pointers, which Go code can fill only by writing a func value
// over the field's memory (as modernc.org/sqlite's own vfs package does).
package encrypt

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/gohrana/libsql/embedded/internal/durable"
	"golang.org/x/crypto/argon2"
)

// ErrKey matches (errors.Is) every *KeyError.
var ErrKey = errors.New("embedded: the encryption key does not fit the replica")

// A KeyError is a key that does not fit the replica's files: a wrong key,
// no key for an encrypted replica, a key for a replica written without
// one, or a key file that cannot be used. Nothing was read from the
// database, nor written to it.
type KeyError struct {
	Path   string // the database
	Reason string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("embedded: encryption key of %s: %s", e.Path, e.Reason)
}

// Is matches ErrKey.
func (e *KeyError) Is(target error) bool { return target == ErrKey }

// The reasons of a KeyError.
const (
	ReasonWrongKey    = "wrong key"
	ReasonNoKey       = "the replica is encrypted and no key was given"
	ReasonPlaintext   = "the replica was written without encryption; a key was given"
	ReasonNoKeyFile   = "the database is not plaintext SQLite and its key file is missing (encrypted, or not a replica)"
	ReasonUnknownFile = "the database is not plaintext SQLite (encrypted without its key file, or not a replica) and no key was given"
	ReasonBadKeyFile  = "the key file is damaged"
	ReasonEmptyKey    = "the key is empty"
)

// Argon2id's cost, OWASP's recommended minimum (19 MiB, 2 passes, one
// lane): a replica opens in tens of milliseconds and within the 64 MB the
// replica is held to. It is written in each key file, so it can change.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
)

const (
	keyFileMagic = "libsqlK1"
	saltLen      = 16
	checkLen     = 32
	keyFileLen   = len(keyFileMagic) + 4 + 4 + 1 + saltLen + checkLen
)

// The kinds of file a Key has a subkey for.
const (
	kindMain    = "main"
	kindWAL     = "wal"
	kindJournal = "journal"
)

// KeyFilePath returns the path of the key file of the database at path:
// the salt and cost of the key derivation and a check value of the key,
// nothing secret.
func KeyFilePath(path string) string { return path + "-keycheck" }

// A Key is the derived key of one replica, registered with the VFS while
// open. It covers the database at its path and any other database opened
// with its URIParam (a bootstrap file that is renamed over it).
type Key struct {
	master [32]byte
	token  string
}

// Load checks passphrase against the replica at path and returns its Key,
// registered with the VFS; with encrypted false it checks that the
// replica is not encrypted and returns nil. A new replica (no database, or
// an empty one) with a passphrase gets a key file with a random salt.
// Every mismatch is a *KeyError, found before any page is read.
func Load(path, passphrase string, encrypted bool) (*Key, error) {
	kf := KeyFilePath(path)
	info, infoErr := os.ReadFile(kf)
	if infoErr != nil && !errors.Is(infoErr, os.ErrNotExist) {
		return nil, infoErr
	}
	hasInfo := infoErr == nil
	head, err := readHead(path)
	if err != nil {
		return nil, err
	}
	plaintext := bytes.HasPrefix(head, []byte("SQLite format 3\x00"))
	fail := func(reason string) (*Key, error) { return nil, &KeyError{Path: path, Reason: reason} }

	if !encrypted {
		switch {
		case hasInfo:
			return fail(ReasonNoKey)
		case len(head) > 0 && !plaintext:
			return fail(ReasonUnknownFile)
		}
		return nil, nil
	}
	switch {
	case passphrase == "":
		return fail(ReasonEmptyKey)
	case plaintext:
		return fail(ReasonPlaintext)
	case !hasInfo && len(head) > 0:
		return fail(ReasonNoKeyFile)
	}
	k := &Key{}
	if !hasInfo {
		// newKeyFile derives the key (once) and writes its check value.
		if _, err = newKeyFile(kf, passphrase, k); err != nil {
			return nil, err
		}
	} else {
		kp, ok := parseKeyFile(info)
		if !ok {
			return fail(ReasonBadKeyFile)
		}
		copy(k.master[:], argon2.IDKey([]byte(passphrase), kp.salt, kp.time, kp.memory, kp.threads, 32))
		if !hmac.Equal(k.check(), kp.check) {
			return fail(ReasonWrongKey)
		}
	}
	// Argon2id's 19 MiB are garbage now: handed back to the OS here, they
	// do not add to the replica's peak memory (its page caches live
	// outside the Go heap and could not reuse them).
	debug.FreeOSMemory()
	var tok [16]byte
	rand.Read(tok[:])
	k.token = hex.EncodeToString(tok[:])
	keys.Store(k.token, k)
	return k, nil
}

// readHead returns the first 16 bytes of the file at path, fewer if it
// is shorter, none if it does not exist.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 16)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return head[:n], nil
}

// keyParams is what a key file holds.
type keyParams struct {
	time, memory uint32 // Argon2id's passes and KiB
	threads      uint8
	salt, check  []byte
}

// parseKeyFile decodes a key file: the magic, Argon2id's cost (bounded,
// so that a damaged file cannot ask for gigabytes), the salt and the check
// value.
func parseKeyFile(b []byte) (keyParams, bool) {
	if len(b) != keyFileLen || string(b[:len(keyFileMagic)]) != keyFileMagic {
		return keyParams{}, false
	}
	b = b[len(keyFileMagic):]
	kp := keyParams{time: binary.BigEndian.Uint32(b), memory: binary.BigEndian.Uint32(b[4:]), threads: b[8]}
	b = b[9:]
	kp.salt, kp.check = b[:saltLen], b[saltLen:saltLen+checkLen]
	if kp.time < 1 || kp.time > 16 || kp.memory < 8 || kp.memory > 256*1024 || kp.threads < 1 || kp.threads > 16 {
		return keyParams{}, false
	}
	return kp, true
}

// newKeyFile writes the key file of a new replica, whole or not at all:
// a temporary file, synced, renamed, and the directory synced.
func newKeyFile(kf, passphrase string, k *Key) ([]byte, error) {
	salt := make([]byte, saltLen)
	rand.Read(salt)
	copy(k.master[:], argon2.IDKey([]byte(passphrase), salt, argonTime, argonMemory, argonThreads, 32))
	b := make([]byte, 0, keyFileLen)
	b = append(b, keyFileMagic...)
	b = binary.BigEndian.AppendUint32(b, argonTime)
	b = binary.BigEndian.AppendUint32(b, argonMemory)
	b = append(b, argonThreads)
	b = append(b, salt...)
	b = append(b, k.check()...)

	tmp, err := os.CreateTemp(filepath.Dir(kf), "."+filepath.Base(kf)+"-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err := durable.Replace(tmp, kf, err); err != nil {
		return nil, fmt.Errorf("embedded: write the key file: %w", err)
	}
	return b, nil
}

// check is the key check value: an HMAC of a fixed label, which tells a
// wrong key without deciphering anything.
func (k *Key) check() []byte {
	m := hmac.New(sha256.New, k.master[:])
	m.Write([]byte("libsql embedded replica key check"))
	return m.Sum(nil)
}

// subkey derives the key of one kind of file, so that the database and
// its WAL never encipher under the same key and tweak.
func (k *Key) subkey(kind string) []byte {
	b, err := hkdf.Key(sha256.New, k.master[:], nil, "libsql embedded replica "+kind, 32)
	if err != nil {
		panic(err) // 32 bytes of SHA-256 HKDF cannot fail
	}
	return b
}

// URIParam returns the URI parameter ("name=value") that opens a
// database through the VFS under k.
func (k *Key) URIParam() string { return keyParam + "=" + k.token }

// Close unregisters k and clears it; databases opened with it must be
// closed first.
func (k *Key) Close() {
	if k != nil {
		keys.Delete(k.token)
		clear(k.master[:])
	}
}
