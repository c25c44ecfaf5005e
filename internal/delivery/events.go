package delivery

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/suppression"
)

// Kinds of applied events, as delivery_events stores them. blocked is a
// soft bounce; processed only sets the email's state.
const (
	kindProcessed    = "processed"
	kindDelivered    = "delivered"
	kindDeferred     = "deferred"
	kindBounced      = "bounced"
	kindBlocked      = "blocked"
	kindDropped      = "dropped"
	kindOpened       = "opened"
	kindClicked      = "clicked"
	kindComplained   = "complained"
	kindUnsubscribed = "unsubscribed"
)

// maxDetail caps what an event keeps of the provider's reason or URL.
const maxDetail = 1000

// providerEvent is one item of a SendGrid Event Webhook batch, as far as
// it matters here. The custom args that every campaign email carries come
// back as top-level fields.
type providerEvent struct {
	Event         string          `json:"event"`
	Email         string          `json:"email"`
	Timestamp     json.Number     `json:"timestamp"`
	SGEventID     string          `json:"sg_event_id"`
	Type          string          `json:"type"`
	Reason        string          `json:"reason"`
	Response      string          `json:"response"`
	URL           string          `json:"url"`
	MachineOpen   json.RawMessage `json:"sg_machine_open"`
	CampaignID    string          `json:"campaign_id"`
	StepID        string          `json:"step_id"`
	ParticipantID string          `json:"participant_id"`
	// TransactionalID is the custom arg of a transactional email;
	// SGMessageID the provider's id of the message ("<X-Message-Id>.<filter>").
	TransactionalID string `json:"transactional_id"`
	SGMessageID     string `json:"sg_message_id"`
}

// event is a provider event that may apply to an email.
type event struct {
	id            string // sg_event_id
	kind          string
	campaignID    uuid.UUID
	stepID        uuid.UUID
	participantID uuid.UUID
	// A transactional email's event names its message (transactionalID)
	// or only the provider's message id (messageID); campaign is false
	// for both.
	campaign        bool
	transactionalID uuid.UUID
	detail          string
	at              time.Time
	email           string             // lower-cased recipient
	suppress        suppression.Reason // "" when the event suppresses nothing
	// messageID is the provider's id of the email, when the event names
	// its email by it (SES, a bounce report, a SendGrid event of a
	// transactional email without its custom argument).
	messageID string
}

// parsed is a batch: the events that may apply (one per sg_event_id) and
// how many items were left out as repeats within the batch or as events
// that name no email or do nothing here.
type parsed struct {
	events     []event
	received   int
	duplicates int
	ignored    int
}

var errNotBatch = apperr.Invalidf("The body must be a JSON array of event objects.")

// parseBatch reads a batch. Only a body that is not a JSON array of
// objects is an error: an item that cannot be used is ignored, since
// refusing the batch would only make the provider send it again.
func parseBatch(body []byte, now time.Time) (parsed, error) {
	var items []providerEvent
	if err := json.Unmarshal(body, &items); err != nil {
		// One pass suits the batches SendGrid sends; only a batch with an
		// odd item is read again, item by item.
		return parseItems(body, now)
	}
	out := parsed{received: len(items), events: make([]event, 0, len(items))}
	seen := make(map[string]struct{}, len(items))
	for i := range items {
		out.add(items[i], nil, now, seen)
	}
	return out, nil
}

// parseItems reads a batch item by item: an object that does not read as
// an event is ignored; anything but an array of objects is an error.
func parseItems(body []byte, now time.Time) (parsed, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(body, &items); err != nil {
		return parsed{}, errNotBatch
	}
	out := parsed{received: len(items), events: make([]event, 0, len(items))}
	seen := make(map[string]struct{}, len(items))
	for _, raw := range items {
		if len(raw) == 0 || raw[0] != '{' {
			return parsed{}, errNotBatch
		}
		var pe providerEvent
		if json.Unmarshal(raw, &pe) != nil {
			out.ignored++
			continue
		}
		out.add(pe, raw, now, seen)
	}
	return out, nil
}

