package controllermanager

import (
	"github.com/skiff-sh/skiff/pkg/controller/deployment"
	"github.com/skiff-sh/skiff/pkg/controller/replicaset"
)

// The InitFuncs of the workload controllers (ReplicaSet,
// ReplicationController, Deployment).

func startReplicaSetController(cc ControllerContext) (Controller, error) {
	return replicaset.New(replicaSetConfig(cc))
}

func startReplicationController(cc ControllerContext) (Controller, error) {
	return replicaset.NewReplicationManager(replicaSetConfig(cc))
}

func replicaSetConfig(cc ControllerContext) replicaset.Config {
	return replicaset.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	}
}

func startDeploymentController(cc ControllerContext) (Controller, error) {
	return deployment.New(deployment.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}
