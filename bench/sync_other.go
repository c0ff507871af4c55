//go:build !linux

package bench

// syncFilesystems is a no-op where sync(2) is not wired.
func syncFilesystems() {}
