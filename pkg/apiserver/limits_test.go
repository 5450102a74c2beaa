package apiserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// A GET for a resourceVersion the server has not reached waits (up to 3 s)
// for the watch cache: a convenient request that stays in flight.
const slowPath = "/api/v1/namespaces/default?resourceVersion=99999999"

func getStatus(t *testing.T, c *http.Client, url string) (int, http.Header, metav1.Status) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st metav1.Status
	body, _ := io.ReadAll(resp.Body)
	json.Unmarshal(body, &st)
	return resp.StatusCode, resp.Header, st
}

func TestMaxRequestsInFlightAnswers429(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{Tweak: func(c *apiserver.Config) {
		c.MaxRequestsInFlight = 1
	}})
	c := env.HTTPClient()
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		// Our own probes may take the one slot first: try until the slow
		// request is the one in flight.
		for {
			resp, err := c.Get(env.URL + slowPath)
			if err != nil {
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusTooManyRequests {
				return
			}
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, h, st := getStatus(t, c, env.URL+"/api/v1/namespaces/default")
		if code == http.StatusTooManyRequests {
			if h.Get("Retry-After") != "1" || st.Reason != metav1.StatusReasonTooManyRequests {
				t.Fatalf("429 without Retry-After or reason: %v %+v", h, st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never refused while a request was in flight")
		}
		select {
		case <-slowDone:
			t.Fatal("slow request finished before a 429 was seen")
		default:
		}
	}
	<-slowDone
	// Health checks are exempt from authentication but not needed here; the
	// limit frees up once the slow request ends.
	if code, _, _ := getStatus(t, c, env.URL+"/api/v1/namespaces/default"); code != 200 {
		t.Fatalf("after the slow request: %d", code)
	}
}

func TestRequestTimeoutAnswers504(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{Tweak: func(c *apiserver.Config) {
		c.RequestTimeout = 200 * time.Millisecond
	}})
	code, _, st := getStatus(t, env.HTTPClient(), env.URL+slowPath)
	if code != http.StatusGatewayTimeout || st.Reason != metav1.StatusReasonTimeout {
		t.Fatalf("want 504 Timeout, got %d %+v", code, st)
	}
}
