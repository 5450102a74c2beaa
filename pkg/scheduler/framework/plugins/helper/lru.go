package helper

// DeleteLeastRecentlyUsed removes from m the entry whose lastUse is the
// smallest (the plugins' memo tables, bounded by a count of keys, evict
// so); it does nothing on an empty map.
func DeleteLeastRecentlyUsed[K comparable, V any](m map[K]V, lastUse func(V) uint64) {
	var oldest K
	var oldestUse uint64
	first := true
	for k, v := range m {
		if u := lastUse(v); first || u < oldestUse {
			oldest, oldestUse, first = k, u, false
		}
	}
	if !first {
		delete(m, oldest)
	}
}
