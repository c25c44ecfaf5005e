package segments

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// testCampaigns answers the campaign questions from the campaigns table
// (campaigns.Catalog does in the service; this package cannot import it).
type testCampaigns struct{}

func (testCampaigns) InBook(ctx context.Context, db postgres.DB, bookID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	rows, _ := db.Query(ctx, `SELECT id FROM campaigns WHERE book_id = $1 AND id = ANY($2)`, bookID, ids)
	found, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	out := map[uuid.UUID]bool{}
	for _, id := range found {
		out[id] = true
	}
	return out, err
}

func (testCampaigns) AudienceOf(ctx context.Context, db postgres.DB, segmentID uuid.UUID) (string, error) {
	var name string
	err := db.QueryRow(ctx, `SELECT COALESCE(max(name), '') FROM campaigns WHERE audience_segment_id = $1`, segmentID).Scan(&name)
	return name, err
}

// fixture is a book whose contacts differ in every way a rule can test,
// and a contact of another book that no rule may ever reach.
type fixture struct {
	pool               postgres.Pool
	svc                *Service
	bookID, otherBook  uuid.UUID
	vip, lead, foreign uuid.UUID // labels (foreign: of the other book)
	campA, campB       uuid.UUID
	otherCampaign      uuid.UUID
	now                time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	f := &fixture{pool: pool, now: time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)}
	f.svc = NewService(Deps{DB: postgres.Wrap(pool), Books: books.NewService(postgres.Wrap(pool), nil, nil), Campaigns: testCampaigns{}, Now: func() time.Time { return f.now }})
	ids := map[string]uuid.UUID{}
	q := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, n := range []string{"team", "book", "other", "vip", "lead", "foreign", "fnum", "ftext", "fdate", "furl", "campA", "campB", "campX",
		"stepA", "ada", "bob", "cy", "dee", "eve", "pAda", "pBob", "pCy"} {
		ids[n] = uuid.New()
	}
	f.bookID, f.otherBook, f.vip, f.lead, f.foreign = ids["book"], ids["other"], ids["vip"], ids["lead"], ids["foreign"]
	f.campA, f.campB, f.otherCampaign = ids["campA"], ids["campB"], ids["campX"]
	q(`INSERT INTO teams (id, name) VALUES ($1, 't')`, ids["team"])
	q(`INSERT INTO books (id, team_id, name, slug) VALUES ($1, $3, 'b', 'b'), ($2, $3, 'o', 'o')`, ids["book"], ids["other"], ids["team"])
	q(`INSERT INTO labels (id, book_id, name) VALUES ($1, $3, 'VIP'), ($2, $3, 'Lead'), ($4, $5, 'Foreign')`,
		ids["vip"], ids["lead"], ids["book"], ids["foreign"], ids["other"])
	q(`INSERT INTO field_definitions (id, book_id, key, name, type) VALUES
		($1, $5, 'score', 'Score', 'number'), ($2, $5, 'tier', 'Tier', 'text'), ($3, $5, 'since', 'Since', 'date'), ($4, $5, 'site', 'Site', 'url')`,
		ids["fnum"], ids["ftext"], ids["fdate"], ids["furl"], ids["book"])
	contact := func(id uuid.UUID, book uuid.UUID, first, company, emails, phones string, birthday *string, starred bool, suppressed bool, created time.Time) {
		var supp *time.Time
		if suppressed {
			supp = &f.now
		}
		q(`INSERT INTO contacts (id, book_id, first_name, company, job_title, notes, website, emails, phones, birthday, starred, suppressed_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`,
			id, book, first, company, first+" job", "notes of "+first+" 100%", "", emails, phones, birthday, starred, supp, created)
	}
	bday := "1815-12-10"
	contact(ids["ada"], ids["book"], "Ada", "Acme Corp", `[{"address":"ada@acme.test","label":"work"}]`, `[{"number":"+44 1234","label":"work"}]`, &bday, true, false, f.now.AddDate(-6, 0, 0))
	contact(ids["bob"], ids["book"], "Bob", "", `[{"address":"bob@x.test","label":"work"},{"address":"Bob2@Y.test","label":"other"}]`, `[]`, nil, false, true, f.now.AddDate(0, 0, -40))
	contact(ids["cy"], ids["book"], "Cy", "acme_under", `[]`, `[]`, nil, false, false, f.now.AddDate(0, 0, -1))
	contact(ids["dee"], ids["book"], "Dee", "Beta", `[]`, `[]`, nil, false, false, f.now)
	contact(ids["eve"], ids["other"], "Eve", "Acme Corp", `[{"address":"eve@acme.test","label":"work"}]`, `[]`, &bday, true, false, f.now)
	q(`UPDATE contacts SET website = 'https://ada.example' WHERE id = $1`, ids["ada"])
	q(`INSERT INTO contact_labels (contact_id, label_id) VALUES ($1, $3), ($2, $4), ($5, $3), ($5, $4), ($6, $7)`,
		ids["ada"], ids["bob"], ids["vip"], ids["lead"], ids["cy"], ids["eve"], ids["foreign"])
	q(`INSERT INTO contact_field_values (contact_id, field_id, value) VALUES
		($1, $4, '42'), ($2, $4, '7'), ($3, $4, 'not a number'),
		($1, $5, 'Gold'), ($2, $5, 'silver'),
		($1, $6, '2024-01-15'), ($2, $6, '2026-06-10'),
		($1, $7, 'https://acme.test/ada')`,
		ids["ada"], ids["bob"], ids["cy"], ids["fnum"], ids["ftext"], ids["fdate"], ids["furl"])
	q(`INSERT INTO campaigns (id, book_id, name, status) VALUES ($1, $4, 'A', 'active'), ($2, $4, 'B', 'active'), ($3, $5, 'X', 'active')`,
		ids["campA"], ids["campB"], ids["campX"], ids["book"], ids["other"])
	q(`INSERT INTO campaign_steps (id, campaign_id, step_type, name, sort_order, schedule_type) VALUES ($1, $2, 'email', 's', 0, 'immediate')`,
		ids["stepA"], ids["campA"])
	q(`INSERT INTO campaign_participants (id, campaign_id, contact_id, status, enrolled_at) VALUES
		($1, $4, $5, 'active', $8), ($2, $4, $6, 'removed', $8), ($3, $9, $7, 'completed', $8)`,
		ids["pAda"], ids["pBob"], ids["pCy"], ids["campA"], ids["ada"], ids["bob"], ids["cy"], f.now, ids["campB"])
	q(`INSERT INTO campaign_step_completions (step_id, participant_id, campaign_id, result, completed_at) VALUES ($1, $2, $3, 'success', $4)`,
		ids["stepA"], ids["pAda"], ids["campA"], f.now.AddDate(0, 0, -3))
	event := func(contact, campaign, participant uuid.UUID, kind string, at time.Time) {
		q(`INSERT INTO delivery_events (book_id, sg_event_id, contact_id, campaign_id, step_id, participant_id, kind, occurred_at, received_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`, ids["book"], uuid.NewString(), contact, campaign, ids["stepA"], participant, kind, at)
	}
	event(ids["ada"], ids["campA"], ids["pAda"], "opened", f.now.AddDate(0, 0, -5))
	event(ids["ada"], ids["campA"], ids["pAda"], "delivered", f.now.AddDate(0, 0, -5))
	event(ids["bob"], ids["campA"], ids["pBob"], "opened", f.now.AddDate(0, 0, -40))
	event(ids["bob"], ids["campB"], ids["pBob"], "clicked", f.now.AddDate(0, 0, -2))
	event(ids["cy"], ids["campB"], ids["pCy"], "bounced", f.now.AddDate(0, 0, -1))
	return f
}

