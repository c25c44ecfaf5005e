package events

import (
	"time"

	"github.com/google/uuid"
)

// Event types of what happens to emails, subscriptions and campaign
// participants (the engagement events).
const (
	EmailSent            = "email.sent"
	EmailDelivered       = "email.delivered"
	EmailOpened          = "email.opened"
	EmailClicked         = "email.clicked"
	EmailBounced         = "email.bounced"
	EmailComplained      = "email.complained"
	EmailFailed          = "email.failed"
	ContactUnsubscribed  = "contact.unsubscribed"
	ContactSubscribed    = "contact.subscribed"
	ParticipantEnrolled  = "participant.enrolled"
	ParticipantCompleted = "participant.completed"
	ParticipantRemoved   = "participant.removed"
	SuppressionCreated   = "suppression.created"
	SuppressionLifted    = "suppression.lifted"
	EventReceived        = "event.received"
)

// Group is how the dashboard's webhook editor groups the event types.
type Group string

// Groups, in the order the editor shows them.
const (
	GroupContacts      Group = "contacts"
	GroupEmails        Group = "emails"
	GroupCampaigns     Group = "campaigns"
	GroupSubscriptions Group = "subscriptions"
	GroupTeam          Group = "team"
)

// Groups is every group, in the order the editor shows them.
var Groups = []Group{GroupContacts, GroupEmails, GroupCampaigns, GroupSubscriptions, GroupTeam}

// TypeInfo describes one event type a webhook may subscribe to.
type TypeInfo struct {
	Type    string `json:"type"`
	Group   Group  `json:"group"`
	Summary string `json:"summary"`
	// WhenWanted: written only when an active webhook of the team
	// subscribes to it (Outbox.Wanted). Types that come by the thousand
	// (contact changes, every email) are; rare team events are always
	// written.
	WhenWanted bool `json:"-"`
	// sample is the data of a test send of this type.
	sample func() any
}

// Sample is the data a test send of this type carries: the documented
// shape with made-up ids.
func (t TypeInfo) Sample() any { return t.sample() }

// Catalogue is every event type a webhook may subscribe to: the one list
// that validation, the API reference, the docs and the dashboard read.
var Catalogue = []TypeInfo{
	{ContactCreated, GroupContacts, "A contact was created (API, dashboard, import, form, CardDAV).", true, sampleContact},
	{ContactUpdated, GroupContacts, "A contact was changed, labels and preferences included.", true, sampleContact},
	{ContactDeleted, GroupContacts, "A contact was deleted or erased.", true, func() any { return map[string]any{"id": sampleID(1)} }},
	{EventReceived, GroupContacts, "A product event of a contact was received (POST /api/v1/events).", true, sampleEvent},
	{EmailSent, GroupEmails, "An email was handed to the sending provider.", true, sampleEmail(EmailSent)},
	{EmailDelivered, GroupEmails, "The provider reported the email delivered.", true, sampleEmail(EmailDelivered)},
	{EmailOpened, GroupEmails, "The email was first opened (once per email; machine opens never).", true, sampleEmail(EmailOpened)},
	{EmailClicked, GroupEmails, "A link in the email was first clicked (once per email).", true, sampleEmail(EmailClicked)},
	{EmailBounced, GroupEmails, "The email bounced, hard or soft (bounce_type).", true, sampleEmail(EmailBounced)},
	{EmailComplained, GroupEmails, "The recipient reported the email as spam.", true, sampleEmail(EmailComplained)},
	{EmailFailed, GroupEmails, "The email could not be sent (reason says why).", true, sampleEmail(EmailFailed)},
	{ParticipantEnrolled, GroupCampaigns, "A contact was enrolled in a campaign.", true, sampleParticipant("active", nil)},
	{ParticipantCompleted, GroupCampaigns, "A participant finished every step of a campaign.", true, sampleParticipant("completed", nil)},
	{ParticipantRemoved, GroupCampaigns, "A participant was taken out of a campaign (reason says why).", true, sampleParticipant("removed", ptr(RemovedAPI))},
	{ContactUnsubscribed, GroupSubscriptions, "A contact unsubscribed from all email, a campaign or a topic.", true, sampleUnsubscribed},
	{ContactSubscribed, GroupSubscriptions, "A contact subscribed: a form sign-up, a confirmed double opt-in, a topic turned on.", true, sampleSubscribed},
	{SuppressionCreated, GroupSubscriptions, "An address was suppressed: no campaign email reaches it.", true, sampleSuppression},
	{SuppressionLifted, GroupSubscriptions, "A suppression was lifted.", true, sampleSuppression},
	{MemberJoined, GroupTeam, "A person joined the team.", false, sampleMember},
	{MemberRemoved, GroupTeam, "A person was removed from the team.", false, sampleMember},
	{BookCreated, GroupTeam, "A book was created.", false, sampleBook},
	{BookDeleted, GroupTeam, "A book was deleted.", false, func() any { return map[string]any{"id": sampleID(2)} }},
}

