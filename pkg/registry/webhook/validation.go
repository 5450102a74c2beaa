package webhook

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const urlForm = "; desired format: https://host[/path]"

// ValidateURL checks a webhook URL: https, a host, no user information,
// fragment or query.
func ValidateURL(fldPath *field.Path, raw string) field.ErrorList {
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Required(fldPath, "url must be a valid URL: "+err.Error()+urlForm)}
	}
	var allErrs field.ErrorList
	if u.Scheme != "https" {
		allErrs = append(allErrs, field.Invalid(fldPath, u.Scheme, "'https' is the only allowed URL scheme"+urlForm))
	}
	if u.Host == "" {
		allErrs = append(allErrs, field.Invalid(fldPath, u.Host, "host must be specified"+urlForm))
	}
	if u.User != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		allErrs = append(allErrs, field.Invalid(fldPath, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		allErrs = append(allErrs, field.Invalid(fldPath, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return allErrs
}

// ValidateService checks a webhook's service reference: name, namespace,
// a valid port and a path of DNS-subdomain segments.
func ValidateService(fldPath *field.Path, namespace, name string, urlPath *string, port int32) field.ErrorList {
	var allErrs field.ErrorList
	if name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), "service name is required"))
	}
	if namespace == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("namespace"), "service namespace is required"))
	}
	if errs := validation.IsValidPortNum(int(port)); errs != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), port, "port is not valid: "+strings.Join(errs, ", ")))
	}
	if urlPath == nil || *urlPath == "/" || *urlPath == "" {
		return allErrs
	}
	p := *urlPath
	pp := fldPath.Child("path")
	if p == "//" {
		return append(allErrs, field.Invalid(pp, p, "segment[0] may not be empty"))
	}
	if !strings.HasPrefix(p, "/") {
		allErrs = append(allErrs, field.Invalid(pp, p, "must start with a '/'"))
	}
	check := strings.TrimSuffix(p[1:], "/")
	for i, step := range strings.Split(check, "/") {
		if step == "" {
			allErrs = append(allErrs, field.Invalid(pp, p, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(step) {
			allErrs = append(allErrs, field.Invalid(pp, p, fmt.Sprintf("segment[%d]: %v", i, msg)))
		}
	}
	return allErrs
}
