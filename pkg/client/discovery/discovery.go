package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/client"
)

// AcceptAggregated is the Accept header of an aggregated discovery
// request, as client-go sends it.
const AcceptAggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," +
	"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList," +
	"application/json"

// GroupDiscoveryFailedError reports group versions whose resources could
// not be discovered; the other results are valid.
type GroupDiscoveryFailedError struct {
	Groups map[schema.GroupVersion]error
}

func (e *GroupDiscoveryFailedError) Error() string {
	var parts []string
	for gv, err := range e.Groups {
		parts = append(parts, fmt.Sprintf("%s: %v", gv, err))
	}
	sort.Strings(parts)
	return "unable to retrieve the complete list of server APIs: " + strings.Join(parts, ", ")
}

// IsGroupDiscoveryFailedError reports whether err is a partial failure.
func IsGroupDiscoveryFailedError(err error) bool {
	_, ok := err.(*GroupDiscoveryFailedError)
	return err != nil && ok
}

// Client discovers the server's resources and caches them.
type Client struct {
	c *client.Client

	mu     sync.Mutex
	cached *snapshot
	// fetches counts fetches from the server (tests).
	fetches int
}

// snapshot is one discovery of the server.
type snapshot struct {
	groups     *metav1.APIGroupList // core group first, as "" with version v1
	resources  map[schema.GroupVersion]*metav1.APIResourceList
	failed     map[schema.GroupVersion]error
	aggregated bool
}

// New returns a discovery client over c.
func New(c *client.Client) *Client { return &Client{c: c} }

// Invalidate drops the cache: the next call asks the server again.
func (d *Client) Invalidate() {
	d.mu.Lock()
	d.cached = nil
	d.mu.Unlock()
}

// Fresh reports whether the cache holds an answer.
func (d *Client) Fresh() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cached != nil
}

// Fetches is how many times the client discovered the server (cache misses).
func (d *Client) Fetches() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fetches
}

func (d *Client) get(ctx context.Context) (*snapshot, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cached != nil {
		return d.cached, nil
	}
	s, err := d.fetch(ctx)
	if err != nil {
		return nil, err
	}
	d.fetches++
	d.cached = s
	return s, nil
}

func (d *Client) fetch(ctx context.Context) (*snapshot, error) {
	s := &snapshot{groups: &metav1.APIGroupList{}, resources: map[schema.GroupVersion]*metav1.APIResourceList{}, failed: map[schema.GroupVersion]error{}}
	aggCore, okCore, err := d.aggregated(ctx, "/api")
	if err != nil {
		return nil, err
	}
	aggGroups, okGroups, err := d.aggregated(ctx, "/apis")
	if err != nil {
		return nil, err
	}
	if okCore && okGroups {
		s.aggregated = true
		for _, l := range []*apidiscoveryv2.APIGroupDiscoveryList{aggCore, aggGroups} {
			for _, g := range l.Items {
				s.addAggregated(g)
			}
		}
		return s, nil
	}
	return s, d.legacy(ctx, s)
}

// aggregated asks prefix for the aggregated document; ok is false when
// the server answered something else (legacy discovery).
func (d *Client) aggregated(ctx context.Context, prefix string) (*apidiscoveryv2.APIGroupDiscoveryList, bool, error) {
	resp, err := d.c.Do(ctx, &client.Request{Method: http.MethodGet, Path: prefix, Accept: AcceptAggregated})
	if err != nil {
		return nil, false, err
	}
	if !strings.Contains(resp.ContentType, "as=APIGroupDiscoveryList") {
		return nil, false, nil
	}
	var l apidiscoveryv2.APIGroupDiscoveryList // v2beta1 is field-for-field the same
	if err := json.Unmarshal(resp.Body, &l); err != nil {
		return nil, false, fmt.Errorf("discovery: %s: %w", prefix, err)
	}
	return &l, true, nil
}

