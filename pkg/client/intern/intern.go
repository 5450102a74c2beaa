package intern

import (
	"encoding/binary"
	"hash/maphash"
	"runtime"
	"slices"
	"sync"
	"unsafe"
	"weak"
)

// kind separates the key spaces of the Go types sharing the table.
type kind byte

const (
	kString kind = iota + 1
	kStringMap
	kStringSlice
	kResourceList
	kInt64
	kInt32
	kBool
	kPreemptionPolicy
	kOwnerRefs
	kContainers
	kContainerPorts
	kEnvFrom
	kEnv
	kResourceClaims
	kResizePolicy
	kProbe
	kLifecycle
	kSecurityContext
	kPodSecurityContext
	kAffinity
	kDNSConfig
	kPodOS
	kResourceRequirements
	kLocalObjectRefs
	kTolerations
	kHostAliases
	kReadinessGates
	kTopologySpread
	kSchedulingGates
	kPodResourceClaims
	kHostIPs
	kProjected
	kConfigMapVolume
	kSecretVolume
	kEmptyDir
	kHostPath
	kDownwardAPIVolume
)

// entry is a canonical instance: a weak pointer to it (to the first
// element of a slice, to the bytes of a string, to the header of a map)
// and a slice's length.
type entry struct {
	w weak.Pointer[byte]
	n int
}

type reclaimArg struct {
	key string
	w   weak.Pointer[byte]
}

// Stats counts an Interner's work.
type Stats struct {
	Hits, Misses int64 // parts replaced by a canonical instance, parts that became one
	Entries      int   // live table entries
}

// Interner is a table of canonical instances. The zero value is not
// usable; use New. It is safe for concurrent use.
type Interner struct {
	mu   sync.Mutex
	m    map[string]entry
	key  []byte   // the key being built (reused)
	keys []string // scratch for sorting map keys
	seed maphash.Seed
	seen map[uint64]struct{} // hashes of keys missed once recently
	// unencodable: a part of the current key failed to encode.
	unencodable bool
	hits        int64
	misses      int64
}

// maxSeen bounds the keys remembered as seen once (cleared when full).
const maxSeen = 1 << 14

// New returns an empty Interner.
func New() *Interner {
	return &Interner{m: make(map[string]entry), seed: maphash.MakeSeed(), seen: make(map[uint64]struct{})}
}

// Stats returns the counters and the number of live entries.
func (in *Interner) Stats() Stats {
	in.mu.Lock()
	defer in.mu.Unlock()
	return Stats{Hits: in.hits, Misses: in.misses, Entries: len(in.m)}
}

func (in *Interner) begin(k kind) {
	in.key = append(in.key[:0], byte(k))
	in.unencodable = false
}

func (in *Interner) appendString(s string) {
	in.key = binary.AppendUvarint(in.key, uint64(len(s)))
	in.key = append(in.key, s...)
}

type message interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// appendMsg appends m's length and protobuf encoding to the key.
func (in *Interner) appendMsg(m message) {
	n := m.Size()
	in.key = binary.AppendUvarint(in.key, uint64(n))
	start := len(in.key)
	in.key = slices.Grow(in.key, n)[:start+n]
	if _, err := m.MarshalToSizedBuffer(in.key[start:]); err != nil {
		// Not reachable for the generated types: share nothing.
		in.unencodable = true
	}
}

// lookup returns the live canonical instance of the current key.
func (in *Interner) lookup() (unsafe.Pointer, int, bool) {
	if in.unencodable {
		return nil, 0, false
	}
	e, ok := in.m[string(in.key)]
	if !ok {
		return nil, 0, false
	}
	p := e.w.Value()
	if p == nil {
		return nil, 0, false
	}
	in.hits++
	return unsafe.Pointer(p), e.n, true
}

// admit reports whether the current key, missing from the table, is to
// get an entry: only at its second sighting among recent misses, so that
// parts unique to one object (a StatefulSet pod's name label, a DaemonSet
// pod's node affinity) cost no entry. (A hash collision only admits a
// part early; the table itself compares whole keys.)
func (in *Interner) admit() bool {
	if in.unencodable {
		return false
	}
	h := maphash.Bytes(in.seed, in.key)
	if _, ok := in.seen[h]; ok {
		delete(in.seen, h)
		return true
	}
	if len(in.seen) >= maxSeen {
		clear(in.seen)
	}
	in.seen[h] = struct{}{}
	return false
}

// store makes p (n elements for a slice) the canonical instance of the
// current key; the entry goes when p becomes unreachable.
func (in *Interner) store(p unsafe.Pointer, n int) {
	in.misses++
	k := string(in.key)
	w := weak.Make((*byte)(p))
	in.m[k] = entry{w: w, n: n}
	runtime.AddCleanup((*byte)(p), in.reclaim, reclaimArg{key: k, w: w})
}

