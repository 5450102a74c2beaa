package batch

import (
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// expectErrs fails unless errs are exactly want ("<field>: <type>").

// validJob is a Job as the strategy hands it to validation: defaulted, with
// a uid and the generated selector and labels.
func validJob() *batchv1.Job {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "default", UID: "1234-abcd"}, Spec: batchv1.JobSpec{Template: jobPodTemplate()}}
	DefaultJob(job)
	generated := map[string]string{
		"controller-uid": "1234-abcd", "job-name": "pi",
		batchv1.ControllerUidLabel: "1234-abcd", batchv1.JobNameLabel: "pi",
	}
	for k, v := range generated {
		job.Spec.Template.Labels[k] = v
	}
	job.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "1234-abcd"}}
	return job
}

func TestValidateJob(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(j *batchv1.Job)
		want   []string
	}{
		{name: "valid"},
		{name: "restartPolicy Always", mutate: func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways },
			want: []string{"spec.template.spec.restartPolicy: Required value"}},
		{name: "restartPolicy unknown", mutate: func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = "Sometimes" },
			want: []string{"spec.template.spec.restartPolicy: Unsupported value", "spec.template.spec.restartPolicy: Unsupported value"}},
		{name: "manual selector missing", mutate: func(j *batchv1.Job) {
			j.Spec.ManualSelector = ptrOf(true)
			j.Spec.Selector = nil
		}, want: []string{"spec.selector: Required value", "spec.template.metadata.labels: Invalid value"}},
		{name: "manual selector mismatch", mutate: func(j *batchv1.Job) {
			j.Spec.ManualSelector = ptrOf(true)
			j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
		}, want: []string{"spec.template.metadata.labels: Invalid value"}},
		{name: "generated labels missing", mutate: func(j *batchv1.Job) { delete(j.Spec.Template.Labels, batchv1.JobNameLabel) },
			want: []string{"spec.template.metadata.labels[batch.kubernetes.io/job-name]: Required value"}},
		{name: "no uid", mutate: func(j *batchv1.Job) { j.UID = "" }, want: []string{
			"metadata.uid: Required value", "spec.selector: Invalid value",
			"spec.template.metadata.labels[controller-uid]: Invalid value", "spec.template.metadata.labels[batch.kubernetes.io/controller-uid]: Invalid value"}},
		{name: "negative backoffLimit", mutate: func(j *batchv1.Job) { j.Spec.BackoffLimit = ptrOf(int32(-1)) }, want: []string{"spec.backoffLimit: Invalid value"}},
		{name: "indexed without completions", mutate: func(j *batchv1.Job) {
			j.Spec.CompletionMode = ptrOf(batchv1.IndexedCompletion)
			j.Spec.Completions = nil
		}, want: []string{"spec.completions: Required value"}},
		{name: "per-index backoff needs indexed", mutate: func(j *batchv1.Job) { j.Spec.BackoffLimitPerIndex = ptrOf(int32(1)) },
			want: []string{"spec.backoffLimitPerIndex: Invalid value"}},
		{name: "pod failure policy with OnFailure", mutate: func(j *batchv1.Job) {
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:      batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
			}}}
			j.Spec.PodReplacementPolicy = ptrOf(batchv1.Failed)
		}, want: []string{"spec.template.spec.restartPolicy: Invalid value"}},
		{name: "bad exit codes", mutate: func(j *batchv1.Job) {
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:      batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{3, 0, 3}},
			}}}
			j.Spec.PodReplacementPolicy = ptrOf(batchv1.Failed)
		}, want: []string{
			"spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value",
			"spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value",
			"spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value"}},
		{name: "container without image", mutate: func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "" },
			want: []string{"spec.template.spec.containers[0].image: Required value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			if tc.mutate != nil {
				tc.mutate(j)
			}
			registrytest.ExpectErrors(t, ValidateJob(j), tc.want...)
		})
	}
}

