package kubelet

import (
	"context"
	"hash/maphash"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// pleg is the pod lifecycle event generator: it relists the runtime every
// PLEGRelistPeriod and syncs the pods whose sandboxes or containers
// changed; what belongs to pods the kubelet has no worker for is removed.
// A pod's runtime state is remembered as a fingerprint (a sum of hashes
// of its sandboxes' and containers' IDs and states), not a copy.
type pleg struct {
	k    *Kubelet
	last map[string]uint64 // pod UID → fingerprint of its runtime state
	now  map[string]uint64 // the relist's, reused
}

var plegSeed = maphash.MakeSeed()

// plegHash is one sandbox's (kind 's') or container's ('c') share of its
// pod's fingerprint: order does not matter (a sum), every part does.
func plegHash(kind byte, id string, state int32) uint64 {
	h := maphash.String(plegSeed, id) ^ uint64(kind)<<56 ^ (uint64(uint32(state))+1)*0x9e3779b97f4a7c15
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// task relists every PLEGRelistPeriod.
func (p *pleg) task() task {
	return task{period: p.k.cfg.PLEGRelistPeriod, run: func(ctx context.Context) {
		if err := p.relist(ctx); err != nil && ctx.Err() == nil {
			p.k.log.Warn("PLEG relist", "err", err)
		}
	}}
}

func (p *pleg) relist(ctx context.Context) error {
	sbs, err := p.k.cfg.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	cs, err := p.k.cfg.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return err
	}
	if p.now == nil {
		p.now = map[string]uint64{}
	}
	now := p.now
	clear(now)
	for _, s := range sbs.Items {
		now[s.Labels[cri.LabelPodUID]] += plegHash('s', s.Id, int32(s.State))
	}
	for _, c := range cs.Containers {
		now[c.Labels[cri.LabelPodUID]] += plegHash('c', c.Id, int32(c.State))
	}
	for uid, fp := range now {
		if last, ok := p.last[uid]; ok && last == fp {
			continue
		}
		p.k.mu.Lock()
		w := p.k.workers[types.UID(uid)]
		p.k.mu.Unlock()
		if w != nil {
			w.poke()
		} else if err := p.k.removePodFromRuntime(ctx, types.UID(uid)); err != nil {
			p.k.log.Warn("removing an orphaned pod from the runtime", "uid", uid, "err", err)
			continue
		}
		p.last[uid] = fp
	}
	for uid := range p.last {
		if _, ok := now[uid]; !ok {
			delete(p.last, uid)
		}
	}
	return nil
}
