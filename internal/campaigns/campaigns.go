// Package campaigns owns multi-step email campaigns: email templates,
// campaigns and their ordered steps, participants (contacts enrolled in a
// campaign), the per-book email settings (provider key encrypted at rest),
// test sends, campaign images, unsubscribe tokens, and the processor that
// works out which steps are due and sends each email at most once per
// participant and step, also across crashes and concurrent processors.
// Campaign features need the team's Campaigns add-on (trial or paid);
// processing needs the paid add-on.
package campaigns

import (
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/optional"
	"github.com/contactbook/contactbook/internal/validate"
)

// Failure details recorded on completions: the reasons the API shows for a
// participant's failed step (the API reference lists them).
const (
	DetailNoEmail         = "contact has no email address"
	DetailInvalidEmail    = "contact email address is not valid"
	DetailNotConfigured   = "email settings are not configured"
	DetailUnsubscribed    = "contact unsubscribed"
	DetailTemplateDeleted = "email template was deleted"
	DetailTriggerDeleted  = "trigger campaign was deleted"
	DetailTriggerArchived = "trigger campaign is archived"
	DetailOutcomeUnknown  = "delivery outcome unknown: sending was interrupted before the provider answered, so the email is not sent again"
)

// Limits.
const (
	MaxEnrollIDs    = 10_000
	MaxTemplateBody = 1_000_000
	MaxDelayDays    = 3650
	MaxAPIKeyLength = 1000
)

