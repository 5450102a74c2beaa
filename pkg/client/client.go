package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	kjson "sigs.k8s.io/json"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/scheme"
)

// Client is the low-level REST client: it sends requests to the API
// server with client-side throttling, retries what the server asks to be
// retried (429 and 5xx with Retry-After), and turns error responses into
// *apierrors.StatusError values.
type Client struct {
	cfg     Config
	base    *url.URL
	http    *http.Client
	limiter *rate.Limiter
	clock   clock.Clock
	logger  *slog.Logger
	// protobuf decodes protobuf responses (ContentType protobuf).
	protobuf *protobuf.Serializer
	// scheme names the kinds of protobuf request bodies.
	scheme *runtime.Scheme
}

// ContentTypeProtobuf asks the server for protobuf (faster to decode than
// JSON) and sends built-in objects (creates, updates) in it, as client-go.
const ContentTypeProtobuf = "application/vnd.kubernetes.protobuf"

// New returns a Client for cfg.
func New(cfg *Config) (*Client, error) {
	if cfg == nil || cfg.Host == "" {
		return nil, errors.New("client: no host")
	}
	c := &Client{cfg: *cfg}
	if c.cfg.QPS == 0 {
		c.cfg.QPS = DefaultQPS
	}
	if c.cfg.Burst == 0 {
		c.cfg.Burst = DefaultBurst
	}
	if c.cfg.Clock == nil {
		c.cfg.Clock = clock.Real{}
	}
	if c.cfg.Logger == nil {
		c.cfg.Logger = slog.Default()
	}
	if c.cfg.UserAgent == "" {
		c.cfg.UserAgent = "skiff-client/v0"
	}
	c.clock, c.logger = c.cfg.Clock, c.cfg.Logger
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("client: host %q: %w", cfg.Host, err)
	}
	if u.Scheme == "" {
		u, err = url.Parse("https://" + cfg.Host)
		if err != nil {
			return nil, err
		}
	}
	c.base = u
	rt, err := c.cfg.transport()
	if err != nil {
		return nil, err
	}
	c.http = &http.Client{Transport: rt}
	if c.cfg.QPS > 0 {
		c.limiter = rate.NewLimiter(rate.Limit(c.cfg.QPS), c.cfg.Burst)
	}
	switch c.cfg.ContentType {
	case "", "application/json":
	case ContentTypeProtobuf:
		sch := scheme.New()
		c.protobuf = protobuf.NewSerializer(sch, sch)
		c.scheme = sch
	default:
		return nil, fmt.Errorf("client: unsupported content type %q", c.cfg.ContentType)
	}
	return c, nil
}

// Config returns the client's configuration.
func (c *Client) Config() Config { return c.cfg }

// Request is one API call.
type Request struct {
	Method      string
	Path        string // absolute, e.g. /api/v1/namespaces/default/pods
	Query       url.Values
	Body        []byte
	ContentType string
	// Watch marks a long-running streaming request: no timeout, no retry
	// once streaming.
	Watch bool
	// JSONOnly asks for JSON whatever the client prefers (unstructured).
	JSONOnly bool
	// Accept, when set, is the Accept header (discovery documents,
	// PartialObjectMetadata), whatever the client prefers.
	Accept string
}

// maxRetries is how often a request the server asked to retry is retried
// (client-go's default).
const maxRetries = 10

// longThrottleLatency is the wait that is worth a log line.
const longThrottleLatency = 50 * time.Millisecond

// throttle waits for the token bucket.
func (c *Client) throttle(ctx context.Context, r *Request) error {
	if c.limiter == nil {
		return nil
	}
	start := c.clock.Now()
	res := c.limiter.ReserveN(start, 1)
	if !res.OK() {
		return errors.New("client: rate limiter burst is zero")
	}
	delay := res.DelayFrom(start)
	if delay <= 0 {
		return nil
	}
	select {
	case <-c.clock.After(delay):
	case <-ctx.Done():
		res.CancelAt(c.clock.Now())
		return ctx.Err()
	}
	if delay > longThrottleLatency {
		c.logger.Info(fmt.Sprintf("Waited for %v due to client-side throttling, not priority and fairness", delay.Round(time.Millisecond)),
			"verb", r.Method, "path", r.Path)
	}
	return nil
}

