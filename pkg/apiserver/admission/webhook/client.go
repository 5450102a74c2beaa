package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
)

// maxResponseBytes bounds a webhook's answer (upstream's 3 MiB request
// limit is the order of magnitude of any object).
const maxResponseBytes = 8 << 20

// maxClients bounds the cached clients (one per CA bundle and target).
const maxClients = 256

// clients caches one HTTP client per (caBundle, target): connections to a
// webhook are kept alive between requests.
type clients struct {
	getter admission.Getter
	mu     sync.Mutex
	byKey  map[string]*http.Client
}

// target is where one webhook is called.
type target struct {
	client *http.Client
	url    string // without the timeout parameter
}

// forConfig returns the client and URL of a webhook's clientConfig: a
// service reference is called at https://<name>.<namespace>.svc:<port><path>
// (that name is the TLS server name verified against caBundle) and dialed
// at a ready endpoint of the service; a URL is called as given. An empty
// caBundle means the system roots.
func (c *clients) forConfig(cc admissionregistrationv1.WebhookClientConfig) (target, error) {
	var u, host string
	var svc *admissionregistrationv1.ServiceReference
	switch {
	case cc.Service != nil:
		svc = cc.Service
		port := int32(443)
		if svc.Port != nil {
			port = *svc.Port
		}
		host = net.JoinHostPort(svc.Name+"."+svc.Namespace+".svc", strconv.Itoa(int(port)))
		path := ""
		if svc.Path != nil {
			path = *svc.Path
		}
		u = "https://" + host + path
	case cc.URL != nil:
		u = *cc.URL
		pu, err := url.Parse(u)
		if err != nil {
			return target{}, err
		}
		host = pu.Host
	default:
		return target{}, fmt.Errorf("invalid webhook client config: neither url nor service is set")
	}
	key := string(cc.CABundle) + "\x00" + host
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl := c.byKey[key]; cl != nil {
		return target{client: cl, url: u}, nil
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(cc.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cc.CABundle) {
			return target{}, fmt.Errorf("unable to load root certificates: unable to parse bytes as PEM block")
		}
		tlsConfig.RootCAs = pool
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		TLSClientConfig:     tlsConfig,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
		DialContext:         dialer.DialContext,
	}
	if svc != nil {
		ns, name, port := svc.Namespace, svc.Name, int32(443)
		if svc.Port != nil {
			port = *svc.Port
		}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == host {
				ep, err := ResolveService(ctx, c.getter, ns, name, port)
				if err != nil {
					return nil, err
				}
				addr = ep
			}
			return dialer.DialContext(ctx, network, addr)
		}
	}
	cl := &http.Client{Transport: tr}
	if c.byKey == nil || len(c.byKey) >= maxClients {
		// configurations come and go: forget the old clients (their idle
		// connections close) rather than keep one per CA bundle ever seen
		for _, old := range c.byKey {
			old.CloseIdleConnections()
		}
		c.byKey = map[string]*http.Client{}
	}
	c.byKey[key] = cl
	return target{client: cl, url: u}, nil
}

// post sends body to the target and decodes the answer into out, within
// ctx (which carries the webhook's timeout). Errors are what upstream's
// REST client reports: the transport's error, the server's Status for a
// non-2xx answer, a decode error for a 2xx one.
//
// An answer read after ctx ended counts as none: the call failed with the
// transport's error for an ended context (`Post "<url>": context deadline
// exceeded`). The HTTP/1 transport may hand over a response that raced the
// cancellation: closing a TLS connection first sends close_notify, on
// which the webhook server ends the request and may still answer (e.g. an
// empty 200) before the socket is closed; the transport then returns that
// response rather than the context's error.
func (t target) post(ctx context.Context, timeout time.Duration, body []byte, out any) error {
	u := t.url
	if timeout > 0 {
		sep := "?"
		if pu, err := url.Parse(u); err == nil && pu.RawQuery != "" {
			sep = "&"
		}
		u += sep + "timeout=" + timeout.String()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := t.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if cerr := ctx.Err(); cerr != nil {
		return &url.Error{Op: "Post", URL: req.URL.Redacted(), Err: cerr}
	}
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var st metav1.Status
		if json.Unmarshal(data, &st) == nil && st.Kind == "Status" {
			return &apierrors.StatusError{ErrStatus: st}
		}
		return apierrors.NewGenericServerResponse(resp.StatusCode, "POST", schema.GroupResource{}, "", string(data), 0, true)
	}
	if len(data) == 0 {
		// upstream's REST client refuses an empty answer before decoding
		// (the content type defaults to the client's, JSON)
		ct := resp.Header.Get("Content-Type")
		if ct == "" {
			ct = "application/json"
		}
		return fmt.Errorf("0-length response with status code: %d and content type: %s", resp.StatusCode, ct)
	}
	return json.Unmarshal(data, out)
}
