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
	f.DurationVar(&n.EndpointUpdatesBatchPeriod, "endpoint-updates-batch-period", 0, "The length of endpoint updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated")
	f.DurationVar(&n.EndpointSliceUpdatesBatchPeriod, "endpointslice-updates-batch-period", 0, "The length of endpoint slice updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated")
	f.IntVar(&n.MirroringMaxEndpointsPerSubset, "mirroring-max-endpoints-per-subset", controllermanager.DefaultMirroringMaxEndpointsPerSubset, "The maximum number of endpoints that will be added to an EndpointSlice by the EndpointSliceMirroring controller. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 100.")
}
