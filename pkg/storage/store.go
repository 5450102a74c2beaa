package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Store implements Interface for one kind of object over a KV backend.
type Store struct {
	kv      KV
	codec   Codec
	newFunc func() runtime.Object
	// prefix is the root every key of this store starts with ("/registry/pods/").
	prefix string
	// recent holds objects this store just wrote, so that its watch need
	// not decode them again from the bytes storage echoes back.
	recent recentWrites
}

// recentWrites is a small hand-off from writes to watches, keyed by key and
// revision. Only the first watch event for a write takes the object; the
// map is dropped whole if no watch drains it.
type recentWrites struct {
	mu sync.Mutex
	m  map[string]recentWrite
}

type recentWrite struct {
	rev int64
	obj runtime.Object
}

const maxRecentWrites = 4096

func (r *recentWrites) put(key string, rev int64, obj runtime.Object) {
	cp := obj.DeepCopyObject()
	InternManagedFields(cp) // the copy goes to the watch cache
	r.mu.Lock()
	if r.m == nil || len(r.m) >= maxRecentWrites {
		r.m = make(map[string]recentWrite, 64)
	}
	r.m[key] = recentWrite{rev: rev, obj: cp}
	r.mu.Unlock()
}

func (r *recentWrites) take(key string, rev int64) runtime.Object {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.m[key]
	if !ok {
		return nil
	}
	delete(r.m, key)
	if w.rev != rev {
		return nil
	}
	return w.obj
}

// StoreConfig configures NewStore.
type StoreConfig struct {
	KV    KV
	Codec Codec
	// NewFunc returns an empty object of the stored kind (used for bookmarks).
	NewFunc func() runtime.Object
	// Prefix is the key prefix of the resource, ending in "/".
	Prefix string
}

// NewStore returns a Store for the objects under cfg.Prefix.
func NewStore(cfg StoreConfig) *Store {
	return &Store{kv: cfg.KV, codec: cfg.Codec, newFunc: cfg.NewFunc, prefix: cfg.Prefix}
}

var _ Interface = (*Store)(nil)

// maxListPage bounds how many keys one backend read fetches while filling a
// filtered page.
const maxListPage = 10000

// SetResourceVersion sets obj's metadata.resourceVersion to rev.
func SetResourceVersion(obj runtime.Object, rev int64) error {
	a, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if rev == 0 {
		a.SetResourceVersion("")
		return nil
	}
	a.SetResourceVersion(strconv.FormatInt(rev, 10))
	return nil
}

// ParseResourceVersion parses a resourceVersion; "" is 0.
func ParseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv))
	}
	return n, nil
}

func (s *Store) encode(key string, obj runtime.Object) ([]byte, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return nil, NewInvalidObjError(key, err.Error())
	}
	rv := a.GetResourceVersion()
	a.SetResourceVersion("")
	data, err := s.codec.Encode(obj)
	a.SetResourceVersion(rv)
	if err != nil {
		return nil, NewInvalidObjError(key, err.Error())
	}
	return data, nil
}

func (s *Store) decode(key string, data []byte, into runtime.Object, rev int64) error {
	// Decoding into an object that holds interned managedFields would
	// write into the shared bytes (FieldsV1 decodes by appending to Raw[:0]).
	if m, ok := into.(metav1.Object); ok && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	if err := s.codec.Decode(data, into); err != nil {
		return NewCorruptObjError(key, err)
	}
	InternManagedFields(into)
	return SetResourceVersion(into, rev)
}

// copyInto makes dst (a pointer) a deep copy of src.
func copyInto(dst, src runtime.Object) {
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
}

func zero(obj runtime.Object) {
	v := reflect.ValueOf(obj).Elem()
	v.Set(reflect.Zero(v.Type()))
}

// Create implements Interface.
func (s *Store) Create(ctx context.Context, key string, obj, out runtime.Object) error {
	a, err := meta.Accessor(obj)
	if err != nil {
		return NewInvalidObjError(key, err.Error())
	}
	if a.GetResourceVersion() != "" {
		return NewInvalidObjError(key, "resourceVersion should not be set on objects to be created")
	}
	data, err := s.encode(key, obj)
	if err != nil {
		return err
	}
	rev, err := s.kv.Create(ctx, key, data)
	if err != nil {
		if errors.Is(err, ErrKeyExists) {
			return NewKeyExistsError(key, 0)
		}
		return NewUnreachableError(key, err)
	}
	if out != nil {
		if out != obj {
			copyInto(out, obj)
		}
		if err := SetResourceVersion(out, rev); err != nil {
			return err
		}
		s.recent.put(key, rev, out)
	}
	return nil
}

