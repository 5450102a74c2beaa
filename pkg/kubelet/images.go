package kubelet

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Image errors: the container's waiting reason is the error's text.
var (
	errImagePull        = errors.New("ErrImagePull")
	errImagePullBackOff = errors.New("ImagePullBackOff")
	errImageNeverPull   = errors.New("ErrImageNeverPull")
	errInvalidImageName = errors.New("InvalidImageName")
	errImageInspect     = errors.New("ImageInspectError")
)

// Image pull back-off per pod and image, as upstream's kubelet: 10 s
// doubling to 5 min; an entry idle for twice the maximum starts over.
const (
	imageBackOffInitial = 10 * time.Second
	imageBackOffMax     = 300 * time.Second
)

// Docker reference grammar (github.com/distribution/reference).
var (
	refDomainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	refDomain          = refDomainComponent + `(?:\.` + refDomainComponent + `)*(?::[0-9]+)?`
	refPathComponent   = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
	refName            = `(?:` + refDomain + `/)?` + refPathComponent + `(?:/` + refPathComponent + `)*`
	refTag             = `[\w][\w.-]{0,127}`
	refDigest          = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	referenceRegexp    = regexp.MustCompile(`^(` + refName + `)(?::(` + refTag + `))?(?:@(` + refDigest + `))?$`)
	anchoredNameRegexp = regexp.MustCompile(`^(?:(` + refDomain + `)/)?(` + refPathComponent + `(?:/` + refPathComponent + `)*)$`)
)

// parseImageName splits image into its normalized repository
// (docker.io/library/busybox for busybox), tag and digest, as upstream's
// parsers.ParseImageName: the tag defaults to "latest" when there is
// neither tag nor digest.
func parseImageName(image string) (repo, tag, digest string, err error) {
	m := referenceRegexp.FindStringSubmatch(image)
	if m == nil {
		reason := "invalid reference format"
		if image != "" && referenceRegexp.MatchString(strings.ToLower(image)) {
			reason = "invalid reference format: repository name (" + image + ") must be lowercase"
		}
		return "", "", "", fmt.Errorf("couldn't parse image name %q: %s", image, reason)
	}
	name, tag, digest := m[1], m[2], m[3]
	if len(name) > 255 {
		return "", "", "", fmt.Errorf("couldn't parse image name %q: repository name must not be more than 255 characters", image)
	}
	domain, path := "", name
	if i := strings.IndexByte(name, '/'); i >= 0 {
		first := name[:i]
		if strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first {
			domain, path = first, name[i+1:]
		}
	}
	if !anchoredNameRegexp.MatchString(name) || strings.ToLower(path) != path {
		return "", "", "", fmt.Errorf("couldn't parse image name %q: invalid reference format", image)
	}
	if domain == "" || domain == "index.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(path, "/") {
		path = "library/" + path
	}
	if tag == "" && digest == "" {
		tag = "latest"
	}
	return domain + "/" + path, tag, digest, nil
}

// applyDefaultImageTag adds ":latest" to an image without tag or digest,
// keeping the name as written (no docker.io/ prefix), as upstream's.
func applyDefaultImageTag(image string) (string, error) {
	_, tag, digest, err := parseImageName(image)
	if err != nil {
		return "", err
	}
	if digest == "" && tag != "" && !strings.HasSuffix(image, ":"+tag) {
		image += ":" + tag
	}
	return image, nil
}

// pullPolicy is c's imagePullPolicy, defaulted as the API server does
// when empty: Always for ":latest" or no tag, IfNotPresent otherwise.
func pullPolicy(c *corev1.Container) corev1.PullPolicy {
	if c.ImagePullPolicy != "" {
		return c.ImagePullPolicy
	}
	if _, tag, _, _ := parseImageName(c.Image); tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// dockerConfigEntry is one registry's credentials in a docker config.
type dockerConfigEntry struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Email    string `json:"email,omitempty"`
	Auth     string `json:"auth,omitempty"`
}

func (e *dockerConfigEntry) credentials() (user, password string, err error) {
	if e.Auth == "" {
		return e.Username, e.Password, nil
	}
	var decoded []byte
	if strings.HasSuffix(strings.TrimSpace(e.Auth), "=") {
		decoded, err = base64.StdEncoding.DecodeString(e.Auth)
	} else {
		decoded, err = base64.RawStdEncoding.DecodeString(e.Auth)
	}
	if err != nil {
		return "", "", err
	}
	user, password, ok := strings.Cut(string(decoded), ":")
	if !ok {
		return "", "", errors.New("unable to parse auth field, must be formatted as base64(username:password)")
	}
	return user, password, nil
}

// keyring holds registry credentials by location key (host[/path]),
// matched as upstream's BasicDockerKeyring.
type keyring struct {
	index []string // keys, reverse sorted (longest paths first)
	creds map[string][]*runtimeapi.AuthConfig
}

const defaultRegistryHost = "index.docker.io"

