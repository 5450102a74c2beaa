package apiserver

import (
	"context"
	"sort"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/apiregistration"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// As upstream's aggregator, the API server keeps a local APIService for
// each group/version it serves (registered at start, labelled
// automanaged=onstart) and one for each custom resource group/version
// (automanaged=true, deleted when its last CRD version goes), all marked
// Available with reason Local.

var grAPIServices = schema.GroupResource{Group: apiregistrationv1.GroupName, Resource: "apiservices"}

// apiServiceRetry is how soon a failed sync is tried again.
const apiServiceRetry = 10 * time.Second

// apiServiceController re-syncs the local APIServices when the served
// custom resources change.
type apiServiceController struct {
	s    *Server
	poke chan struct{}
	// woken is set once the CRD controller has published the served
	// custom resources: from then on, CRD APIServices may be pruned.
	woken atomic.Bool
}

func newAPIServiceController(s *Server) *apiServiceController {
	return &apiServiceController{s: s, poke: make(chan struct{}, 1)}
}

func (c *apiServiceController) wake() {
	if c == nil {
		return
	}
	c.woken.Store(true)
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

func (c *apiServiceController) run(ctx context.Context) {
	t := c.s.cfg.Clock.NewTicker(apiServiceRetry)
	defer t.Stop()
	failed := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.poke:
		case <-t.C():
			if !failed {
				continue
			}
		}
		// Woken by the CRD controller, which has published the custom
		// resources: only now may APIServices of CRDs gone be deleted.
		err := c.s.syncAPIServices(ctx, true)
		failed = err != nil
		if failed && ctx.Err() == nil {
			c.s.cfg.Logger.Warn("syncing local APIServices", "err", err)
		}
	}
}

// desiredAPIServices lists the local APIServices by name: the built-in
// group/versions in upstream's table, then the custom resource ones.
func (s *Server) desiredAPIServices() map[string]*apiregistrationv1.APIService {
	out := map[string]*apiregistrationv1.APIService{}
	for gvr := range s.endpoints {
		if a := apiregistration.LocalAPIService(gvr.GroupVersion()); a != nil {
			out[a.Name] = a
		}
	}
	if cs := s.crs.Load(); cs != nil {
		for gvr := range cs.endpoints {
			gv := gvr.GroupVersion()
			if out[apiregistration.Name(gv)] == nil {
				a := apiregistration.CustomResourceAPIService(gv)
				out[a.Name] = a
			}
		}
	}
	return out
}

// syncAPIServices creates missing local APIServices, brings managed ones
// back to their spec, marks them Available, and (with prune) deletes the
// custom resource ones nothing serves any more. At start the custom
// resources are not served yet, so start does not prune (as upstream waits
// for the CRD controller's first sync).
func (s *Server) syncAPIServices(ctx context.Context, prune bool) error {
	st := s.stores[grAPIServices]
	if st == nil {
		return nil
	}
	var status *registry.Store
	for _, e := range s.endpoints {
		if e.qualified == grAPIServices && e.version == nil {
			status = e.status
		}
	}
	desired := s.desiredAPIServices()
	names := make([]string, 0, len(desired))
	for n := range desired {
		names = append(names, n)
	}
	sort.Strings(names)
	now := metav1.NewTime(s.cfg.Clock.Now().Truncate(time.Second))
	for _, name := range names {
		want := desired[name]
		err := s.ensureBootstrap(ctx, grAPIServices, want, func(cur runtime.Object) runtime.Object {
			a := cur.(*apiregistrationv1.APIService)
			if a.Labels[apiregistration.AutoManagedLabel] == "" || equality.Semantic.DeepEqual(a.Spec, want.Spec) {
				return nil
			}
			out := a.DeepCopy()
			out.Spec = want.Spec
			return out
		})
		if err != nil {
			return err
		}
		if status == nil {
			continue
		}
		cur, err := st.Get(ctx, "", name, metav1.GetOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if a := storage.Unwrap(cur).(*apiregistrationv1.APIService).DeepCopy(); a.Spec.Service != nil || !apiregistration.SetLocalAvailable(a, now) {
			continue
		}
		_, _, err = status.Update(ctx, "", name, &objInfo{update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
			a := storage.Unwrap(old).(*apiregistrationv1.APIService).DeepCopy()
			if a.Spec.Service == nil {
				apiregistration.SetLocalAvailable(a, now)
			}
			return a, nil
		}}, nil, nil, registry.UpdateOptions{NoCreate: true})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if !prune {
		return nil
	}
	objs, _, err := st.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return err
	}
	for _, o := range objs {
		a := storage.Unwrap(o).(*apiregistrationv1.APIService)
		if a.Labels[apiregistration.AutoManagedLabel] != "true" || desired[a.Name] != nil {
			continue
		}
		if _, err := st.Delete(ctx, "", a.Name, nil, nil); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
