// Package durable holds what the replica's packages share to make a change
// to a directory survive a crash.
package durable

import "os"

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
