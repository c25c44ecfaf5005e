package campaigns

import (
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/enum"
)

// Weekday is a day of a send window.
type Weekday string

// Weekdays in ISO order (Monday is 1).
var Weekdays = []Weekday{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// ParseWeekday reads a window day.
func ParseWeekday(s string) (Weekday, error) {
	return enum.Parse(Weekdays, "A window day", strings.ToLower(strings.TrimSpace(s)))
}

// iso is the ISO day number (Monday 1 .. Sunday 7).
func (d Weekday) iso() int { return slices.Index(Weekdays, d) + 1 }

// SendWindow is when an email step may send, read in the participant's
// time zone: the days of the week and the hours of those days, from
// Start (inclusive) to End (exclusive, "24:00" for the end of the day).
type SendWindow struct {
	Days  []Weekday `json:"days"`
	Start string    `json:"start"`
	End   string    `json:"end"`
}

// clockMinutes reads "HH:MM" as minutes since midnight; "24:00" only
// when end is true.
func clockMinutes(s string, end bool) (int, bool) {
	t, err := time.Parse("15:04", s)
	if err == nil && len(s) == 5 {
		return t.Hour()*60 + t.Minute(), true
	}
	if end && s == "24:00" {
		return 24 * 60, true
	}
	return 0, false
}

// normalize checks the window and puts its days in week order.
func (w *SendWindow) normalize() error {
	if len(w.Days) == 0 || len(w.Days) > 7 {
		return apperr.Invalidf("`send_window.days` must list 1 to 7 distinct days of mon, tue, wed, thu, fri, sat, sun.")
	}
	seen := map[Weekday]bool{}
	for i, raw := range w.Days {
		d, err := ParseWeekday(string(raw))
		if err != nil || seen[d] {
			return apperr.Invalidf("`send_window.days` must list 1 to 7 distinct days of mon, tue, wed, thu, fri, sat, sun (item %d is %q).", i, raw)
		}
		seen[d], w.Days[i] = true, d
	}
	slices.SortFunc(w.Days, func(a, b Weekday) int { return a.iso() - b.iso() })
	start, ok := clockMinutes(w.Start, false)
	if !ok {
		return apperr.Invalidf("`send_window.start` must be a time of day as HH:MM (00:00 to 23:59).")
	}
	end, ok := clockMinutes(w.End, true)
	if !ok {
		return apperr.Invalidf("`send_window.end` must be a time of day as HH:MM (00:01 to 24:00).")
	}
	if end <= start {
		return apperr.Invalidf("`send_window.end` must be after `send_window.start`.")
	}
	return nil
}

// sqlArgs are the window as campaign_window_next takes it: ISO days and
// minutes since local midnight.
func (w *SendWindow) sqlArgs() (days []int32, start, end int) {
	for _, d := range w.Days {
		days = append(days, int32(d.iso()))
	}
	start, _ = clockMinutes(w.Start, false)
	end, _ = clockMinutes(w.End, true)
	return days, start, end
}

// ConditionIf is what must have happened to an earlier email.
type ConditionIf string

// Conditions on an earlier email's feedback.
const (
	IfOpened     ConditionIf = "opened"
	IfNotOpened  ConditionIf = "not_opened"
	IfClicked    ConditionIf = "clicked"
	IfNotClicked ConditionIf = "not_clicked"
	IfDelivered  ConditionIf = "delivered"
	IfBounced    ConditionIf = "bounced"
)

// ConditionIfs is every condition on an earlier email.
var ConditionIfs = []ConditionIf{IfOpened, IfNotOpened, IfClicked, IfNotClicked, IfDelivered, IfBounced}

// ParseConditionIf reads a condition's `if`.
func ParseConditionIf(s string) (ConditionIf, error) {
	return enum.Parse(ConditionIfs, "`condition.if`", s)
}

// feedback is the kind of provider feedback the condition reads and
// whether it must have been heard (true) or not.
func (c ConditionIf) feedback() (kind string, heard bool) {
	switch c {
	case IfNotOpened:
		return "opened", false
	case IfNotClicked:
		return "clicked", false
	}
	return string(c), true
}

// Condition makes a step depend on the provider's feedback on the
// participant's email of an earlier email step.
type Condition struct {
	If     ConditionIf `json:"if"`
	StepID uuid.UUID   `json:"step_id"`
}

// Variant is one subject (and optionally template) of an A/B step.
type Variant struct {
	ID              uuid.UUID  `json:"id"`
	Subject         string     `json:"subject"`
	EmailTemplateID *uuid.UUID `json:"email_template_id"`
}

// Metric is what decides an A/B test.
type Metric string

// A/B metrics: the unique open or click rate of each variant's emails.
const (
	MetricOpens  Metric = "opens"
	MetricClicks Metric = "clicks"
)

// Metrics is every A/B metric.
var Metrics = []Metric{MetricOpens, MetricClicks}

// ParseMetric reads an A/B metric.
func ParseMetric(s string) (Metric, error) {
	return enum.Parse(Metrics, "`ab_test.metric`", s)
}

// ABTest is how an A/B step's test runs.
type ABTest struct {
	Metric             Metric `json:"metric"`
	TestPercent        int    `json:"test_percent"`
	DecideAfterMinutes int    `json:"decide_after_minutes"`
}

// ABTestInput is an ab_test body: absent fields take the defaults.
type ABTestInput struct {
	Metric             *string `json:"metric"`
	TestPercent        *int    `json:"test_percent"`
	DecideAfterMinutes *int    `json:"decide_after_minutes"`
}

// A/B limits.
const (
	MinVariants        = 2
	MaxVariants        = 4
	MaxDecideAfterMins = 10080
)

// abTestOf applies an input over the defaults.
func abTestOf(in *ABTestInput) (*ABTest, error) {
	t := &ABTest{Metric: MetricOpens, TestPercent: 20, DecideAfterMinutes: 240}
	if in == nil {
		return t, nil
	}
	if in.Metric != nil {
		m, err := ParseMetric(*in.Metric)
		if err != nil {
			return nil, err
		}
		t.Metric = m
	}
	if in.TestPercent != nil {
		if *in.TestPercent < 10 || *in.TestPercent > 100 {
			return nil, apperr.Invalidf("`ab_test.test_percent` must be 10 to 100.")
		}
		t.TestPercent = *in.TestPercent
	}
	if in.DecideAfterMinutes != nil {
		if *in.DecideAfterMinutes < 0 || *in.DecideAfterMinutes > MaxDecideAfterMins {
			return nil, apperr.Invalidf("`ab_test.decide_after_minutes` must be 0 to %d.", MaxDecideAfterMins)
		}
		t.DecideAfterMinutes = *in.DecideAfterMinutes
	}
	return t, nil
}

// VariantInput is one variant of a step body; an id keeps a variant's
// identity (and its counts) across an edit.
type VariantInput struct {
	ID              *uuid.UUID `json:"id"`
	Subject         string     `json:"subject"`
	EmailTemplateID *uuid.UUID `json:"email_template_id"`
}

// variantsOf checks the variants of a body and gives new ones an id.
func variantsOf(in []VariantInput) ([]Variant, error) {
	if len(in) < MinVariants || len(in) > MaxVariants {
		return nil, apperr.Invalidf("`variants` must list %d to %d variants (or be null).", MinVariants, MaxVariants)
	}
	out := make([]Variant, len(in))
	seen := map[uuid.UUID]bool{}
	for i, v := range in {
		v.Subject = strings.TrimSpace(v.Subject)
		if v.Subject == "" || len(v.Subject) > 500 || strings.ContainsAny(v.Subject, "\r\n") {
			return nil, apperr.Invalidf("`variants[%d].subject` is required: one line of at most 500 characters.", i)
		}
		id := uuid.New()
		if v.ID != nil && *v.ID != uuid.Nil && !seen[*v.ID] {
			id = *v.ID
		}
		seen[id] = true
		out[i] = Variant{ID: id, Subject: v.Subject, EmailTemplateID: v.EmailTemplateID}
	}
	return out, nil
}

// testState is how far an A/B step's test has gone.
type testState struct {
	startedAt *time.Time
	quota     *int // participants the slice takes; nil: all until the decision
	assigned  int  // participants given a variant so far
}

// decideAfter is the wait between the last test email and the decision.
func (t ABTest) decideAfter() time.Duration {
	return time.Duration(t.DecideAfterMinutes) * time.Minute
}

// ConditionInput is a condition as a step body gives it.
type ConditionInput struct {
	If     string     `json:"if"`
	StepID *uuid.UUID `json:"step_id"`
}

func (in ConditionInput) condition() (*Condition, error) {
	c, err := ParseConditionIf(in.If)
	if err != nil {
		return nil, err
	}
	if in.StepID == nil || *in.StepID == uuid.Nil {
		return nil, apperr.Invalidf("`condition.step_id` is required: an earlier email step of the campaign.")
	}
	return &Condition{If: c, StepID: *in.StepID}, nil
}

// timingFromInput sets the window, condition and variants of a new step.
func timingFromInput(st *Step, in StepInput) error {
	if in.SendWindow != nil {
		w := *in.SendWindow
		st.SendWindow = &w
	}
	if in.Condition != nil {
		c, err := in.Condition.condition()
		if err != nil {
			return err
		}
		st.Condition = c
	}
	if in.Variants == nil {
		if in.ABTest != nil {
			return apperr.Invalidf("`ab_test` needs `variants`.")
		}
		return nil
	}
	vs, err := variantsOf(in.Variants)
	if err != nil {
		return err
	}
	st.Variants = vs
	st.ABTest, err = abTestOf(in.ABTest)
	return err
}

// applyTimingPatch applies the window, condition, variants and ab_test
// of a patch. Fields left out of an ab_test patch keep their values.
func applyTimingPatch(st *Step, p StepPatch) error {
	p.SendWindow.ApplyToPtr(&st.SendWindow)
	if p.Condition.Set {
		st.Condition = nil
		if !p.Condition.Null {
			c, err := p.Condition.V.condition()
			if err != nil {
				return err
			}
			st.Condition = c
		}
	}
	if p.Variants.Set {
		st.Variants = nil
		if !p.Variants.Null {
			vs, err := variantsOf(p.Variants.V)
			if err != nil {
				return err
			}
			st.Variants = vs
		}
	}
	if p.ABTest.Set {
		if st.Variants == nil {
			return apperr.Invalidf("`ab_test` needs `variants`.")
		}
		cur := st.ABTest
		if cur == nil {
			cur, _ = abTestOf(nil)
		}
		in := p.ABTest.V
		m, pct, after := string(cur.Metric), cur.TestPercent, cur.DecideAfterMinutes
		if in.Metric == nil {
			in.Metric = &m
		}
		if in.TestPercent == nil {
			in.TestPercent = &pct
		}
		if in.DecideAfterMinutes == nil {
			in.DecideAfterMinutes = &after
		}
		t, err := abTestOf(&in)
		if err != nil {
			return err
		}
		st.ABTest = t
	}
	return nil
}

// normalizeTiming checks what a step's type allows of windows, conditions
// and variants, and drops A/B state that no longer applies.
func normalizeTiming(st *Step) error {
	if st.StepType != StepEmail {
		switch {
		case st.SendWindow != nil:
			return apperr.Invalidf("`send_window` applies to email steps only.")
		case st.Variants != nil:
			return apperr.Invalidf("`variants` apply to email steps only.")
		}
	}
	if st.SendWindow != nil {
		if err := st.SendWindow.normalize(); err != nil {
			return err
		}
	}
	if st.Variants == nil {
		st.ABTest, st.WinnerVariantID, st.test = nil, nil, testState{}
		return nil
	}
	if st.ABTest == nil {
		st.ABTest, _ = abTestOf(nil)
	}
	if st.WinnerVariantID != nil && !slices.ContainsFunc(st.Variants, func(v Variant) bool { return v.ID == *st.WinnerVariantID }) {
		st.WinnerVariantID = nil
	}
	return nil
}

// window is the step's send window as its claims read it (nil: none).
func (p *pass) window(st Step) *claimWindow {
	if st.SendWindow == nil {
		return nil
	}
	days, start, end := st.SendWindow.sqlArgs()
	tz := p.settings.DefaultTimeZone
	if tz == "" {
		tz = "UTC"
	}
	return &claimWindow{days: days, start: start, end: end, defaultTZ: tz}
}

// skippedOutcome records that the step's condition did not hold for r.
func skippedOutcome(p *pass, st Step, r claimedRow) outcome {
	return outcome{ParticipantID: r.ParticipantID, Result: ResultSkipped,
		Detail: "condition not met: " + string(st.Condition.If) + " " + p.stepNames[st.Condition.StepID]}
}
