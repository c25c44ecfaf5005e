package httpapi_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/billing"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/forms"
	"github.com/contactbook/contactbook/internal/httpapi/openapi"
	"github.com/contactbook/contactbook/internal/segments"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/transactional"
	"github.com/contactbook/contactbook/internal/transfer"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// closedSet names the Go list an `enum` of the document must equal: the
// places are the enum's location (see enumPlaces), matched as a regular
// expression from its start to its end.
type closedSet struct {
	places string
	values []string
}

// closedSets maps every enum of the document to the one Go list of its
// values. An enum that none of them matches fails the test, so a new enum
// of the document comes with its list here.
var closedSets = []closedSet{
	{`schemas/ErrorCode`, enum.Strings(apperr.Codes)},
	{`schemas/Role`, auth.RoleName("").OneOf()},
	{`schemas/Team\.campaign_addon`, enum.Strings(accounts.AddonStates)},
	{`(schemas/ApiKey|POST /api/teams/\{team_id\}/api-keys body)\.scope`, enum.Strings(auth.KeyScopes)},
	{`(schemas/FieldDefinition|POST /api/books/\{id\}/fields body)\.type`, enum.Strings(books.FieldTypes)},
	{`schemas/ContactEmail\.label`, enum.Strings(contacts.EmailLabels)},
	{`schemas/ContactPhone\.label`, enum.Strings(contacts.PhoneLabels)},
	{`schemas/ContactAddress\.label`, enum.Strings(contacts.AddressLabels)},
	{`schemas/ContactSocial\.label`, enum.Strings(contacts.SocialLabels)},
	{`GET /api(/v1)?/contacts \?sort`, contacts.Sorts},
	{`schemas/CampaignStatus`, enum.Strings(campaigns.Statuses)},
	{`schemas/(EmailProvider|EmailSettingsInput\.provider)`, enum.Strings(campaigns.Providers)},
	{`schemas/(SMTPSecurity|EmailSettingsInput\.smtp_security)`, enum.Strings(campaigns.SMTPSecurities)},
	{`schemas/(Step|StepCreate|HistoryItem)\.step_type`, enum.Strings(campaigns.StepTypes)},
	{`schemas/(Step|StepCreate|StepPatch)\.schedule_type`, enum.Strings(campaigns.ScheduleTypes)},
	{`schemas/(Participant\.status|ContactCampaign\.participant_status|ParticipantEventData\.status)`, enum.Strings(campaigns.ParticipantStatuses)},
	{`schemas/(HistoryItem|StepContact)\.result_type`, campaigns.Results},
	{`GET /api/campaign-step-contacts/\{id\}/\{sid\} \?result`, enum.Strings(campaigns.StepContactFilters)},
	{`(schemas/(UnsubscribeForm|UnsubscribeResult|UnsubscribeJSON)\.scope|POST /api/unsubscribe/confirm \?scope)`, enum.Strings(campaigns.UnsubscribeScopes)},
	{`schemas/SendWindow\.days\[\]`, enum.Strings(campaigns.Weekdays)},
	{`schemas/Condition\.if`, enum.Strings(campaigns.ConditionIfs)},
	{`schemas/(ABTest|ABTestInput)\.metric`, enum.Strings(campaigns.Metrics)},
	{`schemas/EventType`, events.Types},
	{`schemas/DeliveredEventType`, events.DeliveredTypes},
	{`schemas/WebhookEventTypeInfo\.group`, enum.Strings(events.Groups)},
	{`schemas/EmailEventData\.bounce_type`, events.BounceTypes},
	{`schemas/UnsubscribedEventData\.scope`, events.UnsubscribeScopes},
	{`schemas/UnsubscribedEventData\.source`, events.UnsubscribeSources},
	{`schemas/SubscribedEventData\.source`, events.SubscribeSources},
	{`schemas/CheckoutInput\.plan`, enum.Strings(billing.Plans)},
	{`schemas/CheckoutInput\.currency`, enum.Strings(billing.Currencies)},
	{`schemas/PaymentWebhookResult\.outcome`, billing.Outcomes},
	{`(schemas/(Suppression|SuppressionInput)\.reason|GET /api(/v1|/books/\{id\})?/suppressions(/export)? \?reason)`, enum.Strings(suppression.Reasons)},
	{`schemas/Suppression\.source`, enum.Strings(suppression.Sources)},
	{`schemas/Activity\.type`, delivery.ActivityTypes},
	{`schemas/TransactionalStatus`, enum.Strings(transactional.Statuses)},
	{`schemas/Import\.status`, transfer.Statuses},
	{`(schemas/(Import|ImportUpload|ImportPreview)\.format|GET /api(/v1)?(/books/\{id\}|/contacts)/export \?format)`, enum.Strings(transfer.Formats)},
	{`schemas/(Import|ImportUpload)\.mode`, enum.Strings(transfer.Modes)},
	{`schemas/SegmentRule\.op`, enum.Strings(segments.Ops)},
	{`schemas/AuditEntry\.actor\.type`, enum.Strings(audit.ActorTypes)},
	{`schemas/Consent\.method`, enum.Strings(forms.Methods)},
	{`schemas/SubmissionForm\.consent`, forms.ConsentTicked},
	{`(schemas/SSOSettings|PUT /api/teams/\{team_id\}/sso body)\.default_role`, accounts.SSODefaultRoles},
}