// members evaluates a rule against the fixture's book and returns the
// first names of the members, sorted.
func (f *fixture) members(t *testing.T, rule string) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	r, err := parse(t, rule)
	if err != nil {
		return nil, err
	}
	p, err := f.svc.compile(ctx, f.bookID, r, false, "`rule`")
	if err != nil {
		return nil, err
	}
	var names []string
	err = postgres.InTx(ctx, f.pool, func(tx *postgres.Tx) error {
		return p.Within(ctx, tx, func() error {
			where, args := p.Where("c", []any{f.bookID})
			rows, _ := tx.Query(ctx, `SELECT c.first_name FROM contacts c WHERE c.book_id = $1 AND `+where+` ORDER BY 1`, args...)
			names, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
	})
	return names, err
}

func TestEveryFieldAndOp(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		rule string
		want string // first names, comma-separated, sorted
	}{
		// Groups.
		{`{"all":[]}`, "Ada,Bob,Cy,Dee"},
		{`{"any":[]}`, ""},
		{`{"not":{"field":"first_name","op":"eq","value":"ada"}}`, "Bob,Cy,Dee"},
		{`{"any":[{"field":"first_name","op":"eq","value":"Bob"},{"field":"starred","op":"eq","value":true}]}`, "Ada,Bob"},
		// Text: case-insensitive, LIKE characters literal, negatives include unset.
		{`{"field":"company","op":"eq","value":"ACME CORP"}`, "Ada"},
		{`{"field":"company","op":"neq","value":"Acme Corp"}`, "Bob,Cy,Dee"},
		{`{"field":"company","op":"contains","value":"acme"}`, "Ada,Cy"},
		{`{"field":"company","op":"contains","value":"e_u"}`, "Cy"},
		{`{"field":"company","op":"contains","value":"%"}`, ""},
		{`{"field":"notes","op":"contains","value":"100%"}`, "Ada,Bob,Cy,Dee"},
		{`{"field":"company","op":"not_contains","value":"acme"}`, "Bob,Dee"},
		{`{"field":"company","op":"starts_with","value":"ac"}`, "Ada,Cy"},
		{`{"field":"company","op":"ends_with","value":"TA"}`, "Dee"},
		// Three characters or more also narrow through the search text;
		// the answer is the same.
		{`{"field":"company","op":"starts_with","value":"ACM"}`, "Ada,Cy"},
		{`{"field":"company","op":"ends_with","value":"_UNDER"}`, "Cy"},
		{`{"field":"company","op":"ends_with","value":"corp"}`, "Ada"},
		{`{"field":"first_name","op":"contains","value":"ada acme"}`, ""},
		{`{"not":{"field":"company","op":"contains","value":"cme c"}}`, "Bob,Cy,Dee"},
		{`{"field":"company","op":"is_set"}`, "Ada,Cy,Dee"},
		{`{"field":"company","op":"is_not_set"}`, "Bob"},
		{`{"field":"job_title","op":"starts_with","value":"cy "}`, "Cy"},
		{`{"field":"website","op":"is_set"}`, "Ada"},
		{`{"field":"last_name","op":"is_not_set"}`, "Ada,Bob,Cy,Dee"},
		{`{"field":"first_name","op":"contains","value":".*"}`, ""},
		// Email and phone: any address or number.
		{`{"field":"email","op":"eq","value":"BOB2@y.test"}`, "Bob"},
		{`{"field":"email","op":"ends_with","value":"acme.test"}`, "Ada"},
		{`{"field":"email","op":"neq","value":"bob@x.test"}`, "Ada,Cy,Dee"},
		{`{"field":"email","op":"is_not_set"}`, "Cy,Dee"},
		{`{"field":"phone","op":"contains","value":"1234"}`, "Ada"},
		{`{"field":"phone","op":"is_set"}`, "Ada"},
		// Custom fields of each type.
		{`{"field":"custom.tier","op":"eq","value":"gold"}`, "Ada"},
		{`{"field":"custom.tier","op":"neq","value":"gold"}`, "Bob,Cy,Dee"},
		{`{"field":"custom.site","op":"contains","value":"acme.test"}`, "Ada"},
		{`{"field":"custom.score","op":"gt","value":10}`, "Ada"},
		{`{"field":"custom.score","op":"lte","value":7}`, "Bob"},
		{`{"field":"custom.score","op":"eq","value":42}`, "Ada"},
		{`{"field":"custom.score","op":"neq","value":42}`, "Bob,Cy,Dee"},
		{`{"field":"custom.score","op":"is_set"}`, "Ada,Bob,Cy"},
		{`{"field":"custom.since","op":"before","value":"2025-01-01"}`, "Ada"},
		{`{"field":"custom.since","op":"after","value":"2024-01-15"}`, "Bob"},
		{`{"field":"custom.since","op":"within_last_days","value":30}`, "Bob"},
		{`{"field":"custom.since","op":"not_within_last_days","value":30}`, "Ada,Cy,Dee"},
		{`{"field":"custom.since","op":"is_not_set"}`, "Cy,Dee"},
		// Dates.
		{`{"field":"created_at","op":"before","value":"2026-01-01"}`, "Ada"},
		{`{"field":"created_at","op":"after","value":"2026-06-14"}`, "Dee"},
		{`{"field":"created_at","op":"within_last_days","value":30}`, "Cy,Dee"},
		{`{"field":"created_at","op":"not_within_last_days","value":30}`, "Ada,Bob"},
		{`{"field":"updated_at","op":"is_set"}`, "Ada,Bob,Cy,Dee"},
		{`{"field":"birthday","op":"in_month","value":12}`, "Ada"},
		{`{"field":"birthday","op":"before","value":"1900-01-01"}`, "Ada"},
		{`{"not":{"field":"birthday","op":"after","value":"1900-01-01"}}`, "Ada,Bob,Cy,Dee"},
		{`{"field":"birthday","op":"is_not_set"}`, "Bob,Cy,Dee"},
		// Flags.
		{`{"field":"starred","op":"eq","value":true}`, "Ada"},
		{`{"field":"suppressed","op":"eq","value":true}`, "Bob"},
		{`{"field":"suppressed","op":"eq","value":false}`, "Ada,Cy,Dee"},
		// Labels.
		{`{"field":"labels","op":"has_any","value":["` + f.vip.String() + `","` + f.lead.String() + `"]}`, "Ada,Bob,Cy"},
		{`{"field":"labels","op":"has_all","value":["` + f.vip.String() + `","` + f.lead.String() + `","` + f.vip.String() + `"]}`, "Cy"},
		{`{"field":"labels","op":"has_none","value":["` + f.vip.String() + `"]}`, "Bob,Dee"},
		// Engagement.
		{`{"field":"email.opened","op":"within_last_days","value":30}`, "Ada"},
		{`{"field":"email.opened","op":"not_within_last_days","value":30}`, "Bob,Cy,Dee"},
		{`{"field":"email.opened","op":"ever"}`, "Ada,Bob"},
		{`{"field":"email.opened","op":"never"}`, "Cy,Dee"},
		{`{"field":"email.opened","op":"ever","campaign_id":"` + f.campB.String() + `"}`, ""},
		{`{"field":"email.clicked","op":"ever","campaign_id":"` + f.campB.String() + `"}`, "Bob"},
		{`{"field":"email.delivered","op":"within_last_days","value":7}`, "Ada"},
		{`{"field":"email.bounced","op":"ever"}`, "Cy"},
		{`{"field":"email.complained","op":"never"}`, "Ada,Bob,Cy,Dee"},
		{`{"field":"email.sent","op":"within_last_days","value":7}`, "Ada"},
		{`{"field":"email.sent","op":"within_last_days","value":1}`, ""},
		{`{"field":"email.sent","op":"never","campaign_id":"` + f.campA.String() + `"}`, "Bob,Cy,Dee"},
		// Campaign membership.
		{`{"field":"campaign","op":"enrolled","value":"` + f.campA.String() + `"}`, "Ada,Bob"},
		{`{"field":"campaign","op":"not_enrolled","value":"` + f.campA.String() + `"}`, "Cy,Dee"},
		{`{"field":"campaign","op":"active","value":"` + f.campA.String() + `"}`, "Ada"},
		{`{"field":"campaign","op":"removed","value":"` + f.campA.String() + `"}`, "Bob"},
		{`{"field":"campaign","op":"completed","value":"` + f.campB.String() + `"}`, "Cy"},
		// The rule shape.
		{`{"all":[{"field":"company","op":"contains","value":"acme"},{"field":"labels","op":"has_any","value":["` + f.vip.String() + `"]},{"field":"email.opened","op":"within_last_days","value":30}]}`, "Ada"},
	}
	for _, tc := range cases {
		got, err := f.members(t, tc.rule)
		if err != nil {
			t.Errorf("%s: %v", tc.rule, err)
			continue
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%s\n got [%s]\nwant [%s]", tc.rule, strings.Join(got, ","), tc.want)
		}
	}
}

