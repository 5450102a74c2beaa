package cache

import (
	"fmt"
	"testing"
)

// BenchmarkUpdateSnapshot: 5000 nodes with 10 pods each, one pod assumed
// per cycle (the scheduler's steady state): the update copies one node.
func BenchmarkUpdateSnapshot(b *testing.B) {
	c, _ := newTestCache(0)
	for i := 0; i < 5000; i++ {
		name := fmt.Sprintf("n%d", i)
		c.AddNode(nil, mkNode(name, fmt.Sprintf("z%d", i%3)))
		for j := 0; j < 10; j++ {
			if err := c.AddPod(nil, mkPod(fmt.Sprintf("p%d-%d", i, j), name, "100m")); err != nil {
				b.Fatal(err)
			}
		}
	}
	s := NewEmptySnapshot()
	if err := c.UpdateSnapshot(nil, s); err != nil {
		b.Fatal(err)
	}
	pods := make([]string, b.N)
	for i := range pods {
		pods[i] = fmt.Sprintf("new-%d", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.AssumePod(nil, mkPod(pods[i], fmt.Sprintf("n%d", i%5000), "100m")); err != nil {
			b.Fatal(err)
		}
		if err := c.UpdateSnapshot(nil, s); err != nil {
			b.Fatal(err)
		}
	}
}