func TestValidateJobUpdate(t *testing.T) {
	old := validJob()
	old.ResourceVersion = "1"

	j := old.DeepCopy()
	j.Spec.Parallelism = ptrOf(int32(4))
	j.Spec.Suspend = ptrOf(true)
	j.Spec.ActiveDeadlineSeconds = ptrOf(int64(60))
	registrytest.ExpectErrors(t, ValidateJobUpdate(j, old))

	j = old.DeepCopy()
	j.Spec.Template.Spec.Containers[0].Image = "perl:5.40"
	j.Spec.Completions = ptrOf(int32(3))
	registrytest.ExpectErrors(t, ValidateJobUpdate(j, old), "spec.template: Invalid value", "spec.completions: Invalid value")

	j = old.DeepCopy()
	j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"job-name": "pi"}}
	registrytest.ExpectErrors(t, ValidateJobUpdate(j, old), "spec.selector: Invalid value")

	// A suspended Job that never started may change its scheduling directives.
	suspended := old.DeepCopy()
	suspended.Spec.Suspend = ptrOf(true)
	j = suspended.DeepCopy()
	j.Spec.Template.Spec.NodeSelector = map[string]string{"zone": "a"}
	registrytest.ExpectErrors(t, ValidateJobUpdate(j, suspended))
	started := suspended.DeepCopy()
	started.Status.StartTime = &metav1.Time{}
	registrytest.ExpectErrors(t, ValidateJobUpdate(j, started), "spec.template: Invalid value")

	// Elastic Indexed Jobs scale completions and parallelism together.
	indexed := old.DeepCopy()
	indexed.Spec.CompletionMode = ptrOf(batchv1.IndexedCompletion)
	indexed.Spec.Completions, indexed.Spec.Parallelism = ptrOf(int32(2)), ptrOf(int32(2))
	j = indexed.DeepCopy()
	j.Spec.Completions, j.Spec.Parallelism = ptrOf(int32(5)), ptrOf(int32(5))
	registrytest.ExpectErrors(t, ValidateJobUpdate(j, indexed))
	j.Spec.Parallelism = ptrOf(int32(4))
	registrytest.ExpectErrors(t, ValidateJobUpdate(j, indexed), "spec.completions: Invalid value")
}

func TestValidateJobStatusUpdate(t *testing.T) {
	old := validJob()
	old.ResourceVersion = "1"
	old.Status = batchv1.JobStatus{Active: 1, Failed: 2}

	j := old.DeepCopy()
	j.Status.Succeeded = 1
	j.Status.Active = 0
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	registrytest.ExpectErrors(t, ValidateJobStatusUpdate(j, old))

	j = old.DeepCopy()
	j.Status.Failed = 1
	j.Status.Ready = ptrOf(int32(5))
	j.Status.CompletedIndexes = "0"
	registrytest.ExpectErrors(t, ValidateJobStatusUpdate(j, old), "status.failed: Invalid value", "status.ready: Invalid value", "status.completedIndexes: Invalid value")
}

func validCronJob() *batchv1.CronJob {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "backup", Namespace: "default"}, Spec: batchv1.CronJobSpec{
		Schedule:    "0 3 * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobPodTemplate()}},
	}}
	DefaultCronJob(cj)
	return cj
}

func TestValidateCronJob(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *batchv1.CronJob)
		want   []string
	}{
		{name: "valid"},
		{name: "descriptor", mutate: func(c *batchv1.CronJob) { c.Spec.Schedule = "@hourly" }},
		{name: "time zone", mutate: func(c *batchv1.CronJob) { c.Spec.TimeZone = ptrOf("Europe/Paris") }},
		{name: "no schedule", mutate: func(c *batchv1.CronJob) { c.Spec.Schedule = "" }, want: []string{"spec.schedule: Required value"}},
		{name: "bad schedule", mutate: func(c *batchv1.CronJob) { c.Spec.Schedule = "every day" }, want: []string{"spec.schedule: Invalid value"}},
		{name: "TZ in schedule", mutate: func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 3 * * *" }, want: []string{"spec.schedule: Invalid value"}},
		{name: "unknown time zone", mutate: func(c *batchv1.CronJob) { c.Spec.TimeZone = ptrOf("Mars/Olympus") }, want: []string{"spec.timeZone: Invalid value"}},
		{name: "local time zone", mutate: func(c *batchv1.CronJob) { c.Spec.TimeZone = ptrOf("Local") }, want: []string{"spec.timeZone: Invalid value"}},
		{name: "name too long", mutate: func(c *batchv1.CronJob) { c.Name = strings.Repeat("a", 53) }, want: []string{"metadata.name: Invalid value"}},
		{name: "bad concurrency policy", mutate: func(c *batchv1.CronJob) { c.Spec.ConcurrencyPolicy = "Sometimes" },
			want: []string{"spec.concurrencyPolicy: Unsupported value"}},
		{name: "selector in template", mutate: func(c *batchv1.CronJob) {
			c.Spec.JobTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pi"}}
		}, want: []string{"spec.jobTemplate.spec.selector: Invalid value"}},
		{name: "template restart policy", mutate: func(c *batchv1.CronJob) {
			c.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		},
			want: []string{"spec.jobTemplate.spec.template.spec.restartPolicy: Required value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validCronJob()
			if tc.mutate != nil {
				tc.mutate(c)
			}
			registrytest.ExpectErrors(t, ValidateCronJob(c), tc.want...)
		})
	}

	c := validCronJob()
	c.Spec.Schedule = "61 * * * *"
	errs := ValidateCronJob(c)
	want := `spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61`
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("got %v, want %s", errs, want)
	}
}