// Get implements Interface.
func (s *Store) Get(ctx context.Context, key string, opts GetOptions, out runtime.Object) error {
	minRV, err := ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return err
	}
	kv, rev, err := s.kv.Get(ctx, key)
	if err != nil {
		return NewUnreachableError(key, err)
	}
	if minRV > rev {
		return NewTooLargeResourceVersionError(minRV, rev)
	}
	if kv == nil {
		if opts.IgnoreNotFound {
			zero(out)
			return nil
		}
		return NewKeyNotFoundError(key, 0)
	}
	return s.decode(key, kv.Value, out, kv.ModRev)
}

// NewTooLargeResourceVersionError is the 504 upstream returns when a client
// asks for a revision the server has not seen yet.
func NewTooLargeResourceVersionError(minimum, current int64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", minimum, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// listItems gives append access to the Items slice of a list object.
type listItems struct {
	items reflect.Value
	elem  reflect.Type
	ptr   bool
}

func itemsOf(listObj runtime.Object) (*listItems, error) {
	v := reflect.ValueOf(listObj)
	if v.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("list %T is not a pointer", listObj)
	}
	items := v.Elem().FieldByName("Items")
	if !items.IsValid() || items.Kind() != reflect.Slice {
		return nil, fmt.Errorf("list %T has no Items slice", listObj)
	}
	elem := items.Type().Elem()
	l := &listItems{items: items}
	if elem.Kind() == reflect.Pointer {
		l.ptr, l.elem = true, elem.Elem()
	} else {
		l.elem = elem
	}
	return l, nil
}

// newItem returns a fresh object of the item type.
func (l *listItems) newItem() runtime.Object {
	return reflect.New(l.elem).Interface().(runtime.Object)
}

func (l *listItems) append(obj runtime.Object) {
	v := reflect.ValueOf(obj)
	if !l.ptr {
		v = v.Elem()
	}
	l.items.Set(reflect.Append(l.items, v))
}

func (l *listItems) reserve(n int) {
	if l.items.Cap()-l.items.Len() < n {
		grown := reflect.MakeSlice(l.items.Type(), l.items.Len(), l.items.Len()+n)
		reflect.Copy(grown, l.items)
		l.items.Set(grown)
	}
}

// AppendToList appends obj to listObj's Items.
func AppendToList(listObj runtime.Object, obj runtime.Object) error {
	l, err := itemsOf(listObj)
	if err != nil {
		return err
	}
	l.append(obj)
	return nil
}

// NewListItem returns an empty object of listObj's item type.
func NewListItem(listObj runtime.Object) (runtime.Object, error) {
	l, err := itemsOf(listObj)
	if err != nil {
		return nil, err
	}
	return l.newItem(), nil
}

// GetList implements Interface.
func (s *Store) GetList(ctx context.Context, key string, opts ListOptions, listObj runtime.Object) error {
	listAcc, err := meta.ListAccessor(listObj)
	if err != nil {
		return err
	}
	items, err := itemsOf(listObj)
	if err != nil {
		return err
	}
	lm, err := s.list(ctx, key, opts, items.newItem, items.append, items.reserve)
	if err != nil {
		return err
	}
	listAcc.SetResourceVersion(lm.ResourceVersion)
	listAcc.SetContinue(lm.Continue)
	listAcc.SetRemainingItemCount(lm.RemainingItemCount)
	return nil
}

// ListObjects implements Interface.
func (s *Store) ListObjects(ctx context.Context, key string, opts ListOptions) ([]runtime.Object, metav1.ListMeta, error) {
	var out []runtime.Object
	lm, err := s.list(ctx, key, opts, s.newFunc,
		func(obj runtime.Object) { out = append(out, obj) },
		func(n int) {
			if cap(out)-len(out) < n {
				out = append(make([]runtime.Object, 0, len(out)+n), out...)
			}
		})
	return out, lm, err
}

