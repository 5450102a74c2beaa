package cache

// UndeltaStore is a Store that, after every successful change, calls PushFunc
// with the complete current content of the store (in no particular order).
// It turns a stream of deltas into a stream of full states, for consumers
// that want "everything, now" rather than "what changed".
//
// Resync does not change the content and so does not push.
type UndeltaStore struct {
	Store
	PushFunc func([]any)
}

var _ Store = (*UndeltaStore)(nil)

// NewUndeltaStore returns an UndeltaStore over a NewStore(keyFunc).
func NewUndeltaStore(pushFunc func([]any), keyFunc KeyFunc) *UndeltaStore {
	return &UndeltaStore{Store: NewStore(keyFunc), PushFunc: pushFunc}
}

func (u *UndeltaStore) push(err error) error {
	if err != nil {
		return err
	}
	u.PushFunc(u.Store.List())
	return nil
}

func (u *UndeltaStore) Add(obj any) error    { return u.push(u.Store.Add(obj)) }
func (u *UndeltaStore) Update(obj any) error { return u.push(u.Store.Update(obj)) }
func (u *UndeltaStore) Delete(obj any) error { return u.push(u.Store.Delete(obj)) }

func (u *UndeltaStore) Replace(list []any, resourceVersion string) error {
	return u.push(u.Store.Replace(list, resourceVersion))
}
