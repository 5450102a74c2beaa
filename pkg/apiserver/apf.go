package apiserver

import (
	"net/http"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/skiff-sh/skiff/pkg/registry/flowcontrol"
)

// anonymousUser is who a request without credentials is (with anonymous
// authentication on, or on a public path).
var anonymousUser = &User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}

// notePriority classifies the request by the flowcontrol configuration and
// reports the matched FlowSchema and priority level in upstream's response
// headers. skiff does not queue or reject by priority (its in-flight
// limits apply instead).
func (s *Server) notePriority(w http.ResponseWriter, info *RequestInfo, u *User) {
	c := s.apf.Load()
	if c == nil || u == nil {
		return
	}
	r := &flowcontrol.Request{User: u.Name, Groups: u.Groups, IsResourceRequest: info.IsResourceRequest, Verb: info.Verb,
		APIGroup: info.APIGroup, Resource: info.Resource, Subresource: info.Subresource, Namespace: info.Namespace, Path: info.Path}
	fs, level, ok := c.Classify(r)
	if !ok {
		return
	}
	h := w.Header()
	h.Set(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID, string(fs.UID))
	h.Set(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID, string(level))
}
