package kubelet

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// pleg is the pod lifecycle event generator: it relists the runtime every
// PLEGRelistPeriod and syncs the pods whose sandboxes or containers
// changed; what belongs to pods the kubelet has no worker for is removed.
type pleg struct {
	k    *Kubelet
	last map[string]string // pod UID → fingerprint of its runtime state
}

func (p *pleg) run(ctx context.Context) {
	t := p.k.clock.NewTicker(p.k.cfg.PLEGRelistPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			if err := p.relist(ctx); err != nil && ctx.Err() == nil {
				p.k.log.Warn("PLEG relist", "err", err)
			}
		}
	}
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
	parts := map[string][]string{}
	for _, s := range sbs.Items {
		uid := s.Labels[cri.LabelPodUID]
		parts[uid] = append(parts[uid], "s"+s.Id+"="+strconv.Itoa(int(s.State)))
	}
	for _, c := range cs.Containers {
		uid := c.Labels[cri.LabelPodUID]
		parts[uid] = append(parts[uid], "c"+c.Id+"="+strconv.Itoa(int(c.State)))
	}
	now := map[string]string{}
	for uid, ps := range parts {
		sort.Strings(ps)
		now[uid] = strings.Join(ps, ",")
	}
	for uid, fp := range now {
		if p.last[uid] == fp {
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
