package replica

import (
	"errors"
	"os"
	"path/filepath"
)

func dirOf(path string) string { return filepath.Dir(path) }

// removeDB removes a database file and its WAL and shared-memory files.
func removeDB(path string) error {
	var errs []error
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
