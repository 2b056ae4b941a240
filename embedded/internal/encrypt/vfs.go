package encrypt

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"lukechampine.com/adiantum"
	"lukechampine.com/adiantum/hbsh"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// VFSName is the SQLite VFS that encrypts: open a database through it
// with the DSN parameters "vfs=" + VFSName and Key.URIParam.
const VFSName = "libsql-embedded-adiantum"

// BlockSize is the unit of encryption of every file but a WAL: it is read
// and written in whole 4 KiB blocks at multiples of BlockSize, each
// enciphered with Adiantum under its offset as the tweak. It is the
// replica's page size, so a database page is one block.
//
// A WAL is enciphered in the units SQLite writes it in: its 32-byte
// header, and each frame's 24-byte header and 4 KiB page, each under its
// offset. So each unit is written whole by one write of SQLite's, a write
// never rewrites a neighbour (a commit already synced), and reading a page
// deciphers the page alone.
const BlockSize = 4096

// The WAL's layout (https://sqlite.org/fileformat2.html#walformat) with
// the replica's page size.
const (
	walHeader      = 32
	walFrameHeader = 24
	walFrame       = walFrameHeader + BlockSize
)

// keyParam is the URI parameter that names a registered Key.
const keyParam = "libsql_key"

// The shim sits between SQLite and the default VFS (unix): each file it
// opens is the default VFS's file, preceded by a header of its own.
//
//	pFile+0:  sqlite3_file.pMethods (ioMethods)
//	pFile+8:  the handle of the *file in files
//	pFile+16: the default VFS's sqlite3_file
const shimHeader = 16

var (
	registerOnce sync.Once
	registerErr  error

	// theVFS and ioMethods are read by SQLite through pointers; as Go
	// globals they never move.
	theVFS    sqlite3.Tsqlite3_vfs
	ioMethods sqlite3.Tsqlite3_io_methods
	baseVFS   uintptr // the default VFS, which does the I/O
	cKeyParam uintptr // keyParam as a C string

	keys    sync.Map // token → *Key
	files   sync.Map // handle → *file
	handles atomic.Uintptr
)

// Register registers the VFS with SQLite (once per process).
func Register() error {
	registerOnce.Do(func() { registerErr = register() })
	return registerErr
}

func register() error {
	tls := libc.NewTLS()
	defer tls.Close()
	if rc := sqlite3.Xsqlite3_initialize(tls); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("encrypt: sqlite3_initialize: %d", rc)
	}
	baseVFS = sqlite3.Xsqlite3_vfs_find(tls, 0)
	if baseVFS == 0 {
		return fmt.Errorf("encrypt: no default VFS")
	}
	base := (*sqlite3.Tsqlite3_vfs)(ptr(baseVFS))
	var err error
	if cKeyParam, err = libc.CString(keyParam); err != nil {
		return err
	}
	name, err := libc.CString(VFSName)
	if err != nil {
		return err
	}
	// Every method but xOpen is the default VFS's own: they take the VFS
	// only for its pAppData and mxPathname, copied here.
	theVFS = *base
	theVFS.FszOsFile = base.FszOsFile + shimHeader
	theVFS.FzName = name
	theVFS.FpNext = 0
	*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&theVFS.FxOpen)) = xOpen

	ioMethods.FiVersion = 3
	*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&ioMethods.FxClose)) = xClose
	*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&ioMethods.FxRead)) = xRead
	*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&ioMethods.FxWrite)) = xWrite
	*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&ioMethods.FxTruncate)) = xTruncate
	*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&ioMethods.FxSync)) = xSync
	*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&ioMethods.FxFileSize)) = xFileSize
	*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&ioMethods.FxLock)) = xLock
	*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&ioMethods.FxUnlock)) = xUnlock
	*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&ioMethods.FxCheckReservedLock)) = xCheckReservedLock
	*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&ioMethods.FxFileControl)) = xFileControl
	*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&ioMethods.FxSectorSize)) = xSectorSize
	*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&ioMethods.FxDeviceCharacteristics)) = xDeviceCharacteristics
	*(*func(*libc.TLS, uintptr, int32, int32, int32, uintptr) int32)(unsafe.Pointer(&ioMethods.FxShmMap)) = xShmMap
	*(*func(*libc.TLS, uintptr, int32, int32, int32) int32)(unsafe.Pointer(&ioMethods.FxShmLock)) = xShmLock
	*(*func(*libc.TLS, uintptr))(unsafe.Pointer(&ioMethods.FxShmBarrier)) = xShmBarrier
	*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&ioMethods.FxShmUnmap)) = xShmUnmap
	*(*func(*libc.TLS, uintptr, int64, int32, uintptr) int32)(unsafe.Pointer(&ioMethods.FxFetch)) = xFetch
	*(*func(*libc.TLS, uintptr, int64, uintptr) int32)(unsafe.Pointer(&ioMethods.FxUnfetch)) = xUnfetch

	if rc := sqlite3.Xsqlite3_vfs_register(tls, uintptr(unsafe.Pointer(&theVFS)), 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("encrypt: register the VFS: %d", rc)
	}
	return nil
}