// add takes one item into the batch (raw, when known, names an event
// without sg_event_id).
func (out *parsed) add(pe providerEvent, raw json.RawMessage, now time.Time, seen map[string]struct{}) {
	ev, ok := classify(pe, now)
	if !ok {
		out.ignored++
		return
	}
	if ev.id == "" {
		// SendGrid always sends one; without it the item's own content
		// tells a repeat from a new event.
		if raw == nil {
			raw, _ = json.Marshal(pe)
		}
		sum := sha256.Sum256(bytes.TrimSpace(raw))
		ev.id = "sha256:" + hex.EncodeToString(sum[:])
	}
	if _, dup := seen[ev.id]; dup {
		out.duplicates++
		return
	}
	seen[ev.id] = struct{}{}
	out.events = append(out.events, ev)
}

// classify maps a provider event to what it does here; ok is false for
// events that name no campaign email or that count nowhere (machine
// opens, resubscribes, event types without meaning here).
func classify(pe providerEvent, now time.Time) (event, bool) {
	var ev event
	var cErr, sErr, pErr error
	ev.campaignID, cErr = uuid.Parse(pe.CampaignID)
	ev.stepID, sErr = uuid.Parse(pe.StepID)
	ev.participantID, pErr = uuid.Parse(pe.ParticipantID)
	ev.campaign = cErr == nil && sErr == nil && pErr == nil
	if !ev.campaign {
		if id, err := uuid.Parse(pe.TransactionalID); err == nil {
			ev.transactionalID = id
		} else if mid := strings.TrimSpace(pe.SGMessageID); mid != "" && len(mid) <= 500 {
			ev.messageID = mid
		} else {
			return ev, false
		}
	}
	ev.id = clip(pe.SGEventID, 200)
	ev.email = strings.ToLower(strings.TrimSpace(pe.Email))
	ev.at = now
	if sec, err := pe.Timestamp.Int64(); err == nil && sec > 0 {
		ev.at = time.Unix(sec, 0).UTC()
	}
	reason := pe.Reason
	if reason == "" {
		reason = pe.Response
	}
	switch pe.Event {
	case "processed":
		ev.kind = kindProcessed
	case "delivered":
		ev.kind = kindDelivered
	case "deferred":
		ev.kind, ev.detail = kindDeferred, reason
	case "bounce":
		if pe.Type == "blocked" {
			ev.kind, ev.detail = kindBlocked, reason
		} else {
			ev.kind, ev.detail, ev.suppress = kindBounced, reason, suppression.ReasonBounce
		}
	case "dropped":
		ev.kind, ev.detail = kindDropped, reason
		if droppedForCause(pe.Reason) {
			ev.suppress = suppression.ReasonDropped
		}
	case "open":
		if machineOpen(pe.MachineOpen) {
			return ev, false
		}
		ev.kind = kindOpened
	case "click":
		ev.kind, ev.detail = kindClicked, pe.URL
	case "spamreport":
		ev.kind, ev.suppress = kindComplained, suppression.ReasonComplaint
	case "unsubscribe", "group_unsubscribe":
		ev.kind, ev.suppress = kindUnsubscribed, suppression.ReasonUnsubscribe
	default:
		return ev, false
	}
	if ev.email == "" {
		ev.suppress = ""
	}
	ev.detail = clip(ev.detail, maxDetail)
	return ev, true
}

// droppedForCause reports whether a dropped event's reason names the
// address itself (SendGrid's "Bounced Address", "Invalid", "Spam
// Reporting Address", "Unsubscribed Address"), not the message.
func droppedForCause(reason string) bool {
	r := strings.ToLower(strings.TrimSpace(reason))
	for _, cause := range []string{"bounced address", "spam reporting address", "unsubscribed address", "invalid address", "invalid email"} {
		if strings.HasPrefix(r, cause) {
			return true
		}
	}
	return r == "invalid"
}

// machineOpen reads sg_machine_open, which SendGrid sends as a boolean
// (some integrations send it as a string).
func machineOpen(raw json.RawMessage) bool {
	s := strings.Trim(string(raw), `" `)
	return s == "true" || s == "1"
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