func TestRulesCheckedAgainstTheBook(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct{ rule, place string }{
		{`{"all":[{"field":"labels","op":"has_any","value":["` + f.vip.String() + `","` + f.foreign.String() + `"]}]}`, "rule.all[0].value[1]"},
		{`{"field":"labels","op":"has_any","value":[]}`, "rule.value"},
		{`{"field":"labels","op":"has_any","value":"` + f.vip.String() + `"}`, "rule.value"},
		{`{"field":"campaign","op":"enrolled","value":"` + f.otherCampaign.String() + `"}`, "rule.value"},
		{`{"field":"email.opened","op":"ever","campaign_id":"` + f.otherCampaign.String() + `"}`, "rule.campaign_id"},
		{`{"field":"custom.nope","op":"eq","value":"x"}`, "rule.field"},
		{`{"field":"custom.score","op":"contains","value":"4"}`, "rule.op"},
		{`{"field":"custom.tier","op":"gt","value":4}`, "rule.op"},
		{`{"field":"custom.score","op":"gt","value":"4"}`, "rule.value"},
		{`{"field":"company","op":"eq","value":"a\u0000b"}`, "rule.value"},
		{`{"field":"company","op":"eq","value":""}`, "rule.value"},
		{`{"field":"company","op":"eq"}`, "rule.value"},
		{`{"field":"company","op":"is_set","value":"x"}`, "rule.value"},
		{`{"field":"company","op":"eq","value":"` + strings.Repeat("x", MaxText+1) + `"}`, "rule.value"},
		{`{"field":"created_at","op":"before","value":"2023-02-30"}`, "rule.value"},
		{`{"field":"created_at","op":"within_last_days","value":0}`, "rule.value"},
		{`{"field":"created_at","op":"within_last_days","value":3651}`, "rule.value"},
		{`{"field":"created_at","op":"within_last_days","value":1.5}`, "rule.value"},
		{`{"field":"birthday","op":"in_month","value":13}`, "rule.value"},
		{`{"field":"starred","op":"eq","value":"yes"}`, "rule.value"},
		{`{"field":"email.opened","op":"ever","value":3}`, "rule.value"},
	}
	for _, tc := range cases {
		_, err := f.members(t, tc.rule)
		if !apperr.Is(err, apperr.InvalidInput) {
			t.Errorf("%s: err = %v, want INVALID_INPUT", tc.rule, err)
			continue
		}
		if got := field(err); got != tc.place {
			t.Errorf("%s: place = %q, want %q (%v)", tc.rule, got, tc.place, err)
		}
	}
}