// Template is an email template of a book.
type Template struct {
	ID        uuid.UUID  `json:"id"`
	BookID    uuid.UUID  `json:"book_id"`
	Name      string     `json:"name" validate:"required,max=200"`
	Subject   string     `json:"subject" validate:"max=500,headertext"`
	BodyHTML  string     `json:"body_html" validate:"max=1000000"`
	CreatedBy *uuid.UUID `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// TemplateInput is a new template.
type TemplateInput struct {
	Name     string `json:"name"`
	Subject  string `json:"subject"`
	BodyHTML string `json:"body_html"`
}

// TemplatePatch changes a template; at least one field.
type TemplatePatch struct {
	Name     optional.Value[string] `json:"name"`
	Subject  optional.Value[string] `json:"subject"`
	BodyHTML optional.Value[string] `json:"body_html"`
}

// Campaign is an ordered sequence of steps in a book.
type Campaign struct {
	ID          uuid.UUID `json:"id"`
	BookID      uuid.UUID `json:"book_id"`
	Name        string    `json:"name" validate:"required,max=200"`
	Description string    `json:"description" validate:"max=5000"`
	Status      Status    `json:"status" validate:"enum"`
	// AudienceSegmentID names the segment whose members every pass
	// enrolls (audience.go); ExitOnSegmentLeave removes a participant who
	// no longer matches it when a step falls due.
	AudienceSegmentID  *uuid.UUID `json:"audience_segment_id"`
	ExitOnSegmentLeave bool       `json:"exit_on_segment_leave"`
	// EntryEvent names the product event that enrolls its contact while
	// the campaign is active (entry.go); nil for none.
	EntryEvent *string    `json:"entry_event"`
	CreatedBy  *uuid.UUID `json:"created_by"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

// CampaignListItem is a campaign as listed, with its counts.
type CampaignListItem struct {
	Campaign
	StepCount        int `json:"step_count"`
	ParticipantCount int `json:"participant_count"`
}

// CampaignDetail is a campaign with its steps in order.
type CampaignDetail struct {
	Campaign
	Steps []Step `json:"steps"`
}

// CampaignInput is a new campaign.
type CampaignInput struct {
	Name               string     `json:"name"`
	Description        string     `json:"description"`
	AudienceSegmentID  *uuid.UUID `json:"audience_segment_id"`
	ExitOnSegmentLeave bool       `json:"exit_on_segment_leave"`
	EntryEvent         *string    `json:"entry_event"`
}

// CampaignPatch changes a campaign; at least one field.
type CampaignPatch struct {
	Name        optional.Value[string] `json:"name"`
	Description optional.Value[string] `json:"description"`
	Status      optional.Value[Status] `json:"status"`
	// AudienceSegmentID null removes the audience.
	AudienceSegmentID  optional.Value[uuid.UUID] `json:"audience_segment_id"`
	ExitOnSegmentLeave optional.Value[bool]      `json:"exit_on_segment_leave"`
	// EntryEvent null: the campaign starts on no event.
	EntryEvent optional.Value[string] `json:"entry_event"`
}

// Step is one step of a campaign.
type Step struct {
	ID                uuid.UUID    `json:"id"`
	CampaignID        uuid.UUID    `json:"campaign_id"`
	StepType          StepType     `json:"step_type" validate:"required,enum"`
	Name              string       `json:"name" validate:"required,max=200"`
	SortOrder         int          `json:"sort_order"`
	Active            bool         `json:"active"`
	ScheduleType      ScheduleType `json:"schedule_type" validate:"required,enum"`
	DelayDays         int          `json:"delay_days" validate:"gte=0,lte=3650"`
	DelayHours        int          `json:"delay_hours" validate:"gte=0,lte=23"`
	FixedDate         *string      `json:"fixed_date" validate:"omitempty,date"`
	EmailTemplateID   *uuid.UUID   `json:"email_template_id"`
	SenderName        string       `json:"sender_name" validate:"max=200,headertext"`
	SenderEmail       string       `json:"sender_email" validate:"omitempty,max=254,headertext,email"`
	TriggerCampaignID *uuid.UUID   `json:"trigger_campaign_id"`
	SendWindow        *SendWindow  `json:"send_window"`
	Condition         *Condition   `json:"condition"`
	Variants          []Variant    `json:"variants"`
	ABTest            *ABTest      `json:"ab_test"`
	// WinnerVariantID is the A/B test's decision (read only).
	WinnerVariantID *uuid.UUID `json:"winner_variant_id"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	test            testState  // the A/B test's progress
}

// StepInput is a new step.
type StepInput struct {
	StepType          StepType        `json:"step_type"`
	Name              string          `json:"name"`
	Active            *bool           `json:"active"`
	ScheduleType      ScheduleType    `json:"schedule_type"`
	DelayDays         *int            `json:"delay_days"`
	DelayHours        *int            `json:"delay_hours"`
	FixedDate         *string         `json:"fixed_date"`
	EmailTemplateID   *uuid.UUID      `json:"email_template_id"`
	SenderName        string          `json:"sender_name"`
	SenderEmail       string          `json:"sender_email"`
	TriggerCampaignID *uuid.UUID      `json:"trigger_campaign_id"`
	SendWindow        *SendWindow     `json:"send_window"`
	Condition         *ConditionInput `json:"condition"`
	Variants          []VariantInput  `json:"variants"`
	ABTest            *ABTestInput    `json:"ab_test"`
}

// StepPatch changes a step; only supplied fields change.
type StepPatch struct {
	Name              optional.Value[string]         `json:"name"`
	Active            optional.Value[bool]           `json:"active"`
	ScheduleType      optional.Value[ScheduleType]   `json:"schedule_type"`
	DelayDays         optional.Value[int]            `json:"delay_days"`
	DelayHours        optional.Value[int]            `json:"delay_hours"`
	FixedDate         optional.Value[string]         `json:"fixed_date"`
	EmailTemplateID   optional.Value[uuid.UUID]      `json:"email_template_id"`
	SenderName        optional.Value[string]         `json:"sender_name"`
	SenderEmail       optional.Value[string]         `json:"sender_email"`
	TriggerCampaignID optional.Value[uuid.UUID]      `json:"trigger_campaign_id"`
	SendWindow        optional.Value[SendWindow]     `json:"send_window"`
	Condition         optional.Value[ConditionInput] `json:"condition"`
	Variants          optional.Value[[]VariantInput] `json:"variants"`
	ABTest            optional.Value[ABTestInput]    `json:"ab_test"`
}

func (p StepPatch) empty() bool {
	return !p.Name.Set && !p.Active.Set && !p.ScheduleType.Set && !p.DelayDays.Set && !p.FixedDate.Set &&
		!p.EmailTemplateID.Set && !p.SenderName.Set && !p.SenderEmail.Set && !p.TriggerCampaignID.Set &&
		!p.DelayHours.Set && !p.SendWindow.Set && !p.Condition.Set && !p.Variants.Set && !p.ABTest.Set
}

// ReorderInput is the complete new order of a campaign's steps.
type ReorderInput struct {
	StepIDs []uuid.UUID `json:"step_ids"`
}

// EnrollInput enrolls contacts by id.
type EnrollInput struct {
	ContactIDs []uuid.UUID `json:"contact_ids"`
	// SegmentID enrolls the segment's current members instead.
	SegmentID *uuid.UUID `json:"segment_id"`
}

// EnrollLabelInput enrolls every contact with a label.
type EnrollLabelInput struct {
	LabelID *uuid.UUID `json:"label_id"`
}

// Participant is a contact enrolled in a campaign, as listed.
type Participant struct {
	ID           uuid.UUID         `json:"id"`
	CampaignID   uuid.UUID         `json:"campaign_id"`
	ContactID    uuid.UUID         `json:"contact_id"`
	Status       ParticipantStatus `json:"status"`
	EnrolledAt   time.Time         `json:"enrolled_at"`
	EnrolledBy   *uuid.UUID        `json:"enrolled_by"`
	CompletedAt  *time.Time        `json:"completed_at"`
	ContactName  string            `json:"contact_name"`
	ContactEmail string            `json:"contact_email"`
}

// HistoryItem is one completion record of a participant.
type HistoryItem struct {
	ID           uuid.UUID `json:"id"`
	StepID       uuid.UUID `json:"step_id"`
	StepName     string    `json:"step_name"`
	StepType     string    `json:"step_type"`
	SortOrder    int       `json:"sort_order"`
	CompletedAt  time.Time `json:"completed_at"`
	ResultType   string    `json:"result_type"`
	ResultDetail string    `json:"result_detail"`
	// The A/B variant the participant got; null on other steps.
	VariantID      *uuid.UUID `json:"variant_id"`
	VariantSubject *string    `json:"variant_subject"`
}

// ContactCampaign is one campaign a contact is or was enrolled in.
type ContactCampaign struct {
	ID                uuid.UUID         `json:"id"`
	CampaignID        uuid.UUID         `json:"campaign_id"`
	CampaignName      string            `json:"campaign_name"`
	Description       string            `json:"description"`
	CampaignStatus    Status            `json:"campaign_status"`
	ParticipantStatus ParticipantStatus `json:"participant_status"`
	EnrolledAt        time.Time         `json:"enrolled_at"`
	CompletedAt       *time.Time        `json:"completed_at"`
}

// Stats summarises a campaign.
type Stats struct {
	Summary StatsSummary `json:"summary"`
	Steps   []StepStats  `json:"steps"`
}

// StatsSummary counts participants and completion records.
type StatsSummary struct {
	TotalParticipants int `json:"total_participants"`
	ActiveCount       int `json:"active_count"`
	CompletedCount    int `json:"completed_count"`
	TotalSteps        int `json:"total_steps"`
	TotalCompletions  int `json:"total_completions"`
	FailedCount       int `json:"failed_count"`
	SkippedCount      int `json:"skipped_count"`
	WaitingCount      int `json:"waiting_count"`
	Engagement
}

// Engagement counts a step's emails (or a campaign's) by what the
// provider reported: unique emails, each counted once per kind.
type Engagement struct {
	DeliveredCount    int `json:"delivered_count"`
	OpenedCount       int `json:"opened_count"`
	ClickedCount      int `json:"clicked_count"`
	BouncedCount      int `json:"bounced_count"`
	ComplainedCount   int `json:"complained_count"`
	UnsubscribedCount int `json:"unsubscribed_count"`
}

func (e *Engagement) add(o Engagement) {
	e.DeliveredCount += o.DeliveredCount
	e.OpenedCount += o.OpenedCount
	e.ClickedCount += o.ClickedCount
	e.BouncedCount += o.BouncedCount
	e.ComplainedCount += o.ComplainedCount
	e.UnsubscribedCount += o.UnsubscribedCount
}

// StepStats counts one step's completion records.
type StepStats struct {
	StepID       uuid.UUID `json:"step_id"`
	StepName     string    `json:"step_name"`
	SortOrder    int       `json:"sort_order"`
	SuccessCount int       `json:"success_count"`
	FailedCount  int       `json:"failed_count"`
	SkippedCount int       `json:"skipped_count"`
	// WaitingCount is how many participants the step is due for but
	// holds: outside its send window, or until its A/B test is decided.
	WaitingCount int `json:"waiting_count"`
	Engagement
	// Variants counts an A/B step's emails by variant; absent otherwise.
	Variants []VariantStats `json:"variants,omitempty"`
}

// VariantStats counts the emails of one A/B variant.
type VariantStats struct {
	ID           uuid.UUID `json:"id"`
	Subject      string    `json:"subject"`
	SentCount    int       `json:"sent_count"`
	OpenedCount  int       `json:"opened_count"`
	ClickedCount int       `json:"clicked_count"`
	Winner       bool      `json:"winner"`
}

// StepContact is one completion record of a step with its contact.
type StepContact struct {
	ID           uuid.UUID `json:"id"`
	CompletedAt  time.Time `json:"completed_at"`
	ResultType   string    `json:"result_type"`
	ResultDetail string    `json:"result_detail"`
	ContactID    uuid.UUID `json:"contact_id"`
	ContactName  string    `json:"contact_name"`
	ContactEmail string    `json:"contact_email"`
}

// Page asks for one page of a list.
type Page struct {
	Limit  int
	Offset int
}

// Paged is a page of a list with the total count.
type Paged[T any] struct {
	Items []T
	Total int64
}

// normalizeTemplate trims the name and validates the whole template.
func normalizeTemplate(t *Template) error {
	t.Name = strings.TrimSpace(t.Name)
	return validate.Struct(*t)
}

// normalizeCampaign trims and validates a campaign.
func normalizeCampaign(c *Campaign) error {
	c.Name = strings.TrimSpace(c.Name)
	if err := normalizeEntryEvent(c); err != nil {
		return err
	}
	if c.Status == "" {
		_, err := ParseStatus("")
		return err
	}
	return validate.Struct(*c)
}

// normalizeStep validates a step on its own (references to other rows are
// checked by the service) and clears the fields its types do not use, so a
// step never carries a stale template, trigger or schedule value.
func normalizeStep(st *Step) error {
	st.Name = strings.TrimSpace(st.Name)
	st.SenderName = strings.TrimSpace(st.SenderName)
	st.SenderEmail = strings.TrimSpace(st.SenderEmail)
	if err := validate.Struct(*st); err != nil {
		return err
	}
	switch st.ScheduleType {
	case ScheduleImmediate:
		st.DelayDays, st.DelayHours, st.FixedDate = 0, 0, nil
	case ScheduleDelay:
		st.FixedDate = nil
	case ScheduleFixedDate:
		if st.FixedDate == nil || *st.FixedDate == "" {
			return apperr.Invalidf("`fixed_date` (YYYY-MM-DD) is required when `schedule_type` is fixed_date.")
		}
		st.DelayDays, st.DelayHours = 0, 0
	}
	if err := normalizeTiming(st); err != nil {
		return err
	}
	switch st.StepType {
	case StepEmail:
		if st.EmailTemplateID == nil {
			return apperr.Invalidf("`email_template_id` is required for email steps.")
		}
		st.TriggerCampaignID = nil
	case StepTrigger:
		if st.TriggerCampaignID == nil {
			return apperr.Invalidf("`trigger_campaign_id` is required for trigger steps.")
		}
		if *st.TriggerCampaignID == st.CampaignID {
			return apperr.Invalidf("A campaign cannot trigger itself: pick another `trigger_campaign_id`.")
		}
		st.EmailTemplateID = nil
		st.SenderName, st.SenderEmail = "", ""
	}
	return nil
}

// stepFromInput builds a new step of campaignID from a create body.
func stepFromInput(campaignID uuid.UUID, in StepInput) (Step, error) {
	st := Step{
		CampaignID: campaignID, StepType: in.StepType, Name: in.Name, Active: true,
		ScheduleType: in.ScheduleType, FixedDate: in.FixedDate, EmailTemplateID: in.EmailTemplateID,
		SenderName: in.SenderName, SenderEmail: in.SenderEmail, TriggerCampaignID: in.TriggerCampaignID,
	}
	if in.Active != nil {
		st.Active = *in.Active
	}
	if in.ScheduleType == ScheduleDelay && in.DelayDays == nil {
		return Step{}, apperr.Invalidf("`delay_days` is required when `schedule_type` is delay.")
	}
	if in.DelayDays != nil {
		st.DelayDays = *in.DelayDays
	}
	if in.DelayHours != nil {
		st.DelayHours = *in.DelayHours
	}
	if err := timingFromInput(&st, in); err != nil {
		return Step{}, err
	}
	return st, normalizeStep(&st)
}

// applyStepPatch applies the supplied fields of p to st.
func applyStepPatch(st *Step, p StepPatch) error {
	if p.empty() {
		return apperr.Invalidf("Send at least one step field to change.")
	}
	if p.Name.Null || p.Active.Null || p.ScheduleType.Null || p.DelayDays.Null || p.DelayHours.Null || p.SenderName.Null ||
		p.SenderEmail.Null || p.ABTest.Null {
		return apperr.Invalidf("Only `fixed_date`, `email_template_id`, `trigger_campaign_id`, `send_window`, `condition` and `variants` may be null.")
	}
	p.DelayHours.ApplyTo(&st.DelayHours)
	if err := applyTimingPatch(st, p); err != nil {
		return err
	}
	p.Name.ApplyTo(&st.Name)
	p.Active.ApplyTo(&st.Active)
	p.ScheduleType.ApplyTo(&st.ScheduleType)
	p.DelayDays.ApplyTo(&st.DelayDays)
	p.FixedDate.ApplyToPtr(&st.FixedDate)
	p.EmailTemplateID.ApplyToPtr(&st.EmailTemplateID)
	p.SenderName.ApplyTo(&st.SenderName)
	p.SenderEmail.ApplyTo(&st.SenderEmail)
	p.TriggerCampaignID.ApplyToPtr(&st.TriggerCampaignID)
	return normalizeStep(st)
}

// fixedDateStart is when a fixed_date step becomes due: 00:00 UTC.
func fixedDateStart(d string) (time.Time, bool) {
	t, err := time.ParseInLocation(time.DateOnly, d, time.UTC)
	return t, err == nil
}
