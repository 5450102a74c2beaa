package controllermanager

// SetTransformHook makes f see every object the manager's shared
// informers cache (after dropping managedFields and interning).
func SetTransformHook(m *Manager, f func(any)) { m.transformed = f }