// Info returns the catalogue entry of t.
func Info(t string) (TypeInfo, bool) {
	for _, ti := range Catalogue {
		if ti.Type == t {
			return ti, true
		}
	}
	return TypeInfo{}, false
}

func typeNames(only func(TypeInfo) bool) []string {
	var out []string
	for _, t := range Catalogue {
		if only(t) {
			out = append(out, t.Type)
		}
	}
	return out
}

// EmailData is the data of every email.* event. URL is set for
// email.clicked only, BounceType for email.bounced only, Reason for
// email.bounced, email.complained and email.failed only.
type EmailData struct {
	EmailID           uuid.UUID  `json:"email_id"`
	ContactID         *uuid.UUID `json:"contact_id"`
	Address           string     `json:"address"`
	CampaignID        *uuid.UUID `json:"campaign_id"`
	StepID            *uuid.UUID `json:"step_id"`
	ParticipantID     *uuid.UUID `json:"participant_id"`
	TransactionalID   *uuid.UUID `json:"transactional_id"`
	VariantID         *uuid.UUID `json:"variant_id"`
	ProviderMessageID *string    `json:"provider_message_id"`
	URL               *string    `json:"url,omitempty"`
	BounceType        *string    `json:"bounce_type,omitempty"`
	Reason            *string    `json:"reason,omitempty"`
	OccurredAt        time.Time  `json:"occurred_at"`
}

// Bounce types of email.bounced.
const (
	BounceHard = "hard"
	BounceSoft = "soft"
)

// BounceTypes are the values of email.bounced's bounce_type.
var BounceTypes = []string{BounceHard, BounceSoft}

// Email is one email.* event to write: its type and data.
type Email struct {
	Type string
	Data EmailData
}

// EmailEvents is the outbox events of emails of one book: every path that
// sends an email or hears back about one (campaign runs, transactional
// sends, provider feedback) builds its email.* events here.
func EmailEvents(teamID, bookID uuid.UUID, emails []Email) []Event {
	out := make([]Event, len(emails))
	book := bookID
	for i, e := range emails {
		out[i] = Event{Type: e.Type, TeamID: teamID, BookID: &book, Data: e.Data}
	}
	return out
}

// Unsubscribe scopes and sources of contact.unsubscribed.
const (
	ScopeAll      = "all"
	ScopeCampaign = "campaign"
	ScopeTopic    = "topic"

	UnsubscribedPreferencePage = "preference_page"
	UnsubscribedOneClick       = "one_click"
	UnsubscribedProvider       = "provider"
	UnsubscribedAPI            = "api"
)

// UnsubscribeScopes and UnsubscribeSources are the values of
// contact.unsubscribed's scope and source.
var (
	UnsubscribeScopes  = []string{ScopeAll, ScopeCampaign, ScopeTopic}
	UnsubscribeSources = []string{UnsubscribedPreferencePage, UnsubscribedOneClick, UnsubscribedProvider, UnsubscribedAPI}
)

// UnsubscribedData is the data of contact.unsubscribed.
type UnsubscribedData struct {
	ContactID  uuid.UUID  `json:"contact_id"`
	Address    string     `json:"address"`
	Scope      string     `json:"scope"`
	CampaignID *uuid.UUID `json:"campaign_id"`
	LabelID    *uuid.UUID `json:"label_id"`
	Source     string     `json:"source"`
	OccurredAt time.Time  `json:"occurred_at"`
}

// Sources of contact.subscribed.
const (
	SubscribedForm           = "form"
	SubscribedPreferencePage = "preference_page"
	SubscribedAPI            = "api"
	SubscribedImport         = "import"
)

// SubscribeSources are the values of contact.subscribed's source.
var SubscribeSources = []string{SubscribedForm, SubscribedPreferencePage, SubscribedAPI, SubscribedImport}

// SubscribedData is the data of contact.subscribed.
type SubscribedData struct {
	ContactID  uuid.UUID   `json:"contact_id"`
	Address    string      `json:"address"`
	FormID     *uuid.UUID  `json:"form_id"`
	LabelIDs   []uuid.UUID `json:"label_ids"`
	ConsentID  *uuid.UUID  `json:"consent_id"`
	Source     string      `json:"source"`
	OccurredAt time.Time   `json:"occurred_at"`
}

