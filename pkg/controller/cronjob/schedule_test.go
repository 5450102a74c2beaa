package cronjob

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client/record"
)

func ptr[T any](v T) *T { return &v }

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func cronJob(schedule string, created string, last string) *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cj", UID: "cj-uid", CreationTimestamp: metav1.Time{Time: at(created)}},
		Spec:       batchv1.CronJobSpec{Schedule: schedule},
	}
	if last != "" {
		cj.Status.LastScheduleTime = &metav1.Time{Time: at(last)}
	}
	return cj
}

func drain(r *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// TestSchedules: the syntax the parser accepts (upstream's
// ParseStandard), each schedule's next time after a given instant, with
// time zones.
func TestSchedules(t *testing.T) {
	from := at("2026-01-05T10:07:30Z") // a Monday
	tests := []struct {
		schedule string
		tz       string
		want     string // "" : unparseable
	}{
		{"*/1 * * * *", "", "2026-01-05T10:08:00Z"},
		{"*/15 * * * *", "", "2026-01-05T10:15:00Z"},
		{"5-10 * * * *", "", "2026-01-05T10:08:00Z"},
		{"0,30 * * * *", "", "2026-01-05T10:30:00Z"},
		{"0 9 * * mon-fri", "", "2026-01-06T09:00:00Z"},
		{"0 0 1 jan *", "", "2027-01-01T00:00:00Z"},
		{"0 0 * * SUN", "", "2026-01-11T00:00:00Z"},
		{"@hourly", "", "2026-01-05T11:00:00Z"},
		{"@daily", "", "2026-01-06T00:00:00Z"},
		{"@midnight", "", "2026-01-06T00:00:00Z"},
		{"@weekly", "", "2026-01-11T00:00:00Z"},
		{"@monthly", "", "2026-02-01T00:00:00Z"},
		{"@yearly", "", "2027-01-01T00:00:00Z"},
		{"@annually", "", "2027-01-01T00:00:00Z"},
		{"@every 90s", "", "2026-01-05T10:09:00Z"},
		{"0 12 * * *", "Asia/Tokyo", "2026-01-06T03:00:00Z"},       // noon in Tokyo is 03:00 UTC
		{"0 12 * * *", "America/New_York", "2026-01-05T17:00:00Z"}, // EST, UTC-5
		{"0 12 * * *", "Not/AZone", "2026-01-05T12:00:00Z"},        // formatSchedule ignores a bad zone (sync refuses it)
		{"61 * * * *", "", ""},
		{"* * * *", "", ""},
		{"@fortnightly", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.schedule+" "+tt.tz, func(t *testing.T) {
			cj := cronJob(tt.schedule, "2026-01-01T00:00:00Z", "")
			if tt.tz != "" {
				cj.Spec.TimeZone = ptr(tt.tz)
			}
			s, err := parseSchedule(cj, nil)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("parsed %q", tt.schedule)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Next(from).UTC(); !got.Equal(at(tt.want)) {
				t.Errorf("next after %v = %v, want %v", from, got, tt.want)
			}
		})
	}
}

// TestScheduleInStatus: a TZ in the schedule itself (stored before
// validation refused it) is honoured with an UnsupportedSchedule warning.
func TestScheduleInStatus(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	cj := cronJob("CRON_TZ=Asia/Tokyo 0 12 * * *", "2026-01-01T00:00:00Z", "")
	cj.Spec.TimeZone = ptr("Europe/Paris") // ignored: the schedule's own zone wins
	s, err := parseSchedule(cj, rec)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Next(at("2026-01-05T10:00:00Z")).UTC(); !got.Equal(at("2026-01-06T03:00:00Z")) {
		t.Errorf("next = %v", got)
	}
	if ev := drain(rec); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning UnsupportedSchedule CRON_TZ or TZ used in schedule") {
		t.Errorf("events %q", ev)
	}
}

