// Package durable holds what the replica's packages share to make a change
// to a directory survive a crash.
package durable

import (
	"os"
	"path/filepath"
)

// SyncDir flushes dir itself to disk: what makes a file created, renamed or
// removed in it durable, which syncing the file alone does not.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Replace makes tmp, a file just written in path's directory, the file at
// path durably: it syncs and closes tmp, renames it to path and syncs the
// directory. err is the error of writing tmp: if it is not nil, tmp is
// only closed and err returned.
func Replace(tmp *os.File, path string, err error) error {
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = SyncDir(filepath.Dir(path))
	}
	return err
}
