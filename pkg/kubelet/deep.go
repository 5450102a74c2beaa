package kubelet

import "sync"

// Long-lived goroutines keep small stacks: a goroutine starts with a 2 KiB
// stack, a sync or an API call grows it to 8 KiB or more, and Go never
// shrinks a grown stack below 4 KiB again (a stack shrinks only while
// less than a quarter of it, counting a fixed reserve, is in use). A
// hollow agent has one pod worker per pod and several loops per node
// (10,000 pods on 1,000 nodes: 17,000 goroutines), so the goroutines that
// live as long as a pod or a node (pod workers, the lease, node status,
// PLEG and eviction loops) wait on their own shallow stack and run each
// piece of work through runDeep, on one of a shared set of goroutines
// whose stacks are grown once. runDeep waits for the work: what a worker
// or loop does, and in which order, is unchanged. Work run this way must
// not wait for other such work (it could wait for a turn that never
// comes), nor sleep: a retry loop runs each attempt through runDeep.

// deepIdleMax bounds the idle goroutines kept (more exit when done).
const deepIdleMax = 64

var deepPool struct {
	mu   sync.Mutex
	idle []chan deepTask
}

type deepTask struct {
	f    func()
	then func() // after f, when not nil
	done chan struct{}
}

// runDeep runs f on a goroutine of the shared set (a new one when none is
// idle), once fewer than deepMax run, and returns when f has.
func runDeep(f func()) {
	t := deepTask{f: f, done: make(chan struct{})}
	startDeep(t)
	<-t.done
}

// goDeep is runDeep without waiting for f: it returns once f has its turn
// and a goroutine; then runs right after f, on that goroutine.
func goDeep(f, then func()) {
	startDeep(deepTask{f: f, then: then})
}

func startDeep(t deepTask) {
	deepSem <- struct{}{}
	deepPool.mu.Lock()
	if n := len(deepPool.idle); n > 0 {
		ch := deepPool.idle[n-1]
		deepPool.idle = deepPool.idle[:n-1]
		deepPool.mu.Unlock()
		ch <- t
	} else {
		deepPool.mu.Unlock()
		go deepRunner(t)
	}
}

func deepRunner(t deepTask) {
	ch := make(chan deepTask)
	for {
		t.f()
		<-deepSem
		if t.then != nil {
			t.then()
		}
		if t.done != nil {
			close(t.done)
		}
		deepPool.mu.Lock()
		if len(deepPool.idle) >= deepIdleMax {
			deepPool.mu.Unlock()
			return
		}
		deepPool.idle = append(deepPool.idle, ch)
		deepPool.mu.Unlock()
		t = <-ch
	}
}

// deepSem bounds the work running at once (the rest waits its turn, on
// its own small stack): in a burst every pod of a hollow agent syncs at
// once, and each running piece of work has a grown stack. The API server's
// HTTP/2 connection carries 250 streams at a time anyway.
var deepSem = make(chan struct{}, deepMax)

const deepMax = 256
