package controllermanager

import (
	"encoding/pem"
	"fmt"
	"os"

	"github.com/skiff-sh/skiff/pkg/controller/certificates/rootcacertpublisher"
	"github.com/skiff-sh/skiff/pkg/controller/serviceaccount"
)

// The InitFuncs of the controllers skiff implements: each maps the
// ControllerContext onto its controller's Config.

func startServiceAccountController(cc ControllerContext) (Controller, error) {
	return serviceaccount.New(serviceaccount.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}

func startRootCACertPublisher(cc ControllerContext) (Controller, error) {
	ca, err := rootCA(cc)
	if err != nil {
		return nil, err
	}
	if ca == nil {
		cc.Logger.Warn("No root CA to publish (no --root-ca-file and the kubeconfig names no certificate authority): not starting")
		return nil, nil
	}
	return rootcacertpublisher.New(rootcacertpublisher.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider, RootCA: ca,
	})
}

// rootCA is --root-ca-file, else the CA the manager's client trusts, as
// upstream.
func rootCA(cc ControllerContext) ([]byte, error) {
	var data []byte
	var err error
	switch {
	case cc.Config.RootCAFile != "":
		if data, err = os.ReadFile(cc.Config.RootCAFile); err != nil {
			return nil, fmt.Errorf("error reading root-ca-file at %s: %w", cc.Config.RootCAFile, err)
		}
	case len(cc.ClientConfig.CAData) > 0:
		data = cc.ClientConfig.CAData
	case cc.ClientConfig.CAFile != "":
		if data, err = os.ReadFile(cc.ClientConfig.CAFile); err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	if b, _ := pem.Decode(data); b == nil || b.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("root CA: no PEM certificate")
	}
	return data, nil
}