// makeKeyring reads the docker configs of pull secrets of type
// kubernetes.io/dockerconfigjson (.dockerconfigjson) and
// kubernetes.io/dockercfg (.dockercfg); other secrets are ignored.
func makeKeyring(secrets []*corev1.Secret) (*keyring, error) {
	kr := &keyring{creds: map[string][]*runtimeapi.AuthConfig{}}
	for _, s := range secrets {
		var cfg map[string]dockerConfigEntry
		switch {
		case s.Type == corev1.SecretTypeDockerConfigJson && len(s.Data[corev1.DockerConfigJsonKey]) > 0:
			var doc struct {
				Auths map[string]dockerConfigEntry `json:"auths"`
			}
			if err := json.Unmarshal(s.Data[corev1.DockerConfigJsonKey], &doc); err != nil {
				return nil, err
			}
			cfg = doc.Auths
		case s.Type == corev1.SecretTypeDockercfg && len(s.Data[corev1.DockerConfigKey]) > 0:
			if err := json.Unmarshal(s.Data[corev1.DockerConfigKey], &cfg); err != nil {
				return nil, err
			}
		default:
			continue
		}
		locs := make([]string, 0, len(cfg))
		for loc := range cfg {
			locs = append(locs, loc)
		}
		sort.Strings(locs)
		for _, loc := range locs {
			e := cfg[loc]
			user, password, err := e.credentials()
			if err != nil {
				return nil, err
			}
			value := loc
			if !strings.HasPrefix(value, "https://") && !strings.HasPrefix(value, "http://") {
				value = "https://" + value
			}
			u, err := url.Parse(value)
			if err != nil {
				continue // upstream logs and ignores the entry
			}
			path := u.Path
			if strings.HasPrefix(path, "/v2/") || strings.HasPrefix(path, "/v1/") {
				path = path[3:]
			}
			key := u.Host
			if path != "" && path != "/" {
				key += path
			}
			if _, ok := kr.creds[key]; !ok {
				kr.index = append(kr.index, key)
			}
			kr.creds[key] = append(kr.creds[key], &runtimeapi.AuthConfig{Username: user, Password: password})
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(kr.index)))
	return kr, nil
}

// lookup is the credentials to try for repository repo (normalized, e.g.
// docker.io/library/busybox), in order.
func (kr *keyring) lookup(repo string) []*runtimeapi.AuthConfig {
	var out []*runtimeapi.AuthConfig
	for _, k := range kr.index {
		if urlsMatch(k, repo) {
			out = append(out, kr.creds[k]...)
		}
	}
	if len(out) == 0 && isDefaultRegistryMatch(repo) {
		out = kr.creds[defaultRegistryHost]
	}
	return out
}

func isDefaultRegistryMatch(image string) bool {
	first, _, ok := strings.Cut(image, "/")
	switch {
	case first == "":
		return false
	case !ok, first == "docker.io", first == "index.docker.io":
		return true
	}
	return !strings.ContainsAny(first, ".:")
}

