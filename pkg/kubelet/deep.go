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
// piece of work through a WorkPool (Config.WorkPool: the hollow agent's
// nodes share one), on one of a set of goroutines whose stacks are grown
// once. WorkPool.run waits for the work: what a worker
// or loop does, and in which order, is unchanged. Work run this way must
// not wait for other such work (it could wait for a turn that never
// comes), nor sleep: a retry loop runs each attempt through run.

// deepIdleMax bounds the idle goroutines kept (more exit when done).
const deepIdleMax = 64

// WorkPool is the set of goroutines a kubelet's (or the hollow agent's
// kubelets') pod workers and node tasks run their work on.
type WorkPool struct {
	mu   sync.Mutex
	idle []chan deepTask
	// sem bounds the work running at once (the rest waits its turn, on
	// its own small stack): in a burst every pod of a hollow agent syncs
	// at once, and each running piece of work has a grown stack. The API
	// server's HTTP/2 connection carries 250 streams at a time anyway.
	sem chan struct{}
}

// NewWorkPool returns an empty pool.
func NewWorkPool() *WorkPool {
	return &WorkPool{sem: make(chan struct{}, deepMax)}
}

type deepTask struct {
	f    func()
	then func() // after f, when not nil
	done chan struct{}
}

// run runs f on a goroutine of the pool (a new one when none is idle),
// once fewer than deepMax run, and returns when f has.
func (p *WorkPool) run(f func()) {
	t := deepTask{f: f, done: make(chan struct{})}
	p.start(t)
	<-t.done
}

// goRun is run without waiting for f: it returns once f has its turn and
// a goroutine; then runs right after f, on that goroutine.
func (p *WorkPool) goRun(f, then func()) {
	p.start(deepTask{f: f, then: then})
}

func (p *WorkPool) start(t deepTask) {
	p.sem <- struct{}{}
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		ch := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		ch <- t
	} else {
		p.mu.Unlock()
		go p.runner(t)
	}
}

func (p *WorkPool) runner(t deepTask) {
	ch := make(chan deepTask)
	for {
		t.f()
		<-p.sem
		if t.then != nil {
			t.then()
		}
		if t.done != nil {
			close(t.done)
		}
		p.mu.Lock()
		if len(p.idle) >= deepIdleMax {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, ch)
		p.mu.Unlock()
		t = <-ch
	}
}

// deepMax bounds the work a pool runs at once.
const deepMax = 256
