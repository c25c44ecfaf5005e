package campaigns

// The closed sets of the campaigns domain: each is a type with its values
// listed once, the one list the API document, the validation (the enum
// tag reads OneOf) and the dashboard's options are checked against.

import (
	"github.com/contactbook/contactbook/internal/enum"
)

// Status is a campaign's status.
type Status string

// Campaign statuses.
const (
	StatusDraft    Status = "draft"
	StatusActive   Status = "active"
	StatusPaused   Status = "paused"
	StatusArchived Status = "archived"
)

// Statuses is every campaign status, in the order the API documents them.
var Statuses = []Status{StatusDraft, StatusActive, StatusPaused, StatusArchived}

// OneOf lists the statuses for the `enum` validation tag.
func (Status) OneOf() []string { return enum.Strings(Statuses) }

// ParseStatus reads a campaign's `status`.
func ParseStatus(s string) (Status, error) {
	return enum.Parse(Statuses, "`status`", s)
}

// StepType is what a step does when it falls due.
type StepType string

// Step types.
const (
	StepEmail   StepType = "email"
	StepTrigger StepType = "trigger"
)

// StepTypes is every step type.
var StepTypes = []StepType{StepEmail, StepTrigger}

// OneOf lists the step types for the `enum` validation tag.
func (StepType) OneOf() []string { return enum.Strings(StepTypes) }

// ParseStepType reads a step's `step_type`.
func ParseStepType(s string) (StepType, error) {
	return enum.Parse(StepTypes, "`step_type`", s)
}

// ScheduleType is how a step's due time is computed.
type ScheduleType string

// Schedule types.
const (
	ScheduleImmediate ScheduleType = "immediate"
	ScheduleDelay     ScheduleType = "delay"
	ScheduleFixedDate ScheduleType = "fixed_date"
)

// ScheduleTypes is every schedule type.
var ScheduleTypes = []ScheduleType{ScheduleImmediate, ScheduleDelay, ScheduleFixedDate}

// OneOf lists the schedule types for the `enum` validation tag.
func (ScheduleType) OneOf() []string { return enum.Strings(ScheduleTypes) }

// ParseScheduleType reads a step's `schedule_type`.
func ParseScheduleType(s string) (ScheduleType, error) {
	return enum.Parse(ScheduleTypes, "`schedule_type`", s)
}

// ParticipantStatus is where a participant stands in its campaign.
type ParticipantStatus string

// Participant statuses.
const (
	ParticipantActive    ParticipantStatus = "active"
	ParticipantCompleted ParticipantStatus = "completed"
	ParticipantRemoved   ParticipantStatus = "removed"
)

// ParticipantStatuses is every participant status.
var ParticipantStatuses = []ParticipantStatus{ParticipantActive, ParticipantCompleted, ParticipantRemoved}

// ParseParticipantStatus reads a participant status.
func ParseParticipantStatus(s string) (ParticipantStatus, error) {
	return enum.Parse(ParticipantStatuses, "`status`", s)
}

// Completion results.
const (
	ResultSuccess = "success"
	ResultFailed  = "failed"
	ResultSkipped = "skipped" // the step's condition did not hold
)

// Results is every result a step's completion records.
var Results = []string{ResultSuccess, ResultFailed, ResultSkipped}

// StepContactFilters is what a step's contacts can be listed by: a
// completion result, or what the provider reported of its email since.
var StepContactFilters = []StepContactFilter{
	ResultSuccess, ResultFailed, ResultSkipped,
	"delivered", "opened", "clicked", "bounced", "complained", "unsubscribed",
}

// StepContactFilter is what a step's contacts are listed by.
type StepContactFilter string

// ParseStepContactFilter reads the `result` query parameter of a step's
// contacts ("" lists them all).
func ParseStepContactFilter(s string) (StepContactFilter, error) {
	if s == "" {
		return "", nil
	}
	return enum.Parse(StepContactFilters, "The query parameter result", s)
}