// Response is a successful answer.
type Response struct {
	Body        []byte
	ContentType string
}

// Do sends r and returns the response of a successful (2xx) answer.
func (c *Client) Do(ctx context.Context, r *Request) (*Response, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Body: body, ContentType: resp.Header.Get("Content-Type")}, nil
}

// Stream sends r and returns the body of a successful answer to read as a
// stream (a watch), with its content type. The caller closes it.
func (c *Client) Stream(ctx context.Context, r *Request) (io.ReadCloser, string, error) {
	r.Watch = true
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, "", err
	}
	return resp.Body, resp.Header.Get("Content-Type"), nil
}

// accept is the Accept header of a request: protobuf first when configured
// (and the request is not for an unstructured object), JSON otherwise.
func (c *Client) accept(r *Request) string {
	if r.Accept != "" {
		return r.Accept
	}
	if c.protobuf != nil && !r.JSONOnly {
		if r.Watch {
			return ContentTypeProtobuf + ";stream=watch, application/json"
		}
		return ContentTypeProtobuf + ", application/json"
	}
	return "application/json"
}

func (c *Client) send(ctx context.Context, r *Request) (*http.Response, error) {
	u := *c.base
	u.Path = strings.TrimSuffix(c.base.Path, "/") + r.Path
	u.RawQuery = r.Query.Encode()
	for attempt := 0; ; attempt++ {
		if err := c.throttle(ctx, r); err != nil {
			return nil, err
		}
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if c.cfg.Timeout > 0 && !r.Watch {
			rctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		}
		var body io.Reader
		if r.Body != nil {
			body = bytes.NewReader(r.Body)
		}
		req, err := http.NewRequestWithContext(rctx, r.Method, u.String(), body)
		if err != nil {
			cancel()
			return nil, err
		}
		req.Header.Set("Accept", c.accept(r))
		req.Header.Set("User-Agent", c.cfg.UserAgent)
		if r.Body != nil {
			ct := r.ContentType
			if ct == "" {
				ct = "application/json"
			}
			req.Header.Set("Content-Type", ct)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			cancel()
			// A GET that failed to connect is safe to retry.
			if r.Method == http.MethodGet && attempt < maxRetries && ctx.Err() == nil && isConnectionError(err) {
				if err := c.sleep(ctx, time.Second); err != nil {
					return nil, err
				}
				continue
			}
			return nil, err
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
			return resp, nil
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if wait, ok := retryAfter(resp); ok && attempt < maxRetries {
			c.logger.Debug("server asked to retry", "status", resp.StatusCode, "after", wait, "verb", r.Method, "path", r.Path)
			if err := c.sleep(ctx, wait); err != nil {
				return nil, err
			}
			continue
		}
		return nil, c.statusError(resp.StatusCode, r.Method, resp.Header.Get("Content-Type"), data)
	}
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-c.clock.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// retryAfter reports whether a response asks to be retried (429 or 5xx
// with a Retry-After header, as client-go decides) and after how long.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		return 0, false
	}
	h := resp.Header.Get("Retry-After")
	if h == "" {
		return 0, false
	}
	secs, err := strconv.Atoi(h)
	if err != nil || secs < 0 {
		return 0, false
	}
	return time.Duration(secs) * time.Second, true
}

func isConnectionError(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "connection reset")
}

// statusError turns an error response into the API error it carries.
func (c *Client) statusError(code int, verb, contentType string, body []byte) error {
	var st metav1.Status
	if c.protobuf != nil && strings.HasPrefix(contentType, ContentTypeProtobuf) {
		if _, _, err := c.protobuf.Decode(body, nil, &st); err == nil {
			if st.Code == 0 {
				st.Code = int32(code)
			}
			return &apierrors.StatusError{ErrStatus: st}
		}
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(body, &st); err == nil && st.Kind == "Status" {
		if st.Code == 0 {
			st.Code = int32(code)
		}
		return &apierrors.StatusError{ErrStatus: st}
	}
	msg := strings.TrimSpace(string(body))
	return apierrors.NewGenericServerResponse(code, verb, schema.GroupResource{}, "", msg, 0, true)
}
