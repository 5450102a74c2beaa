package apiserver

import (
	"context"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/flowcontrol"
	"github.com/skiff-sh/skiff/pkg/storage"
)

var (
	grFlowSchemas    = schema.GroupResource{Group: flowcontrol.Group, Resource: "flowschemas"}
	grPriorityLevels = schema.GroupResource{Group: flowcontrol.Group, Resource: "prioritylevelconfigurations"}
)

// ensureFlowControl keeps upstream's API Priority and Fairness bootstrap
// configuration in storage, as upstream's API server does at start:
// missing objects are created; mandatory ones are brought back to their
// fixed spec, suggested ones only while their autoupdate annotation is
// "true" (an administrator who sets it to "false" keeps their changes).
func (s *Server) ensureFlowControl(ctx context.Context) error {
	if s.stores[grPriorityLevels] == nil || s.stores[grFlowSchemas] == nil {
		return nil
	}
	for i, list := range [][]*flowcontrolv1.PriorityLevelConfiguration{flowcontrol.MandatoryPriorityLevelConfigurations(), flowcontrol.SuggestedPriorityLevelConfigurations()} {
		for _, want := range list {
			err := s.ensureBootstrap(ctx, grPriorityLevels, want, func(cur runtime.Object) runtime.Object {
				if out := flowcontrol.UpdatePriorityLevelConfiguration(cur.(*flowcontrolv1.PriorityLevelConfiguration), want, i == 0); out != nil {
					return out
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	for i, list := range [][]*flowcontrolv1.FlowSchema{flowcontrol.MandatoryFlowSchemas(), flowcontrol.SuggestedFlowSchemas()} {
		for _, want := range list {
			err := s.ensureBootstrap(ctx, grFlowSchemas, want, func(cur runtime.Object) runtime.Object {
				if out := flowcontrol.UpdateFlowSchema(cur.(*flowcontrolv1.FlowSchema), want, i == 0); out != nil {
					return out
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return s.syncFlowSchemaStatus(ctx)
}

// syncFlowSchemaStatus sets each FlowSchema's Dangling condition.
func (s *Server) syncFlowSchemaStatus(ctx context.Context) error {
	fsStore, plStore := s.stores[grFlowSchemas], s.stores[grPriorityLevels]
	var status *registry.Store
	for _, e := range s.endpoints {
		if e.qualified == grFlowSchemas && e.version == nil {
			status = e.status
		}
	}
	if fsStore == nil || plStore == nil || status == nil {
		return nil
	}
	pls, _, err := plStore.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return err
	}
	levels := map[string]bool{}
	plObjs := make([]*flowcontrolv1.PriorityLevelConfiguration, 0, len(pls))
	for _, o := range pls {
		pl := storage.Unwrap(o).(*flowcontrolv1.PriorityLevelConfiguration)
		levels[pl.Name] = true
		plObjs = append(plObjs, pl)
	}
	fss, _, err := fsStore.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return err
	}
	fsObjs := make([]*flowcontrolv1.FlowSchema, 0, len(fss))
	for _, o := range fss {
		fsObjs = append(fsObjs, storage.Unwrap(o).(*flowcontrolv1.FlowSchema))
	}
	s.apf.Store(flowcontrol.NewClassifier(fsObjs, plObjs))
	now := metav1.NewTime(s.cfg.Clock.Now().Truncate(time.Second))
	for _, o := range fss {
		fs := storage.Unwrap(o).(*flowcontrolv1.FlowSchema).DeepCopy()
		if !flowcontrol.SetDangling(fs, levels[fs.Spec.PriorityLevelConfiguration.Name], now) {
			continue
		}
		_, _, err := status.Update(ctx, "", fs.Name, &objInfo{update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
			cur := storage.Unwrap(old).(*flowcontrolv1.FlowSchema).DeepCopy()
			flowcontrol.SetDangling(cur, levels[cur.Spec.PriorityLevelConfiguration.Name], now)
			return cur, nil
		}}, nil, nil, registry.UpdateOptions{NoCreate: true})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// ensureBootstrap creates want if missing, else stores what update makes
// of the stored object (nil: leave it).
func (s *Server) ensureBootstrap(ctx context.Context, gr schema.GroupResource, want runtime.Object, update func(cur runtime.Object) runtime.Object) error {
	st := s.stores[gr]
	ns, name := objectName(want)
	cur, err := st.Get(ctx, ns, name, metav1.GetOptions{ResourceVersion: "0"}) // the watch cache: this runs every few seconds
	if apierrors.IsNotFound(err) {
		return s.ensure(ctx, gr, want.DeepCopyObject())
	}
	if err != nil {
		return err
	}
	if update(storage.Unwrap(cur)) == nil {
		return nil
	}
	_, _, err = st.Update(ctx, ns, name, &objInfo{update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
		if out := update(storage.Unwrap(old)); out != nil {
			return out, nil
		}
		return storage.Unwrap(old).DeepCopyObject(), nil
	}}, nil, nil, registry.UpdateOptions{NoCreate: true})
	return err
}