func (in *Interner) reclaim(a reclaimArg) {
	in.mu.Lock()
	if e, ok := in.m[a.key]; ok && e.w == a.w {
		delete(in.m, a.key)
	}
	in.mu.Unlock()
}

// minAlloc keeps canonical strings and scalars out of the runtime's tiny
// allocator (pointer-free objects under 16 bytes are batched into one
// block, whose cleanups run only when all of them are unreachable).
const minAlloc = 16

func (in *Interner) str(s string) string {
	if s == "" {
		return s
	}
	in.begin(kString)
	in.key = append(in.key, s...)
	if p, n, ok := in.lookup(); ok {
		return unsafe.String((*byte)(p), n)
	}
	if !in.admit() {
		return s
	}
	b := make([]byte, max(len(s), minAlloc))
	copy(b, s)
	in.store(unsafe.Pointer(&b[0]), len(s))
	return unsafe.String(&b[0], len(s))
}

func strType[S ~string](in *Interner, s S) S { return S(in.str(string(s))) }

func (in *Interner) strSlice(s []string) []string {
	if len(s) == 0 {
		return s
	}
	in.begin(kStringSlice)
	for _, e := range s {
		in.appendString(e)
	}
	if p, n, ok := in.lookup(); ok {
		return unsafe.Slice((*string)(p), n)
	}
	admitted := in.admit()
	s = s[:len(s):len(s)]
	for i := range s {
		s[i] = in.str(s[i])
	}
	if admitted {
		// str rebuilt the key; build it again.
		in.begin(kStringSlice)
		for _, e := range s {
			in.appendString(e)
		}
		in.store(unsafe.Pointer(&s[0]), len(s))
	}
	return s
}

// mapPointer and pointerMap convert between a map and the pointer it is.
func mapPointer[M ~map[K]V, K comparable, V any](m M) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

func pointerMap[M ~map[K]V, K comparable, V any](p unsafe.Pointer) M {
	return *(*M)(unsafe.Pointer(&p))
}

// sortedKeys returns m's keys sorted, in the reused scratch slice.
func sortedKeys[M ~map[K]V, K ~string, V any](in *Interner, m M) []string {
	in.keys = in.keys[:0]
	for k := range m {
		in.keys = append(in.keys, string(k))
	}
	slices.Sort(in.keys)
	return in.keys
}

func (in *Interner) stringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	in.begin(kStringMap)
	for _, k := range sortedKeys(in, m) {
		in.appendString(k)
		in.appendString(m[k])
	}
	if p, _, ok := in.lookup(); ok {
		return pointerMap[map[string]string](p)
	}
	// The map's entries are interned too, so that maps differing in one
	// value still share the others' strings.
	admitted := in.admit()
	key := append([]byte(nil), in.key...)
	for _, k := range slices.Clone(in.keys) {
		m[in.str(k)] = in.str(m[k])
	}
	if admitted {
		in.key = append(in.key[:0], key...)
		in.store(mapPointer(m), 0)
	}
	return m
}

// scalar shares pointers to equal comparable pointer-free values.
func scalar[T int64 | int32 | bool](in *Interner, k kind, p *T) *T {
	if p == nil {
		return nil
	}
	in.begin(k)
	in.key = append(in.key, unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))...)
	if q, _, ok := in.lookup(); ok {
		return (*T)(q)
	}
	if !in.admit() {
		return p
	}
	c := (*T)(unsafe.Pointer(&make([]byte, minAlloc)[0])) // T's alignment is ≤ 8, as the allocation's
	*c = *p
	in.store(unsafe.Pointer(c), 0)
	return c
}

// ptr shares pointers to API structs with equal encodings.
func ptr[T any, PT interface {
	*T
	message
}](in *Interner, k kind, p PT) PT {
	if p == nil {
		return nil
	}
	in.begin(k)
	in.appendMsg(p)
	if q, _, ok := in.lookup(); ok {
		return PT(q)
	}
	if !in.admit() {
		return p
	}
	in.store(unsafe.Pointer(p), 0)
	return p
}

// slice shares slices of API structs with equal encodings.
func slice[E any, PE interface {
	*E
	message
}](in *Interner, k kind, s []E) []E {
	if len(s) == 0 {
		return s
	}
	in.begin(k)
	for i := range s {
		in.appendMsg(PE(&s[i]))
	}
	if q, n, ok := in.lookup(); ok {
		return unsafe.Slice((*E)(q), n)
	}
	if !in.admit() {
		return s
	}
	s = s[:len(s):len(s)]
	in.store(unsafe.Pointer(&s[0]), len(s))
	return s
}
