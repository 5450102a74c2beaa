// Package networking holds the networking.k8s.io/v1 resources: defaulting,
// validation and strategy. ipaddresses and servicecidrs record Service IP
// allocation (the Service allocator in pkg/registry/core creates one
// IPAddress per allocated cluster IP; the object's name is the address in
// canonical form, so storage's create-if-absent makes an address belong to
// at most one Service, across any number of API servers).
package networking