// urlsMatch: target (host[:port]/path) matches glob when the ports are
// equal, the hosts have as many dot-separated parts each matching the
// glob's (filepath.Match patterns, e.g. *.example.com), and the glob's
// path is a prefix of the target's.
func urlsMatch(glob, target string) bool {
	g, err1 := url.Parse("https://" + glob)
	t, err2 := url.Parse("https://" + target)
	if err1 != nil || err2 != nil {
		return false
	}
	split := func(u *url.URL) ([]string, string) {
		host, port, err := net.SplitHostPort(u.Host)
		if err != nil {
			host, port = u.Host, ""
		}
		return strings.Split(host, "."), port
	}
	gp, gport := split(g)
	tp, tport := split(t)
	if gport != tport || len(gp) != len(tp) || !strings.HasPrefix(t.Path, g.Path) {
		return false
	}
	for i := range gp {
		if ok, err := filepath.Match(gp[i], tp[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// imageBackOff tracks failed pulls per key (pod UID and image), as
// upstream's flowcontrol.Backoff.
type imageBackOff struct {
	mu      sync.Mutex
	entries map[string]*backOffEntry
}

type backOffEntry struct {
	delay      time.Duration
	lastUpdate time.Time
	lastErr    string // "ErrImagePull: <message>" of the failed pull
}

func (b *imageBackOff) expired(e *backOffEntry, now time.Time) bool {
	return now.Sub(e.lastUpdate) > 2*imageBackOffMax
}

// inBackOff reports whether a pull of key must wait at now, and the
// error of the pull that failed.
func (b *imageBackOff) inBackOff(key string, now time.Time) (bool, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[key]
	if e == nil || b.expired(e, now) {
		return false, ""
	}
	return now.Sub(e.lastUpdate) < e.delay, e.lastErr
}

// failed records a failed pull of key at now.
func (b *imageBackOff) failed(key string, now time.Time, errMsg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.entries == nil {
		b.entries = map[string]*backOffEntry{}
	}
	e := b.entries[key]
	if e == nil || b.expired(e, now) {
		e = &backOffEntry{delay: imageBackOffInitial}
		b.entries[key] = e
	} else {
		e.delay = min(2*e.delay, imageBackOffMax)
	}
	e.lastUpdate, e.lastErr = now, errMsg
}

// forget drops the entries of a pod (its UID prefix).
func (b *imageBackOff) forget(prefix string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.entries {
		if strings.HasPrefix(k, prefix) {
			delete(b.entries, k)
		}
	}
}

// pullSecrets reads pod's imagePullSecrets; those it cannot read are
// named in a FailedToRetrieveImagePullSecret event, as upstream's.
func (k *Kubelet) pullSecrets(ctx context.Context, pod *corev1.Pod) []*corev1.Secret {
	var out []*corev1.Secret
	var failed []string
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue
		}
		s, err := k.podCfg.Lookups.Secret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			k.log.Info("unable to retrieve pull secret, the image pull may not succeed", "pod", klogPod(pod), "secret", ref.Name, "err", err)
			failed = append(failed, ref.Name)
			continue
		}
		out = append(out, s)
	}
	if len(failed) > 0 {
		k.event(pod, "", corev1.EventTypeWarning, "FailedToRetrieveImagePullSecret",
			fmt.Sprintf("Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", strings.Join(failed, ", ")))
	}
	return out
}

// ensureImage makes c's image present as its pull policy says, as
// upstream's EnsureImageExists; it returns the image reference, or a
// message and an image error (the container's waiting reason).
func (k *Kubelet) ensureImage(ctx context.Context, pod *corev1.Pod, c *corev1.Container, sandboxCfg *runtimeapi.PodSandboxConfig) (string, string, error) {
	image, err := applyDefaultImageTag(c.Image)
	if err != nil {
		msg := fmt.Sprintf("Failed to apply default image tag %q: %v", c.Image, err)
		k.event(pod, c.Name, corev1.EventTypeWarning, "InspectFailed", msg)
		return "", msg, errInvalidImageName
	}
	spec := &runtimeapi.ImageSpec{Image: image, Annotations: pod.Annotations, UserSpecifiedImage: c.Image}
	policy := pullPolicy(c)
	if policy != corev1.PullAlways {
		st, err := k.cfg.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
		if err != nil {
			msg := fmt.Sprintf("Failed to inspect image %q: %v", "", err)
			k.event(pod, c.Name, corev1.EventTypeWarning, "InspectFailed", msg)
			return "", msg, errImageInspect
		}
		if st.GetImage() != nil {
			k.event(pod, c.Name, corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", c.Image))
			return st.Image.Id, "", nil
		}
		if policy == corev1.PullNever {
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
			k.event(pod, c.Name, corev1.EventTypeWarning, "ErrImageNeverPull", msg)
			return "", msg, errImageNeverPull
		}
	}
	key := string(pod.UID) + "_" + c.Image
	if in, prev := k.imageBackOff.inBackOff(key, k.clock.Now()); in {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		k.event(pod, c.Name, corev1.EventTypeNormal, "BackOff", msg)
		if prev != "" {
			msg += ": " + prev
		}
		return "", msg, errImagePullBackOff
	}
	var auths []*runtimeapi.AuthConfig
	if len(pod.Spec.ImagePullSecrets) > 0 {
		repo, _, _, err := parseImageName(image)
		if err != nil {
			return "", err.Error(), err
		}
		kr, err := makeKeyring(k.pullSecrets(ctx, pod))
		if err != nil {
			return "", err.Error(), err
		}
		auths = kr.lookup(repo)
	}
	k.event(pod, c.Name, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", c.Image))
	began := k.clock.Now()
	ref, err := k.pullWithCredentials(ctx, spec, auths, sandboxCfg)
	if err != nil {
		k.event(pod, c.Name, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %v", c.Image, err))
		msg := err.Error()
		k.imageBackOff.failed(key, k.clock.Now(), errImagePull.Error()+": "+msg)
		return "", msg, errImagePull
	}
	took := k.clock.Since(began).Truncate(time.Millisecond)
	var size uint64
	if st, err := k.cfg.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}}); err == nil && st.GetImage() != nil {
		size = st.Image.Size
	}
	k.event(pod, c.Name, corev1.EventTypeNormal, "Pulled",
		fmt.Sprintf("Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.", c.Image, took, took, size))
	return ref, "", nil
}

// pullWithCredentials pulls spec with each credential in turn until one
// works (none: anonymously); the errors of all attempts otherwise.
func (k *Kubelet) pullWithCredentials(ctx context.Context, spec *runtimeapi.ImageSpec, auths []*runtimeapi.AuthConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error) {
	if len(auths) == 0 {
		resp, err := k.cfg.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec, SandboxConfig: sandboxCfg})
		if err != nil {
			return "", err
		}
		return resp.ImageRef, nil
	}
	var errs []string
	for _, auth := range auths {
		resp, err := k.cfg.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec, Auth: auth, SandboxConfig: sandboxCfg})
		if err == nil {
			return resp.ImageRef, nil
		}
		errs = append(errs, err.Error())
	}
	if len(errs) == 1 {
		return "", errors.New(errs[0])
	}
	return "", errors.New("[" + strings.Join(errs, ", ") + "]")
}