// A saved rule keeps working when what it names goes: the condition then
// tests a value no contact has.
func TestSavedRuleOutlivesItsReferences(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	r, err := parse(t, `{"any":[{"field":"labels","op":"has_none","value":["`+f.vip.String()+`"]},{"field":"custom.score","op":"gt","value":10}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(ctx, `DELETE FROM labels WHERE id = $1`, f.vip); err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(ctx, `DELETE FROM field_definitions WHERE key = 'score'`); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.compile(ctx, f.bookID, r, false, "`rule`"); !apperr.Is(err, apperr.InvalidInput) {
		t.Fatalf("strict: %v", err)
	}
	p, err := f.svc.compile(ctx, f.bookID, r, true, "segment")
	if err != nil {
		t.Fatalf("lenient: %v", err)
	}
	var n int64
	err = postgres.InTx(ctx, f.pool, func(tx *postgres.Tx) error {
		return p.Within(ctx, tx, func() (err error) { n, err = f.svc.st.count(ctx, tx, p); return err })
	})
	if err != nil || n != 4 {
		t.Fatalf("count = %d, %v; want every contact (has_none of a deleted label)", n, err)
	}
}

// The statement timeout stops a slow evaluation with a 400 naming the
// rule, and is lifted for what the transaction does afterwards.
func TestStatementTimeout(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.svc.timeout = 50 * time.Millisecond
	r, _ := parse(t, `{"all":[]}`)
	p, err := f.svc.compile(ctx, f.bookID, r, false, "`rule`")
	if err != nil {
		t.Fatal(err)
	}
	err = postgres.InTx(ctx, f.pool, func(tx *postgres.Tx) error {
		return p.Within(ctx, tx, func() error {
			_, err := tx.Exec(ctx, `SELECT pg_sleep(1)`)
			return err
		})
	})
	if !apperr.Is(err, apperr.InvalidInput) || field(err) != "rule" {
		t.Errorf("slow statement: %v", err)
	}
	err = postgres.InTx(ctx, f.pool, func(tx *postgres.Tx) error {
		if err := p.Within(ctx, tx, func() error { return nil }); err != nil {
			return err
		}
		var timeout string
		if err := tx.QueryRow(ctx, `SELECT current_setting('statement_timeout')`).Scan(&timeout); err != nil {
			return err
		}
		if !slices.Contains([]string{"0", "0ms"}, timeout) {
			t.Errorf("statement_timeout after Within = %q, want the session's", timeout)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Every op's value has one JSON type: a value of another type is refused
// at its place, in nested groups too, whatever text it holds ("30" is a
// string, not a number of days).
func TestValueOfTheWrongTypeIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	vip, camp := `"`+f.vip.String()+`"`, `"`+f.campA.String()+`"`
	type op struct {
		field, op string
		wrong     []string // values of the wrong type
	}
	text := []string{`5`, `true`, `["a"]`, `{"a":1}`}
	days := []string{`"30"`, `"1"`, `30.5`, `true`, `[30]`, `{"n":30}`, `"thirty"`}
	date := []string{`20240101`, `true`, `["2024-01-01"]`, `"2024-01-01T00:00:00Z"`, `{"d":"2024-01-01"}`}
	number := []string{`"30"`, `"4.5"`, `true`, `[1]`, `{"n":1}`}
	boolean := []string{`"true"`, `1`, `0`, `[true]`, `"yes"`}
	ids := []string{vip, `[5]`, `[true]`, `[[` + vip + `]]`, `{"id":` + vip + `}`, `["not-a-uuid"]`}
	campaign := []string{`5`, `true`, `[` + camp + `]`, `{"id":` + camp + `}`}
	none := []string{`"x"`, `5`, `false`, `[]`, `{}`}
	var cases []op
	for _, fl := range []string{"first_name", "company", "email", "phone", "custom.tier", "custom.site"} {
		for _, o := range []string{"eq", "neq", "contains", "not_contains", "starts_with", "ends_with"} {
			cases = append(cases, op{fl, o, text})
		}
		cases = append(cases, op{fl, "is_set", none}, op{fl, "is_not_set", none})
	}
	for _, o := range []string{"eq", "neq", "gt", "gte", "lt", "lte"} {
		cases = append(cases, op{"custom.score", o, number})
	}
	for _, fl := range []string{"created_at", "updated_at", "custom.since"} {
		cases = append(cases, op{fl, "before", date}, op{fl, "after", date},
			op{fl, "within_last_days", days}, op{fl, "not_within_last_days", days}, op{fl, "is_set", none})
	}
	cases = append(cases, op{"birthday", "before", date}, op{"birthday", "after", date},
		op{"birthday", "in_month", []string{`"12"`, `"1"`, `12.5`, `true`, `[12]`}}, op{"birthday", "is_not_set", none},
		op{"starred", "eq", boolean}, op{"suppressed", "eq", boolean})
	for _, o := range []string{"has_any", "has_all", "has_none"} {
		cases = append(cases, op{"labels", o, ids})
	}
	for _, fl := range []string{"email.sent", "email.delivered", "email.opened", "email.clicked", "email.bounced", "email.complained"} {
		cases = append(cases, op{fl, "within_last_days", days}, op{fl, "not_within_last_days", days},
			op{fl, "ever", none}, op{fl, "never", none})
	}
	for _, o := range []string{"enrolled", "not_enrolled", "active", "completed", "removed"} {
		cases = append(cases, op{"campaign", o, campaign})
	}
	// Each wrong value stands in three places: alone, in a group, and in
	// a group nested in others.
	places := []struct{ wrap, place string }{
		{`%s`, "rule.value"},
		{`{"all":[%s]}`, "rule.all[0].value"},
		{`{"any":[{"field":"company","op":"is_set"},{"not":{"all":[{"field":"starred","op":"eq","value":true},%s]}}]}`, "rule.any[1].not.all[1].value"},
	}
	for _, c := range cases {
		for _, v := range c.wrong {
			cond := `{"field":"` + c.field + `","op":"` + c.op + `","value":` + v + `}`
			for _, p := range places {
				rule := strings.Replace(p.wrap, "%s", cond, 1)
				_, err := f.members(t, rule)
				if !apperr.Is(err, apperr.InvalidInput) {
					t.Errorf("%s: err = %v, want INVALID_INPUT", rule, err)
					continue
				}
				// A label id is named by its own place in the array.
				if got := field(err); got != p.place && !strings.HasPrefix(got, p.place+"[") {
					t.Errorf("%s: place = %q, want %q (%v)", rule, got, p.place, err)
				}
			}
		}
	}
}
