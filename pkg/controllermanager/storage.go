package controllermanager

import (
	"github.com/skiff-sh/skiff/pkg/controller/volume/persistentvolume"
)

// The InitFuncs of the storage controllers (PersistentVolume binder).

func startPersistentVolumeBinder(cc ControllerContext) (Controller, error) {
	return persistentvolume.New(persistentvolume.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}