// Reasons of participant.removed.
const (
	RemovedAPI            = "api"
	RemovedUnsubscribed   = "unsubscribed"
	RemovedLeftSegment    = "left_segment"
	RemovedSuppressed     = "suppressed"
	RemovedContactDeleted = "contact_deleted"
)

// RemovedReasons are the values of participant.removed's reason.
var RemovedReasons = []string{RemovedAPI, RemovedUnsubscribed, RemovedLeftSegment, RemovedSuppressed, RemovedContactDeleted}

// ParticipantData is the data of participant.* events; Reason is null
// but for participant.removed.
type ParticipantData struct {
	ParticipantID uuid.UUID `json:"participant_id"`
	CampaignID    uuid.UUID `json:"campaign_id"`
	ContactID     uuid.UUID `json:"contact_id"`
	Status        string    `json:"status"`
	Reason        *string   `json:"reason"`
	OccurredAt    time.Time `json:"occurred_at"`
}

// SuppressionData is the data of suppression.* events. Address is null
// for the suppression of an erased person (only its hash is kept).
type SuppressionData struct {
	SuppressionID uuid.UUID `json:"suppression_id"`
	Address       *string   `json:"address"`
	Reason        string    `json:"reason"`
	Source        string    `json:"source"`
	OccurredAt    time.Time `json:"occurred_at"`
}

func ptr[T any](v T) *T { return &v }

// sampleID is a fixed made-up id, so samples read the same on every send.
func sampleID(n byte) uuid.UUID {
	return uuid.UUID{0x01, 0x93, 0x5b, 0x2e, 0x7c, 0x40, 0x70, 0x00, 0x80, 0x00, 0, 0, 0, 0, 0, n}
}

var sampleAt = time.Date(2026, 3, 2, 9, 15, 0, 0, time.UTC)

func sampleEmail(typ string) func() any {
	return func() any {
		d := EmailData{
			EmailID: sampleID(10), ContactID: ptr(sampleID(1)), Address: "ada@example.com",
			CampaignID: ptr(sampleID(11)), StepID: ptr(sampleID(12)), ParticipantID: ptr(sampleID(13)),
			ProviderMessageID: ptr("sample-message-id"), OccurredAt: sampleAt,
		}
		switch typ {
		case EmailClicked:
			d.URL = ptr("https://example.com/pricing")
		case EmailBounced:
			d.BounceType, d.Reason = ptr(BounceHard), ptr("550 5.1.1 The email account does not exist.")
		case EmailComplained:
			d.Reason = ptr("spamreport")
		case EmailFailed:
			d.Reason = ptr("address suppressed (bounce)")
		}
		return d
	}
}

func sampleParticipant(status string, reason *string) func() any {
	return func() any {
		return ParticipantData{ParticipantID: sampleID(13), CampaignID: sampleID(11), ContactID: sampleID(1),
			Status: status, Reason: reason, OccurredAt: sampleAt}
	}
}

func sampleUnsubscribed() any {
	return UnsubscribedData{ContactID: sampleID(1), Address: "ada@example.com", Scope: ScopeAll,
		Source: UnsubscribedPreferencePage, OccurredAt: sampleAt}
}

func sampleSubscribed() any {
	return SubscribedData{ContactID: sampleID(1), Address: "ada@example.com", FormID: ptr(sampleID(14)),
		LabelIDs: []uuid.UUID{sampleID(15)}, ConsentID: ptr(sampleID(16)), Source: SubscribedForm, OccurredAt: sampleAt}
}

func sampleSuppression() any {
	return SuppressionData{SuppressionID: sampleID(17), Address: ptr("ada@example.com"), Reason: "bounce",
		Source: "provider", OccurredAt: sampleAt}
}

func sampleEvent() any {
	return map[string]any{
		"id": sampleID(18), "book_id": sampleID(2), "contact_id": sampleID(1), "name": "order.paid",
		"properties": map[string]any{"order_id": "A-1001", "total": 42.5}, "occurred_at": sampleAt, "created_at": sampleAt,
	}
}

func sampleContact() any {
	return map[string]any{
		"id": sampleID(1), "book_id": sampleID(2), "first_name": "Ada", "last_name": "Lovelace",
		"emails": []map[string]any{{"address": "ada@example.com", "label": "work", "primary": true}},
		"phones": []map[string]any{}, "created_at": sampleAt, "updated_at": sampleAt,
	}
}

func sampleMember() any {
	return map[string]any{"user_id": sampleID(3), "email": "ada@example.com", "name": "Ada Lovelace", "role": "member"}
}

func sampleBook() any {
	return map[string]any{"id": sampleID(2), "team_id": sampleID(4), "name": "Customers", "created_at": sampleAt}
}
