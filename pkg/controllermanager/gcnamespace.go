package controllermanager

import (
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/controller/garbagecollector"
	"github.com/skiff-sh/skiff/pkg/controller/namespace"
)

// ownClient is a client of its own (own token bucket), as upstream gives
// the chatty controllers theirs, with QPS and burst scaled; an
// unthrottled configuration stays unthrottled.
func ownClient(cc ControllerContext, qpsFactor, burstFactor float32) (*client.Client, error) {
	cfg := cc.ClientConfig
	if cfg.QPS > 0 {
		cfg.QPS *= qpsFactor
		cfg.Burst = int(float32(cfg.Burst) * burstFactor)
	}
	return client.New(&cfg)
}

func startGarbageCollector(cc ControllerContext) (Controller, error) {
	// Each collection takes two calls: upstream doubles the QPS.
	c, err := ownClient(cc, 2, 1)
	if err != nil {
		return nil, err
	}
	return garbagecollector.New(garbagecollector.Config{
		Client: c, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}

func startNamespaceController(cc ControllerContext) (Controller, error) {
	// Discovery and deletes in bulk: upstream scales QPS by 20, burst by 100.
	c, err := ownClient(cc, 20, 100)
	if err != nil {
		return nil, err
	}
	return namespace.New(namespace.Config{
		Client: c, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}