func TestValidateCronJobUpdate(t *testing.T) {
	old := validCronJob()
	old.ResourceVersion = "1"
	old.Name = strings.Repeat("a", 60) // created before the 52-character limit

	c := old.DeepCopy()
	c.Spec.Schedule = "*/10 * * * *"
	c.Spec.Suspend = ptrOf(true)
	registrytest.ExpectErrors(t, ValidateCronJobUpdate(c, old))

	// A TZ prefix is tolerated on objects that already had one.
	withTZ := old.DeepCopy()
	withTZ.Spec.Schedule = "TZ=UTC 0 3 * * *"
	c = withTZ.DeepCopy()
	c.Spec.Schedule = "TZ=UTC 0 4 * * *"
	registrytest.ExpectErrors(t, ValidateCronJobUpdate(c, withTZ))
	c.Spec.TimeZone = ptrOf("UTC")
	registrytest.ExpectErrors(t, ValidateCronJobUpdate(c, withTZ), "spec.schedule: Invalid value")

	registrytest.ExpectErrors(t, ValidateCronJobStatusUpdate(old.DeepCopy(), old))
}

func TestParseCronSchedule(t *testing.T) {
	valid := []string{
		"* * * * *", "*/15 * * * *", "0 0 1 1 *", "0 9-17 * * mon-fri", "30 2 * jan,jul SUN",
		"5/10 * * * *", "0 0 ? * *", "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly", "@every 1h30m",
		"CRON_TZ=UTC 0 3 * * *",
	}
	for _, s := range valid {
		if _, err := parseCronSchedule(s); err != nil {
			t.Errorf("%q: unexpected error %v", s, err)
		}
	}
	invalid := map[string]string{
		"":                       "empty spec string",
		"* * * *":                "expected exactly 5 fields, found 4: [* * * *]",
		"* * * * * *":            "expected exactly 5 fields, found 6: [* * * * * *]",
		"60 * * * *":             "end of range (60) above maximum (59): 60",
		"* * 0 * *":              "beginning of range (0) below minimum (1): 0",
		"5-1 * * * *":            "beginning of range (5) beyond end of range (1): 5-1",
		"*/0 * * * *":            "step of range should be a positive number: */0",
		"1-2-3 * * * *":          "too many hyphens: 1-2-3",
		"*/2/3 * * * *":          "too many slashes: */2/3",
		"x * * * *":              `failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax`,
		"* * * foo *":            `failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax`,
		"@often":                 "unrecognized descriptor: @often",
		"@every forever":         `failed to parse duration @every forever: time: invalid duration "forever"`,
		"TZ=Nowhere/X * * * * *": "provided bad location Nowhere/X: unknown time zone Nowhere/X",
	}
	for s, want := range invalid {
		_, err := parseCronSchedule(s)
		if err == nil || err.Error() != want {
			t.Errorf("%q: got error %v, want %q", s, err, want)
		}
	}
	masks, _ := parseCronSchedule("*/20 0 1 jan sun")
	if masks[0] != 1|1<<20|1<<40 || masks[3] != 1<<1 || masks[4] != 1 {
		t.Errorf("masks = %b", masks)
	}
}
