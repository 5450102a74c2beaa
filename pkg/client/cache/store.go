package cache

// Store is a generic object storage and processing interface, keyed by a
// KeyFunc. It is implemented by the plain/indexed caches (NewStore,
// NewIndexer) and by queues such as DeltaFIFO, which is what lets a Reflector
// feed either of them.
type Store interface {
	// Add inserts obj (or replaces the object with the same key).
	Add(obj any) error
	// Update is the same as Add for caches; queues record it differently.
	Update(obj any) error
	// Delete removes the object with obj's key.
	Delete(obj any) error
	// List returns all stored objects, in no particular order.
	List() []any
	// ListKeys returns all keys, in no particular order.
	ListKeys() []string
	// Get returns the object stored under obj's key.
	Get(obj any) (item any, exists bool, err error)
	// GetByKey returns the object stored under key.
	GetByKey(key string) (item any, exists bool, err error)
	// Replace deletes the store's content and uses list instead. The
	// resourceVersion is that of the list the objects came from.
	Replace(list []any, resourceVersion string) error
	// Resync is meaningful only for queues (see DeltaFIFO.Resync); caches
	// implement it as a no-op.
	Resync() error
}

// cache implements Store and Indexer on top of a ThreadSafeStore, computing
// keys with keyFunc.
type cache struct {
	storage *threadSafeMap
	keyFunc KeyFunc
}

var (
	_ Store   = (*cache)(nil)
	_ Indexer = (*cache)(nil)
)

// NewStore returns a Store keyed by keyFunc, without indices.
func NewStore(keyFunc KeyFunc) Store {
	return &cache{storage: newThreadSafeMap(Indexers{}, nil), keyFunc: keyFunc}
}

// NewIndexer returns an Indexer keyed by keyFunc and maintaining indexers.
// It panics if an IndexFunc is nil.
func NewIndexer(keyFunc KeyFunc, indexers Indexers) Indexer {
	return &cache{storage: newThreadSafeMap(indexers, nil), keyFunc: keyFunc}
}

func (c *cache) key(obj any) (string, error) {
	key, err := c.keyFunc(obj)
	if err != nil {
		return "", KeyError{obj, err}
	}
	return key, nil
}

func (c *cache) Add(obj any) error {
	key, err := c.key(obj)
	if err != nil {
		return err
	}
	return c.storage.Add(key, obj)
}

func (c *cache) Update(obj any) error {
	key, err := c.key(obj)
	if err != nil {
		return err
	}
	return c.storage.Update(key, obj)
}

// upsert stores obj like Update and returns the object it replaced, if
// any: processDeltas' get-then-add/update with one key computation and one
// lock.
func (c *cache) upsert(obj any) (old any, existed bool, err error) {
	key, err := c.key(obj)
	if err != nil {
		return nil, false, err
	}
	return c.storage.upsert(key, obj)
}

func (c *cache) Delete(obj any) error {
	key, err := c.key(obj)
	if err != nil {
		return err
	}
	c.storage.Delete(key)
	return nil
}

func (c *cache) List() []any        { return c.storage.List() }
func (c *cache) ListKeys() []string { return c.storage.ListKeys() }

func (c *cache) Get(obj any) (any, bool, error) {
	key, err := c.key(obj)
	if err != nil {
		return nil, false, err
	}
	return c.GetByKey(key)
}

func (c *cache) GetByKey(key string) (any, bool, error) {
	item, exists := c.storage.Get(key)
	return item, exists, nil
}

func (c *cache) Replace(list []any, resourceVersion string) error {
	items := make(map[string]any, len(list))
	for _, obj := range list {
		key, err := c.key(obj)
		if err != nil {
			return err
		}
		items[key] = obj
	}
	return c.storage.Replace(items, resourceVersion)
}

func (c *cache) Resync() error { return nil }

func (c *cache) Index(indexName string, obj any) ([]any, error) {
	return c.storage.Index(indexName, obj)
}

func (c *cache) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return c.storage.IndexKeys(indexName, indexedValue)
}

func (c *cache) ListIndexFuncValues(indexName string) []string {
	return c.storage.ListIndexFuncValues(indexName)
}

func (c *cache) ByIndex(indexName, indexedValue string) ([]any, error) {
	return c.storage.ByIndex(indexName, indexedValue)
}

func (c *cache) GetIndexers() Indexers { return c.storage.GetIndexers() }

func (c *cache) AddIndexers(newIndexers Indexers) error {
	return c.storage.AddIndexers(newIndexers)
}