// ptr turns an address SQLite handed over (C memory of modernc's libc, or
// a Go global) into a pointer, in the form go vet accepts.
func ptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// file is the state of one open file: its cipher, and the plaintext of
// the unit last written, which saves reading and deciphering it again
// when the next write continues it (a write that is not unit-aligned: a
// rollback journal's header, a temporary file's). That copy serves only
// such a write, only to a file no other connection writes (not a
// database or a WAL, whose units SQLite writes whole anyway), and only
// while this connection holds the lock it wrote under: every unlock
// drops it. A read always reads the file: another connection may have
// written the unit since (a WAL restarted over the same frames).
type file struct {
	real   uintptr // the default VFS's sqlite3_file
	cipher *hbsh.HBSH
	wal    bool    // units as unitOf says for a WAL, else blocks
	shared bool    // a database or a WAL, which other connections write too
	cbuf   uintptr // buf's C memory: the default VFS reads and writes there
	buf    []byte  // a unit's scratch space
	tweak  [16]byte
	last   int64 // the offset of the unit in lastB, or -1
	lastB  [BlockSize]byte
}

// unitOf returns the unit of encryption that holds offset off: its start
// and length.
func (f *file) unitOf(off int64) (start int64, n int) {
	if !f.wal {
		return off / BlockSize * BlockSize, BlockSize
	}
	if off < walHeader {
		return 0, walHeader
	}
	frame := walHeader + (off-walHeader)/walFrame*walFrame
	if off-frame < walFrameHeader {
		return frame, walFrameHeader
	}
	return frame + walFrameHeader, BlockSize
}

func fileOf(pFile uintptr) *file {
	h := *(*uintptr)(ptr(pFile + 8))
	f, _ := files.Load(h)
	return f.(*file)
}

// methods returns the default VFS's methods of the real file.
func (f *file) methods() *sqlite3.Tsqlite3_io_methods {
	return (*sqlite3.Tsqlite3_io_methods)(ptr((*sqlite3.Tsqlite3_file)(ptr(f.real)).FpMethods))
}

func xOpen(tls *libc.TLS, pVfs, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	sf := (*sqlite3.Tsqlite3_file)(ptr(pFile))
	sf.FpMethods = 0
	real := pFile + shimHeader
	base := (*sqlite3.Tsqlite3_vfs)(ptr(baseVFS))
	rc := (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{base.FxOpen})))(tls, baseVFS, zName, real, flags, pOutFlags)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	key, err := fileKey(tls, zName, flags)
	if err != nil {
		rm := (*sqlite3.Tsqlite3_io_methods)(ptr((*sqlite3.Tsqlite3_file)(ptr(real)).FpMethods))
		callInt(rm.FxClose, tls, real)
		return sqlite3.SQLITE_CANTOPEN
	}
	cbuf := libc.Xmalloc(tls, BlockSize)
	if cbuf == 0 {
		rm := (*sqlite3.Tsqlite3_io_methods)(ptr((*sqlite3.Tsqlite3_file)(ptr(real)).FpMethods))
		callInt(rm.FxClose, tls, real)
		return sqlite3.SQLITE_NOMEM
	}
	f := &file{real: real, cipher: adiantum.New(key), wal: flags&sqlite3.SQLITE_OPEN_WAL != 0,
		shared: flags&(sqlite3.SQLITE_OPEN_MAIN_DB|sqlite3.SQLITE_OPEN_WAL) != 0,
		cbuf:   cbuf, buf: unsafe.Slice((*byte)(ptr(cbuf)), BlockSize), last: -1}
	clear(key)
	h := handles.Add(1)
	files.Store(h, f)
	*(*uintptr)(ptr(pFile + 8)) = h
	sf.FpMethods = uintptr(unsafe.Pointer(&ioMethods))
	return sqlite3.SQLITE_OK
}

