package migrations

// Owners names, for every table and view the migrations create, the one
// package under internal/ that owns it: the only package whose statements
// name it. Other packages reach it through the owner's exported functions,
// or, for a statement that must join it for speed, through a read model the
// owner declares (a view listed here under the owner, or an exported SQL
// fragment in the owner's package). TestEveryTableHasAnOwner fails on a
// table or view of the migrations missing here, TestStatementsNameOwnTables
// on a statement that names another package's table.
//
// A new table is one line here, in its owner's group.
var Owners = map[string]string{
	// accounts: people, teams and how they sign in.
	"users":           "accounts",
	"teams":           "accounts",
	"team_members":    "accounts",
	"sessions":        "accounts",
	"api_keys":        "accounts",
	"invitations":     "accounts",
	"password_resets": "accounts",
	"auth_throttles":  "accounts",
	"mfa_challenges":  "accounts",
	"recovery_codes":  "accounts",
	"app_passwords":   "accounts",
	"sso_configs":     "accounts",
	"sso_domains":     "accounts",
	"sso_states":      "accounts",
	"actor_names":     "accounts", // view

	"account_emails": "accountmail",

	"audit_log": "audit",

	"billing_events": "billing",

	"books":               "books",
	"book_contact_counts": "books",
	"labels":              "books",
	"field_definitions":   "books",
	"book_teams":          "books", // view
	"label_refs":          "books", // view
	"field_keys":          "books", // view

	"contacts":              "contacts",
	"contact_emails":        "contacts",
	"contact_field_values":  "contacts",
	"contact_labels":        "contacts",
	"contact_records":       "contacts", // view
	"contact_custom_values": "contacts", // view
	"contact_label_members": "contacts", // view
	"contact_addresses":     "contacts", // view
	"contact_tombstones":    "contacts",
	"contact_sync_horizons": "contacts",
	"contact_versions":      "contacts",

	"campaigns":                    "campaigns",
	"campaign_steps":               "campaigns",
	"campaign_participants":        "campaigns",
	"campaign_step_completions":    "campaigns",
	"campaign_claims":              "campaigns",
	"campaign_images":              "campaigns",
	"email_templates":              "campaigns",
	"email_settings":               "campaigns",
	"interactions":                 "campaigns",
	"campaign_email_sends":         "campaigns", // view
	"campaign_participations":      "campaigns", // view
	"campaign_email_recipients":    "campaigns", // view
	"campaign_email_messages":      "campaigns",
	"campaign_email_message_ids":   "campaigns", // view
	"campaign_active_participants": "campaigns", // view

	"delivery_events":        "delivery",
	"email_deliveries":       "delivery",
	"delivery_step_counts":   "delivery",
	"delivery_daily_counts":  "delivery",
	"delivery_event_records": "delivery", // view

	"events":        "events",
	"event_queue":   "events",
	"event_records": "events", // view

	"forms":            "forms",
	"form_submissions": "forms",
	"form_counts":      "forms",
	"form_post_counts": "forms",
	"consents":         "forms",

	"mailer_send_slots": "mailer",

	"idempotency_keys": "idempotency",

	"rate_limit_counters": "ratelimit",

	"segments": "segments",

	"tracked_events":        "tracking",
	"tracked_event_records": "tracking", // view

	"transactional_messages":        "transactional",
	"transactional_events":          "transactional",
	"transactional_message_records": "transactional", // view
	"transactional_event_records":   "transactional", // view

	"suppressions": "suppression",

	"imports":      "transfer",
	"import_files": "transfer",

	"webhooks":           "webhooks",
	"webhook_deliveries": "webhooks",
	"webhook_attempts":   "webhooks",
	"webhook_rate_slots": "webhooks",
}
