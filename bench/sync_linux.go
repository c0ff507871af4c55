package bench

import "golang.org/x/sys/unix"

// syncFilesystems writes back every dirty page (sync(2)) and waits for it.
func syncFilesystems() { unix.Sync() }
