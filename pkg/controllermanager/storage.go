package controllermanager

import (
	"github.com/skiff-sh/skiff/pkg/controller/volume/ephemeral"
	"github.com/skiff-sh/skiff/pkg/controller/volume/localpath"
	"github.com/skiff-sh/skiff/pkg/controller/volume/persistentvolume"
	"github.com/skiff-sh/skiff/pkg/controller/volume/pvcprotection"
	"github.com/skiff-sh/skiff/pkg/controller/volume/pvprotection"
)

// The InitFuncs of the storage controllers: the PersistentVolume binder,
// the PVC and PV protection controllers, the ephemeral volume controller
// and skiff's local-path provisioner.

// LocalPathConfig configures the skiff-local-path-provisioner controller
// (see pkg/controller/volume/localpath): the provisioner of the default
// StorageClass "local-path" (skiff.io/local-path, WaitForFirstConsumer,
// reclaim Delete), which it creates at start when absent.
type LocalPathConfig struct {
	// StorageDir holds the volumes' directories on the nodes
	// (--local-path-storage-dir; default /var/lib/skiff/storage; skiff up:
	// <data dir>/storage).
	StorageDir string
	// ManageDirectories: the nodes' file system is this process's (skiff
	// up, one host): create the directories at provisioning and remove
	// them at deletion. Otherwise the kubelet creates them (hostPath
	// DirectoryOrCreate) and deleted volumes' directories stay.
	ManageDirectories bool
}

func startPersistentVolumeBinder(cc ControllerContext) (Controller, error) {
	return persistentvolume.New(persistentvolume.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
		SyncPeriod: cc.Config.PVClaimBinderSyncPeriod,
	})
}

func startLocalPathProvisioner(cc ControllerContext) (Controller, error) {
	return localpath.New(localpath.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
		StorageDir: cc.Config.LocalPath.StorageDir, ManageDirectories: cc.Config.LocalPath.ManageDirectories,
	})
}

func startPVCProtectionController(cc ControllerContext) (Controller, error) {
	return pvcprotection.New(pvcprotection.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}

func startPVProtectionController(cc ControllerContext) (Controller, error) {
	return pvprotection.New(pvprotection.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}

func startEphemeralVolumeController(cc ControllerContext) (Controller, error) {
	return ephemeral.New(ephemeral.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}
