package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/server"
)

// The webhook asks the API server with upstream's review shapes and keeps
// answers for upstream's TTLs.
func TestWebhookReviewsAndCaches(t *testing.T) {
	var tokenReviews, accessReviews atomic.Int32
	var lastSAR authorizationv1.SubjectAccessReview
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			tokenReviews.Add(1)
			var tr authenticationv1.TokenReview
			_ = json.NewDecoder(r.Body).Decode(&tr)
			if tr.Spec.Token == "good" {
				tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "system:serviceaccount:ns:sa", UID: "u1"}}
			}
			_ = json.NewEncoder(w).Encode(&tr)
		case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			accessReviews.Add(1)
			_ = json.NewDecoder(r.Body).Decode(&lastSAR)
			sar := lastSAR
			sar.Status.Allowed = sar.Spec.ResourceAttributes.Subresource == "stats"
			_ = json.NewEncoder(w).Encode(&sar)
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	c, err := client.New(&client.Config{Host: api.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	wh := server.NewWebhook(c, clk)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		u, ok, err := wh.AuthenticateToken(ctx, "good")
		if err != nil || !ok || u.Username != "system:serviceaccount:ns:sa" {
			t.Fatalf("good token: %v %v %v", u, ok, err)
		}
	}
	if _, ok, _ := wh.AuthenticateToken(ctx, "bad"); ok {
		t.Error("a bad token authenticated")
	}
	if n := tokenReviews.Load(); n != 2 {
		t.Errorf("%d token reviews, want 2 (one per token within the TTL)", n)
	}
	clk.Step(server.TokenCacheTTL + time.Second)
	_, _, _ = wh.AuthenticateToken(ctx, "good")
	if n := tokenReviews.Load(); n != 3 {
		t.Errorf("%d token reviews after the TTL, want 3", n)
	}

	user := &authenticationv1.UserInfo{Username: "metrics", Groups: []string{"system:authenticated"}}
	stats := server.Attributes{User: user, Verb: "get", Name: "node-1", Subresource: "stats", Path: "/stats/summary"}
	proxy := server.Attributes{User: user, Verb: "create", Name: "node-1", Subresource: "proxy", Path: "/exec/a/b/c"}
	for i := 0; i < 3; i++ {
		if ok, _, err := wh.Authorize(ctx, stats); !ok || err != nil {
			t.Fatalf("stats: %v %v", ok, err)
		}
		if ok, _, _ := wh.Authorize(ctx, proxy); ok {
			t.Fatal("proxy allowed")
		}
	}
	ra := lastSAR.Spec.ResourceAttributes
	if lastSAR.Spec.User != "metrics" || ra == nil || ra.Resource != "nodes" || ra.Version != "v1" || ra.Name != "node-1" || ra.Verb != "create" || ra.Subresource != "proxy" {
		t.Errorf("review sent: %+v %+v", lastSAR.Spec, ra)
	}
	if n := accessReviews.Load(); n != 2 {
		t.Errorf("%d access reviews, want 2", n)
	}
	// A denial is kept 30 s, an allowance 5 min.
	clk.Step(server.UnauthorizedCacheTTL + time.Second)
	wh.Authorize(ctx, stats)
	wh.Authorize(ctx, proxy)
	if n := accessReviews.Load(); n != 3 {
		t.Errorf("%d access reviews after 31 s, want 3 (only the denial asked again)", n)
	}
}

type fixedMemory struct{ capacity, ws uint64 }

func (f fixedMemory) Memory(context.Context) (uint64, uint64, error) { return f.capacity, f.ws, nil }

// The machine's CPU is cumulative; its rate needs two samples.
func TestMachineStats(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	measure := server.MachineStats(fixedMemory{8 << 30, 3 << 30}, clk)
	n, err := measure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n.CPU == nil || n.CPU.UsageCoreNanoSeconds == nil || *n.CPU.UsageCoreNanoSeconds == 0 || n.CPU.UsageNanoCores != nil {
		t.Errorf("first sample: %+v", n.CPU)
	}
	if n.Memory == nil || *n.Memory.WorkingSetBytes != 3<<30 || *n.Memory.AvailableBytes != 5<<30 {
		t.Errorf("memory: %+v", n.Memory)
	}
	clk.Step(10 * time.Second)
	if n, err = measure(context.Background()); err != nil || n.CPU.UsageNanoCores == nil {
		t.Errorf("second sample: %+v %v", n, err)
	}
}