// fileKey returns the key of a file being opened: the database, its WAL
// and its rollback journal take subkeys of the Key named by the
// database's URI; every other file (temporary databases and journals,
// statement journals) holds data of this connection only and takes a
// random key.
func fileKey(tls *libc.TLS, zName uintptr, flags int32) ([]byte, error) {
	var kind string
	switch {
	case flags&sqlite3.SQLITE_OPEN_MAIN_DB != 0:
		kind = kindMain
	case flags&sqlite3.SQLITE_OPEN_WAL != 0:
		kind = kindWAL
	case flags&sqlite3.SQLITE_OPEN_MAIN_JOURNAL != 0:
		kind = kindJournal
	default:
		key := make([]byte, 32)
		rand.Read(key)
		return key, nil
	}
	if zName == 0 {
		return nil, fmt.Errorf("encrypt: %s file without a name", kind)
	}
	token := libc.GoString(sqlite3.Xsqlite3_uri_parameter(tls, zName, cKeyParam))
	k, ok := keys.Load(token)
	if !ok {
		return nil, fmt.Errorf("encrypt: no key registered for %s file", kind)
	}
	return k.(*Key).subkey(kind), nil
}

func callInt(fp uintptr, tls *libc.TLS, p uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{fp})))(tls, p)
}

func xClose(tls *libc.TLS, pFile uintptr) int32 {
	h := *(*uintptr)(ptr(pFile + 8))
	f := fileOf(pFile)
	rc := callInt(f.methods().FxClose, tls, f.real)
	files.Delete(h)
	libc.Xfree(tls, f.cbuf)
	return rc
}

func (f *file) readReal(tls *libc.TLS, dst []byte, off int64) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&struct{ uintptr }{f.methods().FxRead})))(tls, f.real, uintptr(unsafe.Pointer(&dst[0])), int32(len(dst)), off)
}

func (f *file) writeReal(tls *libc.TLS, src []byte, off int64) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&struct{ uintptr }{f.methods().FxWrite})))(tls, f.real, uintptr(unsafe.Pointer(&src[0])), int32(len(src)), off)
}

func (f *file) tweakOf(start int64) []byte {
	binary.LittleEndian.PutUint64(f.tweak[:8], uint64(start))
	return f.tweak[:]
}

// readUnit reads the plaintext of the unit at start into p (the unit's
// length). A unit past the end of the file, or cut short by it, reads as
// zeros and reports short; so does a unit of zeros on disk (a hole): no
// unit this VFS writes is all zeros once enciphered. With cached, the
// unit this file handle wrote last is taken from memory (see file).
func (f *file) readUnit(tls *libc.TLS, p []byte, start int64, cached bool) (short bool, rc int32) {
	if cached && start == f.last {
		copy(p, f.lastB[:])
		return false, sqlite3.SQLITE_OK
	}
	switch rc := f.readReal(tls, p, start); rc {
	case sqlite3.SQLITE_OK:
		if !allZero(p) {
			f.cipher.Decrypt(p, f.tweakOf(start))
		}
		return false, rc
	case sqlite3.SQLITE_IOERR_SHORT_READ:
		clear(p)
		return true, sqlite3.SQLITE_OK
	default:
		return false, rc
	}
}

func allZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

func xRead(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := fileOf(pFile)
	dst := unsafe.Slice((*byte)(ptr(zBuf)), iAmt)
	anyShort := false
	for off := iOfst; len(dst) > 0; {
		start, size := f.unitOf(off)
		in := int(off - start)
		n := min(size-in, len(dst))
		p := f.buf[:size]
		whole := in == 0 && n == size
		if whole {
			p = dst[:size] // deciphered in place
		}
		short, rc := f.readUnit(tls, p, start, false)
		if rc != sqlite3.SQLITE_OK {
			return rc
		}
		anyShort = anyShort || short
		if !whole {
			copy(dst[:n], p[in:])
		}
		dst, off = dst[n:], off+int64(n)
	}
	if anyShort {
		return sqlite3.SQLITE_IOERR_SHORT_READ
	}
	return sqlite3.SQLITE_OK
}

func xWrite(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := fileOf(pFile)
	src := unsafe.Slice((*byte)(ptr(zBuf)), iAmt)
	for off := iOfst; len(src) > 0; {
		start, size := f.unitOf(off)
		in := int(off - start)
		n := min(size-in, len(src))
		p := f.buf[:size]
		if in != 0 || n != size {
			// Part of a unit: the rest of it is what the file holds.
			if _, rc := f.readUnit(tls, p, start, !f.shared); rc != sqlite3.SQLITE_OK {
				f.last = -1
				return rc
			}
		}
		copy(p[in:], src[:n])
		copy(f.lastB[:], p)
		f.last = start
		f.cipher.Encrypt(p, f.tweakOf(start))
		if rc := f.writeReal(tls, p, start); rc != sqlite3.SQLITE_OK {
			f.last = -1
			return rc
		}
		src, off = src[n:], off+int64(n)
	}
	return sqlite3.SQLITE_OK
}

func xTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	f := fileOf(pFile)
	f.last = -1
	// Files hold whole units only: a unit cut short could not be read.
	// (SQLite cuts a database at a page, a WAL at a frame.)
	if start, n := f.unitOf(size); start != size {
		size = start + int64(n)
	}
	return (*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&struct{ uintptr }{f.methods().FxTruncate})))(tls, f.real, size)
}

func xSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	f := fileOf(pFile)
	return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&struct{ uintptr }{f.methods().FxSync})))(tls, f.real, flags)
}

func xFileSize(tls *libc.TLS, pFile, pSize uintptr) int32 {
	f := fileOf(pFile)
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{f.methods().FxFileSize})))(tls, f.real, pSize)
}

func xLock(tls *libc.TLS, pFile uintptr, lock int32) int32 {
	f := fileOf(pFile)
	return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&struct{ uintptr }{f.methods().FxLock})))(tls, f.real, lock)
}

func xUnlock(tls *libc.TLS, pFile uintptr, lock int32) int32 {
	f := fileOf(pFile)
	f.last = -1
	return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&struct{ uintptr }{f.methods().FxUnlock})))(tls, f.real, lock)
}

func xCheckReservedLock(tls *libc.TLS, pFile, pResOut uintptr) int32 {
	f := fileOf(pFile)
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{f.methods().FxCheckReservedLock})))(tls, f.real, pResOut)
}

func xFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	f := fileOf(pFile)
	return (*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{f.methods().FxFileControl})))(tls, f.real, op, pArg)
}

func xSectorSize(tls *libc.TLS, pFile uintptr) int32 {
	f := fileOf(pFile)
	return callInt(f.methods().FxSectorSize, tls, f.real)
}

// xDeviceCharacteristics withdraws the claims of atomic writes, which a
// unit rewritten to change part of it would break. Power-safe overwrite
// stays: SQLite writes the units of a database and of a WAL whole, so the
// bytes written are the bytes SQLite wrote.
func xDeviceCharacteristics(tls *libc.TLS, pFile uintptr) int32 {
	f := fileOf(pFile)
	c := callInt(f.methods().FxDeviceCharacteristics, tls, f.real)
	const atomic = sqlite3.SQLITE_IOCAP_ATOMIC | sqlite3.SQLITE_IOCAP_ATOMIC512 | sqlite3.SQLITE_IOCAP_ATOMIC1K |
		sqlite3.SQLITE_IOCAP_ATOMIC2K | sqlite3.SQLITE_IOCAP_ATOMIC4K | sqlite3.SQLITE_IOCAP_ATOMIC8K |
		sqlite3.SQLITE_IOCAP_ATOMIC16K | sqlite3.SQLITE_IOCAP_ATOMIC32K | sqlite3.SQLITE_IOCAP_ATOMIC64K |
		sqlite3.SQLITE_IOCAP_BATCH_ATOMIC
	return c &^ atomic
}

// The wal-index (the -shm file) holds page numbers and frame checksums,
// no page content: it is the default VFS's, in the clear.
func xShmMap(tls *libc.TLS, pFile uintptr, iPg, pgsz, bExtend int32, pp uintptr) int32 {
	f := fileOf(pFile)
	return (*(*func(*libc.TLS, uintptr, int32, int32, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{f.methods().FxShmMap})))(tls, f.real, iPg, pgsz, bExtend, pp)
}

func xShmLock(tls *libc.TLS, pFile uintptr, offset, n, flags int32) int32 {
	f := fileOf(pFile)
	if flags&sqlite3.SQLITE_SHM_UNLOCK != 0 {
		f.last = -1
	}
	return (*(*func(*libc.TLS, uintptr, int32, int32, int32) int32)(unsafe.Pointer(&struct{ uintptr }{f.methods().FxShmLock})))(tls, f.real, offset, n, flags)
}

func xShmBarrier(tls *libc.TLS, pFile uintptr) {
	f := fileOf(pFile)
	(*(*func(*libc.TLS, uintptr))(unsafe.Pointer(&struct{ uintptr }{f.methods().FxShmBarrier})))(tls, f.real)
}

func xShmUnmap(tls *libc.TLS, pFile uintptr, deleteFlag int32) int32 {
	f := fileOf(pFile)
	return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&struct{ uintptr }{f.methods().FxShmUnmap})))(tls, f.real, deleteFlag)
}

// xFetch hands out no page of a memory map (which holds ciphertext):
// SQLite then reads through xRead. The default VFS still serves xRead
// from its map when mmap_size is set.
func xFetch(tls *libc.TLS, pFile uintptr, iOfst int64, iAmt int32, pp uintptr) int32 {
	*(*uintptr)(ptr(pp)) = 0
	return sqlite3.SQLITE_OK
}

func xUnfetch(tls *libc.TLS, pFile uintptr, iOfst int64, p uintptr) int32 {
	return sqlite3.SQLITE_OK
}
