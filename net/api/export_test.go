package api

// SetParkedFault makes every parked fetch call fault before it reads
// again (parkedFault), until the returned function restores none.
func SetParkedFault(fault func()) (restore func()) {
	parkedFault.Store(&fault)
	return func() { parkedFault.Store(nil) }
}