func (s *snapshot) addAggregated(g apidiscoveryv2.APIGroupDiscovery) {
	grp := metav1.APIGroup{Name: g.Name}
	for _, v := range g.Versions {
		gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
		grp.Versions = append(grp.Versions, metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: v.Version})
		if v.Freshness == apidiscoveryv2.DiscoveryFreshnessStale {
			s.failed[gv] = fmt.Errorf("stale GroupVersion discovery: %v", gv)
			continue
		}
		rl := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String()}
		for _, r := range v.Resources {
			ar := metav1.APIResource{
				Name: r.Resource, SingularName: r.SingularResource, Namespaced: r.Scope == apidiscoveryv2.ScopeNamespace,
				Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
			}
			if r.ResponseKind != nil {
				ar.Group, ar.Version, ar.Kind = r.ResponseKind.Group, r.ResponseKind.Version, r.ResponseKind.Kind
				if ar.Group == g.Name && ar.Version == v.Version {
					ar.Group, ar.Version = "", ""
				}
			}
			rl.APIResources = append(rl.APIResources, ar)
			for _, sub := range r.Subresources {
				sr := metav1.APIResource{Name: r.Resource + "/" + sub.Subresource, Namespaced: ar.Namespaced, Verbs: sub.Verbs}
				if sub.ResponseKind != nil {
					sr.Group, sr.Version, sr.Kind = sub.ResponseKind.Group, sub.ResponseKind.Version, sub.ResponseKind.Kind
				}
				rl.APIResources = append(rl.APIResources, sr)
			}
		}
		s.resources[gv] = rl
	}
	if len(grp.Versions) > 0 {
		grp.PreferredVersion = grp.Versions[0]
	}
	s.groups.Groups = append(s.groups.Groups, grp)
}

func (d *Client) getJSON(ctx context.Context, path string, into any) error {
	resp, err := d.c.Do(ctx, &client.Request{Method: http.MethodGet, Path: path, Accept: "application/json"})
	if err != nil {
		return err
	}
	return json.Unmarshal(resp.Body, into)
}

// legacy discovers through /api, /apis and one request per group version.
func (d *Client) legacy(ctx context.Context, s *snapshot) error {
	var core metav1.APIVersions
	if err := d.getJSON(ctx, "/api", &core); err != nil {
		return err
	}
	coreGroup := metav1.APIGroup{}
	for _, v := range core.Versions {
		coreGroup.Versions = append(coreGroup.Versions, metav1.GroupVersionForDiscovery{GroupVersion: v, Version: v})
	}
	if len(coreGroup.Versions) > 0 {
		coreGroup.PreferredVersion = coreGroup.Versions[0]
	}
	var groups metav1.APIGroupList
	if err := d.getJSON(ctx, "/apis", &groups); err != nil {
		return err
	}
	s.groups.Groups = append([]metav1.APIGroup{coreGroup}, groups.Groups...)
	for _, g := range s.groups.Groups {
		for _, v := range g.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			path := "/apis/" + gv.String()
			if g.Name == "" {
				path = "/api/" + v.Version
			}
			rl := &metav1.APIResourceList{}
			if err := d.getJSON(ctx, path, rl); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				s.failed[gv] = err
				continue
			}
			s.resources[gv] = rl
		}
	}
	return nil
}

func (s *snapshot) err() error {
	if len(s.failed) == 0 {
		return nil
	}
	e := &GroupDiscoveryFailedError{Groups: map[schema.GroupVersion]error{}}
	for gv, err := range s.failed {
		e.Groups[gv] = err
	}
	return e
}

// ServerGroups returns the served groups (the core group first, named "").
func (d *Client) ServerGroups(ctx context.Context) (*metav1.APIGroupList, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.groups.DeepCopy(), nil
}

// Aggregated reports whether the last discovery used the aggregated
// document (false: legacy, or nothing cached).
func (d *Client) Aggregated() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cached != nil && d.cached.aggregated
}

// ServerResourcesForGroupVersion returns the resources of one group version.
func (d *Client) ServerResourcesForGroupVersion(ctx context.Context, gv schema.GroupVersion) (*metav1.APIResourceList, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	if rl, ok := s.resources[gv]; ok {
		return rl.DeepCopy(), nil
	}
	if err, ok := s.failed[gv]; ok {
		return nil, err
	}
	return nil, fmt.Errorf("the server could not find the requested resource (group version %s)", gv)
}