// list reads the objects under key that match opts, decoding each into
// newItem() and handing the matches to add.
func (s *Store) list(ctx context.Context, key string, opts ListOptions, newItem func() runtime.Object,
	add func(runtime.Object), reserve func(int)) (metav1.ListMeta, error) {
	var lm metav1.ListMeta
	if !opts.Recursive {
		// A single key: a list of zero or one.
		kv, rev, err := s.kv.Get(ctx, key)
		if err != nil {
			return lm, NewUnreachableError(key, err)
		}
		if kv != nil {
			obj := newItem()
			if err := s.decode(key, kv.Value, obj, kv.ModRev); err != nil {
				return lm, err
			}
			if ok, err := opts.Predicate.Matches(obj); err != nil {
				return lm, err
			} else if ok {
				add(obj)
			}
		}
		lm.ResourceVersion = FormatRV(rev)
		return lm, nil
	}
	if !strings.HasSuffix(key, "/") {
		key += "/"
	}
	start, end := key, PrefixEnd(key)

	var readRev int64
	rv, err := ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return lm, err
	}
	switch {
	case opts.Predicate.Continue != "":
		from, crev, err := DecodeContinue(opts.Predicate.Continue, key)
		if err != nil {
			return lm, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		if rv != 0 {
			return lm, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		start, readRev = from, crev
		if crev < 0 {
			// An inconsistent continuation (the token a 410 carries):
			// the rest of the list at the current revision.
			readRev = 0
		}
	case opts.ResourceVersionMatch == string(metav1.ResourceVersionMatchExact):
		readRev = rv
	}

	limit := opts.Predicate.Limit
	filtered := !opts.Predicate.Empty()
	fetch := limit
	if filtered && fetch > 0 && fetch < 100 {
		fetch = 100
	}
	var (
		lastKey   string
		more      bool
		remaining int64 = -1
		count     int64
	)
	for {
		res, err := s.kv.List(ctx, start, end, fetch, readRev)
		if err != nil {
			if errors.Is(err, ErrCompacted) {
				if opts.Predicate.Continue != "" {
					// As upstream, the error carries a token that continues
					// from the same key at the latest revision (rv -1).
					expired := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
					if token, err := EncodeContinue(start, key, -1); err == nil {
						expired.ErrStatus.ListMeta.Continue = token
					}
					return lm, expired
				}
				return lm, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d", readRev))
			}
			if errors.Is(err, ErrFutureRev) {
				return lm, NewTooLargeResourceVersionError(readRev, res.Rev)
			}
			return lm, NewUnreachableError(key, err)
		}
		if readRev == 0 {
			readRev = res.Rev
			if rv > readRev {
				return lm, NewTooLargeResourceVersionError(rv, readRev)
			}
		}
		if !filtered {
			reserve(len(res.KVs))
		}
		more = res.More
		for i, kv := range res.KVs {
			obj := newItem()
			if err := s.decode(kv.Key, kv.Value, obj, kv.ModRev); err != nil {
				return lm, err
			}
			ok, err := opts.Predicate.Matches(obj)
			if err != nil {
				return lm, err
			}
			if ok {
				add(obj)
				count++
			}
			lastKey = kv.Key
			if limit > 0 && count == limit {
				if i < len(res.KVs)-1 {
					more = true
				}
				if !filtered {
					remaining = res.Count - int64(i) - 1
				}
				break
			}
		}
		if limit == 0 || count >= limit || !more {
			break
		}
		// The page ran dry before filling: read on after the last key.
		start = lastKey + "\x00"
		if fetch < maxListPage {
			fetch *= 2
			if fetch > maxListPage {
				fetch = maxListPage
			}
		}
	}
	lm.ResourceVersion = FormatRV(readRev)
	if limit > 0 && count >= limit && more {
		token, err := EncodeContinue(lastKey+"\x00", key, readRev)
		if err != nil {
			return lm, err
		}
		lm.Continue = token
		if remaining >= 0 && !filtered {
			lm.RemainingItemCount = &remaining
		}
	}
	return lm, nil
}

// checkPreconditions compares preconditions with the current object.
func checkPreconditions(key string, p *Preconditions, obj runtime.Object) error {
	if p == nil {
		return nil
	}
	a, err := meta.Accessor(obj)
	if err != nil {
		return NewInvalidObjError(key, err.Error())
	}
	if p.UID != nil && *p.UID != a.GetUID() {
		return NewConflictError(key, 0, fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, a.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != a.GetResourceVersion() {
		return NewConflictError(key, 0, fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, a.GetResourceVersion()))
	}
	return nil
}

// GuaranteedUpdate implements Interface.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	preconditions *Preconditions, tryUpdate UpdateFunc, cachedExisting runtime.Object) error {
	var (
		cur       *KeyValue
		curObj    runtime.Object
		fromCache bool
	)
	load := func() error {
		kv, _, err := s.kv.Get(ctx, key)
		if err != nil {
			return NewUnreachableError(key, err)
		}
		cur = kv
		curObj = dest.DeepCopyObject()
		zero(curObj)
		if kv != nil {
			return s.decode(key, kv.Value, curObj, kv.ModRev)
		}
		return nil
	}
	if cachedExisting != nil {
		a, err := meta.Accessor(cachedExisting)
		if err == nil && a.GetResourceVersion() != "" {
			rev, _ := strconv.ParseInt(a.GetResourceVersion(), 10, 64)
			data, err := s.encode(key, cachedExisting)
			if err == nil {
				cur = &KeyValue{Key: key, Value: data, ModRev: rev}
				// Handed over by the caller (the cacher's own copy).
				curObj = cachedExisting
				fromCache = true
			}
		}
	}
	if !fromCache {
		if err := load(); err != nil {
			return err
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if cur == nil && !ignoreNotFound {
			return NewKeyNotFoundError(key, 0)
		}
		var curRev int64
		if cur != nil {
			curRev = cur.ModRev
			if err := checkPreconditions(key, preconditions, curObj); err != nil {
				if fromCache {
					fromCache = false
					if err := load(); err != nil {
						return err
					}
					continue
				}
				return err
			}
		}
		out, err := tryUpdate(curObj, ResponseMeta{ResourceVersion: uint64(curRev)})
		if err != nil {
			if fromCache && (IsConflict(err) || apierrors.IsConflict(err)) {
				fromCache = false
				if err := load(); err != nil {
					return err
				}
				continue
			}
			return err
		}
		data, err := s.encode(key, out)
		if err != nil {
			return err
		}
		if cur != nil && bytes.Equal(data, cur.Value) {
			if fromCache {
				// The cache may be stale: confirm against storage.
				fromCache = false
				if err := load(); err != nil {
					return err
				}
				continue
			}
			// Nothing changed: no write, no new revision.
			if out != dest {
				copyInto(dest, out)
			}
			return SetResourceVersion(dest, curRev)
		}
		var rev int64
		var current *KeyValue
		if cur == nil {
			rev, err = s.kv.Create(ctx, key, data)
			if errors.Is(err, ErrKeyExists) {
				err = ErrConflict
			}
		} else {
			rev, current, err = s.kv.Update(ctx, key, data, cur.ModRev)
		}
		if errors.Is(err, ErrConflict) {
			fromCache = false
			if cur == nil || current == nil {
				if err := load(); err != nil {
					return err
				}
				continue
			}
			cur = current
			curObj = dest.DeepCopyObject()
			if err := s.decode(key, cur.Value, curObj, cur.ModRev); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return NewUnreachableError(key, err)
		}
		if out != dest {
			copyInto(dest, out)
		}
		if err := SetResourceVersion(dest, rev); err != nil {
			return err
		}
		s.recent.put(key, rev, dest)
		return nil
	}
}

// Delete implements Interface.
func (s *Store) Delete(ctx context.Context, key string, out runtime.Object, preconditions *Preconditions,
	validateDeletion ValidateObjectFunc, cachedExisting runtime.Object) error {
	kv, _, err := s.kv.Get(ctx, key)
	if err != nil {
		return NewUnreachableError(key, err)
	}
	for {
		if kv == nil {
			return NewKeyNotFoundError(key, 0)
		}
		obj := out.DeepCopyObject()
		if err := s.decode(key, kv.Value, obj, kv.ModRev); err != nil {
			return err
		}
		if err := checkPreconditions(key, preconditions, obj); err != nil {
			return err
		}
		if validateDeletion != nil {
			if err := validateDeletion(ctx, obj); err != nil {
				return err
			}
		}
		_, current, err := s.kv.Delete(ctx, key, kv.ModRev)
		if errors.Is(err, ErrConflict) {
			kv = current
			continue
		}
		if err != nil {
			return NewUnreachableError(key, err)
		}
		copyInto(out, obj)
		return nil
	}
}

// CurrentRevision implements Interface.
func (s *Store) CurrentRevision(ctx context.Context) (uint64, error) {
	_, rev, err := s.kv.Get(ctx, s.prefix)
	if err != nil {
		return 0, NewUnreachableError(s.prefix, err)
	}
	return uint64(rev), nil
}

// Count implements Interface.
func (s *Store) Count(ctx context.Context, key string) (int64, error) {
	if !strings.HasSuffix(key, "/") {
		key += "/"
	}
	return s.kv.Count(ctx, key, PrefixEnd(key))
}

// RequestProgress asks the backend for a progress notification on watches.
func (s *Store) RequestProgress(ctx context.Context) error {
	return s.kv.RequestProgress(ctx)
}
