package main

import (
	"github.com/spf13/pflag"

	"github.com/skiff-sh/skiff/pkg/controllermanager"
)

// addNetworkControllerFlags adds the flags of the endpointslice
// controllers (upstream's names and defaults).
func addNetworkControllerFlags(f *pflag.FlagSet, cfg *controllermanager.Config) {
	n := &cfg.Network
	f.IntVar(&n.MaxEndpointsPerSlice, "max-endpoints-per-slice", controllermanager.DefaultMaxEndpointsPerSlice, "The maximum number of endpoints that will be added to an EndpointSlice. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 100.")
	f.IntVar(&n.MirroringMaxEndpointsPerSubset, "mirroring-max-endpoints-per-subset", controllermanager.DefaultMirroringMaxEndpointsPerSubset, "The maximum number of endpoints that will be added to an EndpointSlice by the EndpointSliceMirroring controller. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 100.")
}