// fixedValues are enums of one value that no set stands behind: a
// constant of a protocol (RFC 8058's List-Unsubscribe=One-Click, the
// probes' answers, the cookie-session switch) or a webhook body's own event
// type, which must be a delivered event type.
var fixedValues = []closedSet{
	{`schemas/UnsubscribeForm\.List-Unsubscribe`, []string{"One-Click"}},
	{`schemas/Health\.status`, []string{"ok"}},
	{`schemas/Ready\.status`, []string{"ready"}},
	{`parameters/SessionMode`, []string{"cookie"}},
	{`webhook [a-z.]+ body\.event`, events.DeliveredTypes},
}

// enumPlace is one enum of the document and where it is, written short:
// "schemas/Step.schedule_type", "GET /api/contacts ?sort",
// "POST /api/books/{id}/fields body.type", "webhook book.created body.event".
type enumPlace struct {
	place  string
	values []string
}

// enumPlaces walks the document and returns every enum in it.
func enumPlaces(t *testing.T) []enumPlace {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openapi.Document(), &doc); err != nil {
		t.Fatalf("document: %v", err)
	}
	var out []enumPlace
	var walk func(place string, v any)
	walk = func(place string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if e, ok := v["enum"].([]any); ok {
				values := make([]string, len(e))
				for i, x := range e {
					s, ok := x.(string)
					if !ok {
						t.Errorf("%s: enum value %v is not a string", place, x)
					}
					values[i] = s
				}
				out = append(out, enumPlace{place, values})
			}
			for _, k := range sortedKeys(v) {
				switch k {
				case "enum", "examples", "example":
				case "properties":
					for _, name := range sortedKeys(v[k].(map[string]any)) {
						walk(place+"."+name, v[k].(map[string]any)[name])
					}
				case "items":
					walk(place+"[]", v[k])
				case "schema", "allOf", "oneOf", "anyOf", "content", "requestBody", "application/json",
					"application/x-www-form-urlencoded", "multipart/form-data", "responses":
					walk(place, v[k])
				default:
					if _, isMap := v[k].(map[string]any); isMap && isStatusOrMediaType(k) {
						walk(place, v[k])
					}
				}
			}
		case []any:
			for _, x := range v {
				walk(place, x)
			}
		}
	}
	for name, s := range doc["components"].(map[string]any)["schemas"].(map[string]any) {
		walk("schemas/"+name, s)
	}
	for name, p := range doc["components"].(map[string]any)["parameters"].(map[string]any) {
		walk("parameters/"+name, p.(map[string]any)["schema"])
	}
	operations := func(prefix string, items map[string]any) {
		for path, item := range items {
			for method, op := range item.(map[string]any) {
				op, ok := op.(map[string]any)
				if !ok {
					continue
				}
				at := prefix + strings.ToUpper(method) + " " + path
				if prefix != "" {
					at = prefix + path
				}
				for _, p := range asSlice(op["parameters"]) {
					p := p.(map[string]any)
					if name, ok := p["name"].(string); ok {
						walk(at+" ?"+name, p["schema"])
					}
				}
				if body, ok := op["requestBody"]; ok {
					walk(at+" body", body)
				}
			}
		}
	}
	operations("", doc["paths"].(map[string]any))
	operations("webhook ", doc["webhooks"].(map[string]any))
	return out
}

