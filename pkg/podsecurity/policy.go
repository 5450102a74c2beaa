package podsecurity

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Level is a Pod Security Standards level.
type Level string

const (
	Privileged Level = "privileged"
	Baseline   Level = "baseline"
	Restricted Level = "restricted"
)

// The namespace labels.
const (
	labelPrefix         = "pod-security.kubernetes.io/"
	EnforceLevelLabel   = labelPrefix + "enforce"
	EnforceVersionLabel = labelPrefix + "enforce-version"
	AuditLevelLabel     = labelPrefix + "audit"
	AuditVersionLabel   = labelPrefix + "audit-version"
	WarnLevelLabel      = labelPrefix + "warn"
	WarnVersionLabel    = labelPrefix + "warn-version"

	// Audit annotation keys (upstream's).
	EnforcedPolicyAnnotationKey  = labelPrefix + "enforce-policy"
	AuditViolationsAnnotationKey = labelPrefix + "audit-violations"
)

// LatestMinor is the newest version any check changed at (1.34): later
// versions and "latest" evaluate as it.
const LatestMinor = 34

// Version is "latest" or v1.<Minor>.
type Version struct {
	Latest bool
	Minor  int
}

// LatestVersion is "latest".
func LatestVersion() Version { return Version{Latest: true} }

func (v Version) String() string {
	if v.Latest {
		return "latest"
	}
	return fmt.Sprintf("v1.%d", v.Minor)
}

// minor is the version checks are evaluated at.
func (v Version) minor() int {
	if v.Latest || v.Minor > LatestMinor {
		return LatestMinor
	}
	return v.Minor
}

// LevelVersion is a level at a version ("restricted:latest").
type LevelVersion struct {
	Level   Level
	Version Version
}

func (lv LevelVersion) String() string { return string(lv.Level) + ":" + lv.Version.String() }

// Policy is a namespace's policy for each mode.
type Policy struct {
	Enforce, Audit, Warn LevelVersion
}

// FullyPrivileged: nothing to check.
func (p Policy) FullyPrivileged() bool {
	return p.Enforce.Level == Privileged && p.Audit.Level == Privileged && p.Warn.Level == Privileged
}

// DefaultPolicy is upstream's default: privileged:latest for every mode.
func DefaultPolicy() Policy {
	lv := LevelVersion{Level: Privileged, Version: LatestVersion()}
	return Policy{Enforce: lv, Audit: lv, Warn: lv}
}

var validLevels = []string{string(Privileged), string(Baseline), string(Restricted)}

// ParseLevel parses a level; an invalid one is restricted, with an error.
func ParseLevel(s string) (Level, error) {
	switch Level(s) {
	case Privileged, Baseline, Restricted:
		return Level(s), nil
	}
	return Restricted, fmt.Errorf("must be one of %s", strings.Join(validLevels, ", "))
}

var versionRE = regexp.MustCompile(`^v1\.(0|[1-9][0-9]*)$`)

// ParseVersion parses "latest" or "v1.N"; an invalid one is latest, with
// an error.
func ParseVersion(s string) (Version, error) {
	if s == "latest" {
		return LatestVersion(), nil
	}
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return LatestVersion(), fmt.Errorf(`must be "latest" or "v1.x"`)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return LatestVersion(), fmt.Errorf(`must be "latest" or "v1.x"`)
	}
	return Version{Minor: n}, nil
}

var labelsPath = field.NewPath("metadata", "labels")

// PolicyFromLabels is upstream's PolicyToEvaluate: the namespace labels
// over the defaults; warn follows a valid enforce level stricter than it
// when no warn label is set. Invalid values become restricted/latest and
// are reported at metadata.labels[<key>].
func PolicyFromLabels(labels map[string]string, defaults Policy) (Policy, field.ErrorList) {
	p := defaults
	if len(labels) == 0 {
		return p, nil
	}
	var errs field.ErrorList
	add := func(err error, key, value string) {
		if err != nil {
			errs = append(errs, field.Invalid(labelsPath.Key(key), value, err.Error()))
		}
	}
	var err error
	hasEnforce, hasWarn, hasWarnVersion := false, false, false
	if v, ok := labels[EnforceLevelLabel]; ok {
		p.Enforce.Level, err = ParseLevel(v)
		hasEnforce = err == nil
		add(err, EnforceLevelLabel, v)
	}
	if v, ok := labels[EnforceVersionLabel]; ok {
		p.Enforce.Version, err = ParseVersion(v)
		add(err, EnforceVersionLabel, v)
	}
	if v, ok := labels[AuditLevelLabel]; ok {
		p.Audit.Level, err = ParseLevel(v)
		add(err, AuditLevelLabel, v)
	}
	if v, ok := labels[AuditVersionLabel]; ok {
		p.Audit.Version, err = ParseVersion(v)
		add(err, AuditVersionLabel, v)
	}
	if v, ok := labels[WarnLevelLabel]; ok {
		hasWarn = true
		p.Warn.Level, err = ParseLevel(v)
		add(err, WarnLevelLabel, v)
	}
	if v, ok := labels[WarnVersionLabel]; ok {
		hasWarnVersion = true
		p.Warn.Version, err = ParseVersion(v)
		add(err, WarnVersionLabel, v)
	}
	if !hasWarn && hasEnforce && CompareLevels(p.Enforce.Level, p.Warn.Level) > 0 {
		p.Warn.Level = p.Enforce.Level
		if !hasWarnVersion {
			p.Warn.Version = p.Enforce.Version
		}
	}
	return p, errs
}

func levelRank(l Level) int {
	switch l {
	case Privileged:
		return 0
	case Baseline:
		return 1
	}
	return 2
}

// CompareLevels is <0, 0, >0 as a is less strict, as strict, stricter
// than b.
func CompareLevels(a, b Level) int { return levelRank(a) - levelRank(b) }