// ServerGroupsAndResources returns every group and the resources of every
// group version; err is a *GroupDiscoveryFailedError when some group
// versions failed (the rest is valid).
func (d *Client) ServerGroupsAndResources(ctx context.Context) ([]metav1.APIGroup, []*metav1.APIResourceList, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, nil, err
	}
	var out []*metav1.APIResourceList
	for _, g := range s.groups.Groups {
		for _, v := range g.Versions {
			if rl, ok := s.resources[schema.GroupVersion{Group: g.Name, Version: v.Version}]; ok {
				out = append(out, rl.DeepCopy())
			}
		}
	}
	return s.groups.DeepCopy().Groups, out, s.err()
}

// ServerPreferredResources returns, per group, the resources of its
// preferred version, plus those only served by other versions (as
// client-go's ServerPreferredResources). err as ServerGroupsAndResources.
func (d *Client) ServerPreferredResources(ctx context.Context) ([]*metav1.APIResourceList, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	var out []*metav1.APIResourceList
	for _, g := range s.groups.Groups {
		seen := sets.New[string]()
		// The preferred version first, then the others in order.
		versions := []string{g.PreferredVersion.Version}
		for _, v := range g.Versions {
			if v.Version != g.PreferredVersion.Version {
				versions = append(versions, v.Version)
			}
		}
		for _, v := range versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v}
			rl, ok := s.resources[gv]
			if !ok {
				continue
			}
			pl := &metav1.APIResourceList{TypeMeta: rl.TypeMeta, GroupVersion: rl.GroupVersion}
			for _, r := range rl.APIResources {
				if strings.Contains(r.Name, "/") || seen.Has(r.Name) {
					continue
				}
				seen.Insert(r.Name)
				pl.APIResources = append(pl.APIResources, *r.DeepCopy())
			}
			if len(pl.APIResources) > 0 {
				out = append(out, pl)
			}
		}
	}
	return out, s.err()
}

// ServerPreferredNamespacedResources is ServerPreferredResources limited
// to namespaced resources.
func (d *Client) ServerPreferredNamespacedResources(ctx context.Context) ([]*metav1.APIResourceList, error) {
	all, err := d.ServerPreferredResources(ctx)
	return FilteredBy(func(_ string, r metav1.APIResource) bool { return r.Namespaced }, all), err
}

// FilteredBy keeps the resources pred accepts (dropping emptied lists).
func FilteredBy(pred func(groupVersion string, r metav1.APIResource) bool, lists []*metav1.APIResourceList) []*metav1.APIResourceList {
	var out []*metav1.APIResourceList
	for _, l := range lists {
		fl := &metav1.APIResourceList{TypeMeta: l.TypeMeta, GroupVersion: l.GroupVersion}
		for _, r := range l.APIResources {
			if pred(l.GroupVersion, r) {
				fl.APIResources = append(fl.APIResources, r)
			}
		}
		if len(fl.APIResources) > 0 {
			out = append(out, fl)
		}
	}
	return out
}

// SupportsAllVerbs is a FilteredBy predicate: the resource supports every
// verb.
func SupportsAllVerbs(verbs ...string) func(string, metav1.APIResource) bool {
	return func(_ string, r metav1.APIResource) bool {
		return sets.New(r.Verbs...).HasAll(verbs...)
	}
}

// GroupVersionResources returns the GVRs of lists; err for a list whose
// group version does not parse.
func GroupVersionResources(lists []*metav1.APIResourceList) (map[schema.GroupVersionResource]metav1.APIResource, error) {
	out := map[schema.GroupVersionResource]metav1.APIResource{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range l.APIResources {
			out[gv.WithResource(r.Name)] = r
		}
	}
	return out, nil
}

// ResourceOf returns the client.Resource of a discovered resource.
func ResourceOf(gvr schema.GroupVersionResource, r metav1.APIResource) client.Resource {
	return client.Resource{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource, Namespaced: r.Namespaced}
}
