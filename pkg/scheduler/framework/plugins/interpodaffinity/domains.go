package interpodaffinity

import corev1 "k8s.io/api/core/v1"

// domainAcc sums values per topology domain within one block of nodes:
// per topology key (a handful), a short list of values searched linearly
// (zones and regions are few), switching to a map past maxListed values
// (hostnames). Cheaper than a map keyed by (key, value) per node.
type domainAcc struct {
	keys []string
	per  []domainValues
}

type domainValues struct {
	list []valueSum
	m    map[string]int64
}

type valueSum struct {
	value string
	sum   int64
}

const maxListed = 16

// add adds n to the node's domain of tk (nothing when the node lacks tk).
func (d *domainAcc) add(node *corev1.Node, tk string, n int64) {
	v, ok := node.Labels[tk]
	if !ok {
		return
	}
	ki := -1
	for i, k := range d.keys {
		if k == tk {
			ki = i
			break
		}
	}
	if ki < 0 {
		d.keys = append(d.keys, tk)
		d.per = append(d.per, domainValues{})
		ki = len(d.keys) - 1
	}
	dv := &d.per[ki]
	if dv.m != nil {
		dv.m[v] += n
		return
	}
	for i := range dv.list {
		if dv.list[i].value == v {
			dv.list[i].sum += n
			return
		}
	}
	if len(dv.list) < maxListed {
		dv.list = append(dv.list, valueSum{v, n})
		return
	}
	dv.m = make(map[string]int64, 2*maxListed)
	for _, e := range dv.list {
		dv.m[e.value] = e.sum
	}
	dv.list = nil
	dv.m[v] += n
}

func (d *domainAcc) empty() bool { return len(d.keys) == 0 }

// each calls fn for every domain with its sum.
func (d *domainAcc) each(fn func(tk, v string, sum int64)) {
	for i, tk := range d.keys {
		dv := &d.per[i]
		for _, e := range dv.list {
			fn(tk, e.value, e.sum)
		}
		for v, sum := range dv.m {
			fn(tk, v, sum)
		}
	}
}

// counts returns the non-zero sums as topologyCounts (nil when none).
func (d *domainAcc) counts() topologyCounts {
	if d.empty() {
		return nil
	}
	out := topologyCounts{}
	d.each(func(tk, v string, sum int64) {
		if sum != 0 {
			out[topologyPair{tk, v}] += sum
		}
	})
	return out
}

// scores returns every sum (zero ones too: upstream records a domain as
// soon as a term matched there) as a scoreMap (nil when none).
func (d *domainAcc) scores() scoreMap {
	if d.empty() {
		return nil
	}
	out := scoreMap{}
	d.each(func(tk, v string, sum int64) {
		vs := out[tk]
		if vs == nil {
			vs = map[string]int64{}
			out[tk] = vs
		}
		vs[v] += sum
	})
	return out
}
