package clusterroleaggregation

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// QueueName is upstream's queue name.
const QueueName = "ClusterRoleAggregator"

// FieldManager is the manager of the applied rules, upstream's.
const FieldManager = "clusterrole-aggregation-controller"

// Config configures the controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	// Workers is 5 upstream (no flag).
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
}

// Controller aggregates ClusterRoles.
type Controller struct {
	cfg    Config
	roles  *client.Typed[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList]
	lister cache.Lister[*rbacv1.ClusterRole]
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
}

// New registers the controller's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("clusterroleaggregation: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Workers < 1 {
		cfg.Workers = 5
	}
	inf := informers.InformerFor[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](cfg.Informers)
	c := &Controller{
		cfg: cfg, roles: client.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](cfg.Client),
		lister: inf.Lister(), synced: inf.HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	if _, err := inf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*rbacv1.ClusterRole]{
		AddFunc:    func(*rbacv1.ClusterRole, bool) { c.enqueueAll() },
		UpdateFunc: func(_, _ *rbacv1.ClusterRole) { c.enqueueAll() },
		DeleteFunc: func(cache.DeletedObject[*rbacv1.ClusterRole]) { c.enqueueAll() },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// enqueueAll queues every aggregated ClusterRole.
func (c *Controller) enqueueAll() {
	roles, err := c.lister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, r := range roles {
		if r.AggregationRule != nil {
			c.queue.Add(r.Name)
		}
	}
}

// Run waits for the cache and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Logger.Info("Starting ClusterRoleAggregator controller")
	defer c.cfg.Logger.Info("Shutting down ClusterRoleAggregator controller")
	if !cache.WaitForCacheSync(ctx, c.synced) {
		return nil
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.sync, func(name string, err error) {
		c.cfg.Logger.Error("Aggregating ClusterRole failed", "clusterrole", name, "err", err)
	})
	return nil
}

// Aggregate is the union of the rules of the roles each selector of
// role's aggregationRule matches (see the package doc).
func Aggregate(role *rbacv1.ClusterRole, all []*rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	rules := []rbacv1.PolicyRule{}
	if role.AggregationRule == nil {
		return rules, nil
	}
	byName := slices.Clone(all)
	slices.SortFunc(byName, func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	for i := range role.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, err
		}
		for _, other := range byName {
			if other.Name == role.Name || !sel.Matches(labels.Set(other.Labels)) {
				continue
			}
			for _, r := range other.Rules {
				if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, r) }) {
					rules = append(rules, r)
				}
			}
		}
	}
	return rules, nil
}

// sync aggregates the ClusterRole name.
func (c *Controller) sync(ctx context.Context, name string) error {
	role, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if role.AggregationRule == nil {
		return nil
	}
	all, err := c.lister.List(labels.Everything())
	if err != nil {
		return err
	}
	rules, err := Aggregate(role, all)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(rules, role.Rules) {
		return nil
	}
	return c.apply(ctx, name, rules)
}

// apply writes rules by server-side apply, forced.
func (c *Controller) apply(ctx context.Context, name string, rules []rbacv1.PolicyRule) error {
	body, err := json.Marshal(struct {
		APIVersion string              `json:"apiVersion"`
		Kind       string              `json:"kind"`
		Metadata   map[string]string   `json:"metadata"`
		Rules      []rbacv1.PolicyRule `json:"rules,omitempty"`
	}{"rbac.authorization.k8s.io/v1", "ClusterRole", map[string]string{"name": name}, rules})
	if err != nil {
		return err
	}
	force := true
	_, err = c.roles.Patch(ctx, name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
	return err
}