// TestNextScheduleTime: which schedule time is due now, starting from
// the last schedule time or the creation time, cut by
// startingDeadlineSeconds, and the many-missed warning.
func TestNextScheduleTime(t *testing.T) {
	tests := []struct {
		name      string
		schedule  string
		created   string
		last      string
		deadline  *int64
		now       string
		want      string // "" : nothing due
		wantErr   bool
		wantEvent string
	}{
		{name: "before the first time", schedule: "*/1 * * * *", created: "2026-01-05T10:00:30Z", now: "2026-01-05T10:00:59Z"},
		{name: "exactly at the first time", schedule: "*/1 * * * *", created: "2026-01-05T10:00:30Z", now: "2026-01-05T10:01:00Z", want: "2026-01-05T10:01:00Z"},
		{name: "just after", schedule: "*/1 * * * *", created: "2026-01-05T10:00:30Z", now: "2026-01-05T10:01:10Z", want: "2026-01-05T10:01:00Z"},
		{name: "last schedule time is the start", schedule: "*/1 * * * *", created: "2026-01-05T09:00:00Z", last: "2026-01-05T10:01:00Z", now: "2026-01-05T10:01:30Z"},
		{name: "a few missed: the most recent", schedule: "*/1 * * * *", created: "2026-01-05T10:00:30Z", now: "2026-01-05T10:05:10Z", want: "2026-01-05T10:05:00Z"},
		{name: "hourly, missed two", schedule: "@hourly", created: "2026-01-05T07:10:00Z", now: "2026-01-05T10:30:00Z", want: "2026-01-05T10:00:00Z"},
		{name: "irregular schedule", schedule: "30 6-16/4 * * 1-5", created: "2026-01-02T00:00:00Z", now: "2026-01-05T15:00:00Z", want: "2026-01-05T14:30:00Z"},
		{name: "@every counts from the creation", schedule: "@every 7m", created: "2026-01-05T10:00:00Z", now: "2026-01-05T10:30:00Z", want: "2026-01-05T10:28:00Z"},
		{name: "deadline cuts the missed ones", schedule: "*/1 * * * *", created: "2026-01-05T10:00:30Z", deadline: ptr(int64(30)), now: "2026-01-05T10:05:40Z"},
		{name: "within the deadline", schedule: "*/1 * * * *", created: "2026-01-05T10:00:30Z", deadline: ptr(int64(60)), now: "2026-01-05T10:05:40Z", want: "2026-01-05T10:05:00Z"},
		{name: "more than 100 missed warn", schedule: "*/1 * * * *", created: "2026-01-05T10:00:30Z", now: "2026-01-05T12:00:10Z", want: "2026-01-05T12:00:00Z",
			wantEvent: "Warning TooManyMissedTimes too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew"},
		{name: "100 missed do not", schedule: "*/1 * * * *", created: "2026-01-05T10:00:30Z", now: "2026-01-05T11:40:30Z", want: "2026-01-05T11:40:00Z"},
		{name: "a deadline keeps the count low", schedule: "*/1 * * * *", created: "2026-01-05T10:00:30Z", deadline: ptr(int64(200)), now: "2026-01-05T12:00:10Z", want: "2026-01-05T12:00:00Z"},
		{name: "february 31st never fires", schedule: "59 23 31 2 *", created: "2026-01-05T10:00:30Z", now: "2026-05-05T10:00:00Z", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cj := cronJob(tt.schedule, tt.created, tt.last)
			cj.Spec.StartingDeadlineSeconds = tt.deadline
			s, err := parseSchedule(cj, nil)
			if err != nil {
				t.Fatal(err)
			}
			rec := record.NewFakeRecorder(10)
			got, err := nextScheduleTime(cj, at(tt.now), s, rec)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v", err)
			}
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("due %v, want nothing", got)
			case tt.want != "" && (got == nil || !got.Equal(at(tt.want))):
				t.Errorf("due %v, want %v", got, tt.want)
			}
			ev := drain(rec)
			if tt.wantEvent == "" && len(ev) > 0 || tt.wantEvent != "" && (len(ev) != 1 || ev[0] != tt.wantEvent) {
				t.Errorf("events %q, want %q", ev, tt.wantEvent)
			}
		})
	}
}

// TestNextScheduleTimeDuration: the requeue delay is to the next time
// after the most recent one, plus 100ms.
func TestNextScheduleTimeDuration(t *testing.T) {
	tests := []struct {
		name, schedule, created, last, now string
		want                               time.Duration
	}{
		{name: "nothing yet", schedule: "*/1 * * * *", created: "2026-01-05T10:00:30Z", now: "2026-01-05T10:00:40Z", want: 20*time.Second + 100*time.Millisecond},
		{name: "just scheduled", schedule: "*/1 * * * *", created: "2026-01-05T10:00:30Z", last: "2026-01-05T10:01:00Z", now: "2026-01-05T10:01:02Z", want: 58*time.Second + 100*time.Millisecond},
		{name: "missed several", schedule: "@hourly", created: "2026-01-05T07:10:00Z", now: "2026-01-05T10:30:00Z", want: 30*time.Minute + 100*time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cj := cronJob(tt.schedule, tt.created, tt.last)
			s, err := parseSchedule(cj, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := nextScheduleTimeDuration(cj, at(tt.now), s); got != tt.want {
				t.Errorf("requeue after %v, want %v", got, tt.want)
			}
		})
	}
}

func TestJobFromTemplate(t *testing.T) {
	cj := cronJob("0 12 * * *", "2026-01-01T00:00:00Z", "")
	cj.Spec.TimeZone = ptr("Asia/Tokyo")
	cj.Spec.JobTemplate = batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"note": "y"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}},
	}
	scheduled := at("2026-01-06T03:00:00Z")
	j, err := jobFromTemplate(cj, scheduled)
	if err != nil {
		t.Fatal(err)
	}
	if want := "cj-29461140"; j.Name != want {
		t.Errorf("name %q, want %q", j.Name, want)
	}
	if got := j.Annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"]; got != "2026-01-06T12:00:00+09:00" {
		t.Errorf("scheduled timestamp %q", got)
	}
	if j.Annotations["note"] != "y" || j.Labels["app"] != "x" || j.Namespace != "ns" {
		t.Errorf("metadata %+v", j.ObjectMeta)
	}
	ref := j.OwnerReferences
	if len(ref) != 1 || ref[0].Kind != "CronJob" || ref[0].APIVersion != "batch/v1" || ref[0].UID != "cj-uid" || ref[0].Controller == nil || !*ref[0].Controller {
		t.Errorf("owner %+v", ref)
	}
	if j.Spec.Template.Spec.Containers[0].Image != "busybox" {
		t.Errorf("spec %+v", j.Spec)
	}
	// The template is copied, not shared.
	j.Labels["app"] = "changed"
	if cj.Spec.JobTemplate.Labels["app"] != "x" {
		t.Error("template labels shared with the Job")
	}
}