// isStatusOrMediaType tells the keys under which a schema sits one level
// down: a response status ("200") or a media type ("text/csv").
func isStatusOrMediaType(k string) bool {
	return strings.Contains(k, "/") || (len(k) == 3 && k[0] >= '1' && k[0] <= '5')
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestEnumsAreTheGoLists fails when an enum of the API document differs
// from the Go list its values come from (same values, same order), or when
// an enum has no Go list: the document, the validation and the dashboard's
// options (generated from the document) cannot drift from the code.
func TestEnumsAreTheGoLists(t *testing.T) {
	t.Parallel()
	places := enumPlaces(t)
	if len(places) < len(closedSets) {
		t.Fatalf("found %d enums in the document, fewer than the %d sets listed: the walk misses some", len(places), len(closedSets))
	}
	used := make([]bool, len(closedSets))
	for _, p := range places {
		matched := false
		for i, set := range closedSets {
			if regexp.MustCompile(`^(` + set.places + `)$`).MatchString(p.place) {
				matched, used[i] = true, true
				if !slices.Equal(p.values, set.values) {
					t.Errorf("%s: enum %v, the Go list is %v", p.place, p.values, set.values)
				}
			}
		}
		for _, fixed := range fixedValues {
			if regexp.MustCompile(`^(` + fixed.places + `)$`).MatchString(p.place) {
				matched = true
				for _, v := range p.values {
					if !slices.Contains(fixed.values, v) {
						t.Errorf("%s: enum value %q is none of %v", p.place, v, fixed.values)
					}
				}
			}
		}
		if !matched {
			t.Errorf("%s: enum %v has no Go list in closedSets", p.place, p.values)
		}
	}
	for i, set := range closedSets {
		if !used[i] {
			t.Errorf("closedSets entry %q matches no enum of the document", set.places)
		}
	}
}

// storedSets maps the CHECK constraints that close a column to a set
// ("table.column") to the Go list of the set.
var storedSets = map[string][]string{
	"teams.campaign_addon":             enum.Strings(accounts.AddonStates),
	"team_members.role":                auth.RoleName("").OneOf(),
	"invitations.role":                 auth.RoleName("").OneOf(),
	"api_keys.scope":                   enum.Strings(auth.KeyScopes),
	"field_definitions.type":           enum.Strings(books.FieldTypes),
	"campaigns.status":                 enum.Strings(campaigns.Statuses),
	"email_settings.provider":          enum.Strings(campaigns.Providers),
	"email_settings.smtp_security":     enum.Strings(campaigns.SMTPSecurities),
	"campaign_steps.step_type":         enum.Strings(campaigns.StepTypes),
	"campaign_steps.schedule_type":     enum.Strings(campaigns.ScheduleTypes),
	"campaign_steps.condition_if":      enum.Strings(campaigns.ConditionIfs),
	"campaign_participants.status":     enum.Strings(campaigns.ParticipantStatuses),
	"campaign_step_completions.result": campaigns.Results,
	"suppressions.reason":              enum.Strings(suppression.Reasons),
	"suppressions.source":              enum.Strings(suppression.Sources),
	"imports.status":                   transfer.Statuses,
	"imports.format":                   enum.Strings(transfer.Formats),
	"imports.mode":                     enum.Strings(transfer.Modes),
	"audit_log.actor_type":             enum.Strings(audit.ActorTypes),
	"consents.method":                  enum.Strings(forms.Methods),
	"webhook_deliveries.status":        webhooks.DeliveryStatuses,
}

var checkValue = regexp.MustCompile(`'([^']*)'::text`)

// TestStoredSetsAreTheGoLists fails when a column's CHECK constraint
// allows other values than the Go list of its set: a value added in Go
// alone would be refused by the database, one added in a migration alone
// could be stored and never read.
func TestStoredSetsAreTheGoLists(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, WithoutJobs: true}).Env
	rows, err := env.App.Pool.Query(context.Background(), `
		SELECT c.conrelid::regclass::text, a.attname, pg_get_constraintdef(c.oid)
		FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
		WHERE c.contype = 'c' AND cardinality(c.conkey) = 1 AND pg_get_constraintdef(c.oid) LIKE '%ANY (ARRAY[%'`)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{}
	for rows.Next() {
		var table, column, def string
		if err := rows.Scan(&table, &column, &def); err != nil {
			t.Fatal(err)
		}
		var values []string
		for _, m := range checkValue.FindAllStringSubmatch(def, -1) {
			values = append(values, m[1])
		}
		found[table+"."+column] = values
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for col, want := range storedSets {
		got, ok := found[col]
		if !ok {
			t.Errorf("%s: no CHECK constraint lists its values (found %v)", col, sortedKeys(anyMap(found)))
			continue
		}
		g, w := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
		if !slices.Equal(g, w) {
			t.Errorf("%s: the database allows %v, the Go list is %v", col, got, want)
		}
	}
}

func anyMap(m map[string][]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
