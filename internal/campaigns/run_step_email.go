package campaigns

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/mailmerge"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// emailPlan is what every recipient of an email step shares.
type emailPlan struct {
	failDetail string // set when nobody can be sent to (no template, no settings)
	tpl        *mailmerge.Template
	solo       bool // every recipient needs a request of its own
	claimSize  int  // participants per claim
	shared     string
	footer     mailmerge.Footer
	customKeys []string
	fromEmail  string
	fromName   string
	replyTo    string
	apiKey     string
	account    *mailer.Account
	tracking   mailer.Tracking
	// variants holds the plan of each A/B variant of the step (its
	// subject, its template); nil for a step without variants.
	variants map[uuid.UUID]*emailPlan
}

func (rn *Runner) planEmail(ctx context.Context, p *pass, st Step) (*emailPlan, error) {
	plan, err := rn.planTemplate(ctx, p, st, st.EmailTemplateID, nil)
	if err != nil || len(st.Variants) == 0 {
		return plan, err
	}
	return plan, rn.planVariants(ctx, p, st, plan)
}

// planTemplate plans an email of the step with the template tplID and,
// when subject is set, that subject instead of the template's.
func (rn *Runner) planTemplate(ctx context.Context, p *pass, st Step, tplID *uuid.UUID, subject *string) (*emailPlan, error) {
	plan := &emailPlan{}
	if tplID == nil {
		plan.failDetail = DetailTemplateDeleted
		return plan, nil
	}
	t, err := rn.st.template(ctx, rn.db, p.campaign.BookID, *tplID)
	if apperr.Is(err, apperr.NotFound) {
		plan.failDetail = DetailTemplateDeleted
		return plan, nil
	}
	if err != nil {
		return nil, err
	}
	plan.fromEmail, plan.fromName = p.settings.SenderEmail, p.settings.SenderName
	if st.SenderEmail != "" {
		plan.fromEmail = st.SenderEmail
	}
	if st.SenderName != "" {
		plan.fromName = st.SenderName
	}
	plan.replyTo, plan.apiKey = p.settings.ReplyToEmail, p.settings.apiKey
	plan.account = p.settings.account(p.campaign.BookID)
	plan.tracking = mailer.Tracking{Opens: p.settings.TrackOpens, Clicks: p.settings.TrackClicks}
	if !p.configured || !p.settings.canSend() || plan.fromEmail == "" {
		plan.failDetail = DetailNotConfigured
		return plan, nil
	}
	if subject != nil {
		t.Subject = *subject
	}
	plan.tpl = mailmerge.Compile(t.Subject, t.BodyHTML, p.book.customKeys)
	plan.footer = footerOf(p.settings.Settings)
	plan.shared = plan.tpl.SharedHTML(plan.footer)
	plan.customKeys = plan.tpl.CustomKeys()
	plan.solo = plan.tpl.Placeholders() > mailer.MaxSubstitutions
	plan.claimSize = claimSize(rn.opts.ChunkSize, plan.solo, len(plan.shared))
	if r := plan.account.MaxRate; r > 0 {
		// A claim the book's send rate lets out well within the send
		// timeout: half of it.
		plan.claimSize = max(1, min(plan.claimSize, r*int(rn.opts.SendTimeout/time.Second)/2))
	}
	return plan, nil
}

// soloChunkBytes bounds the HTML a chunk of recipients who each get their
// own request renders (a chunk's bodies are all rendered before the first
// goes out): 8 MB is 8 recipients of a 1 MB template, the whole chunk of a
// 8 KB one.
const soloChunkBytes = 8 << 20

// claimSize is how many participants one claim of an email step takes:
// the chunk size, or for a template whose recipients each need their own
// request, as many as render soloChunkBytes. Chunk after chunk, the
// memory, the time a chunk takes and so the length of a scheduler turn
// stay bounded whatever the template's size.
func claimSize(chunk int, solo bool, bodyLen int) int {
	if !solo || bodyLen == 0 {
		return chunk
	}
	return max(1, min(chunk, soloChunkBytes/bodyLen))
}

// batch is an empty provider request of the step with the given body.
func (plan *emailPlan) batch(html string) mailer.Batch {
	tracking := plan.tracking
	return mailer.Batch{
		APIKey: plan.apiKey, FromEmail: plan.fromEmail, FromName: plan.fromName, ReplyTo: plan.replyTo, HTML: html,
		Tracking: &tracking, Account: plan.account,
	}
}

func footerOf(st Settings) mailmerge.Footer {
	return mailmerge.Footer{
		CompanyName: st.CompanyName, AddressLine1: st.AddressLine1, AddressLine2: st.AddressLine2,
		City: st.City, State: st.State, PostalCode: st.PostalCode, Country: st.Country,
	}
}

// claimedChunk is one claim waiting to be sent.
type claimedChunk struct {
	claimID uuid.UUID
	rows    []claimedRow
	secrets [][]byte // unsubscribe token secrets by ordinal-1
}

// processEmail runs one email step as a pipeline: claimers take chunks of
// due participants in contact order while a few senders render, send and
// record them, so the database and the provider work at the same time.
// The first chunk is claimed alone; when there may be more, the rest of
// the contact id space is split between several claimers, so a small
// campaign goes out in one request and a large one claims in parallel.
func (rn *Runner) processEmail(ctx context.Context, p *pass, st Step, plan *emailPlan, base claimParams) error {
	chunks := make(chan claimedChunk, rn.opts.Senders)
	var senders sync.WaitGroup
	for range rn.opts.Senders {
		senders.Add(1)
		go func() {
			defer senders.Done()
			for ch := range chunks {
				rn.deliver(ctx, p, st, plan, ch)
			}
		}()
	}
	last, err := rn.claimChunk(ctx, p, base, plan, contactRange{}, chunks)
	var (
		claimers sync.WaitGroup
		mu       sync.Mutex
	)
	if err == nil && last != uuid.Nil {
		for _, r := range splitAfter(last, rn.opts.Claimers) {
			claimers.Add(1)
			go func() {
				defer claimers.Done()
				if rerr := rn.claimRange(ctx, p, base, plan, r, chunks); rerr != nil {
					mu.Lock()
					err = errors.Join(err, rerr)
					mu.Unlock()
				}
			}()
		}
	}
	claimers.Wait()
	close(chunks)
	senders.Wait()
	return err
}

// contactRange is a slice of the contact id space: (after, upto], with
// no upper bound when upto is nil.
type contactRange struct {
	after uuid.UUID
	upto  *uuid.UUID
}

// splitAfter splits the ids above after into n ranges of equal width
// (by the first 8 bytes; ids are random, so participants split evenly).
func splitAfter(after uuid.UUID, n int) []contactRange {
	lo := binary.BigEndian.Uint64(after[:8])
	out := make([]contactRange, n)
	out[0].after = after
	for i := 1; i < n; i++ {
		var b uuid.UUID
		binary.BigEndian.PutUint64(b[:8], lo+(math.MaxUint64-lo)/uint64(n)*uint64(i))
		copy(b[8:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		out[i].after = b
		out[i-1].upto = &out[i].after
	}
	return out
}

// claimRange claims the due participants of one contact range, chunk by
// chunk in contact order, and hands the chunks to the senders.
func (rn *Runner) claimRange(ctx context.Context, p *pass, base claimParams, plan *emailPlan, r contactRange, chunks chan<- claimedChunk) error {
	for ctx.Err() == nil {
		last, err := rn.claimChunk(ctx, p, base, plan, r, chunks)
		if err != nil || last == uuid.Nil {
			return err // done when nobody is left who is due
		}
		r.after = last
	}
	return nil
}

// claimChunk makes one claim in r and hands what it got to the senders.
// It returns the greatest contact id considered (uuid.Nil: none was due,
// or the pass's turn is over).
func (rn *Runner) claimChunk(ctx context.Context, p *pass, base claimParams, plan *emailPlan, r contactRange, chunks chan<- claimedChunk) (uuid.UUID, error) {
	if ctx.Err() != nil {
		return uuid.Nil, nil
	}
	cp := base
	if cp.Limit = p.turn.take(base.Limit); cp.Limit == 0 {
		return uuid.Nil, nil
	}
	cp.After, cp.Upto, cp.ClaimID, cp.Now = r.after, r.upto, uuid.New(), rn.now()
	cp.LeaseUntil = cp.Now.Add(rn.opts.Lease)
	var secrets [][]byte
	if plan.failDetail == "" {
		secrets, cp.TokenHashes = newSecrets(cp.Limit)
	}
	// Once started, a claim runs to its end whatever happens to ctx: a
	// claim committed but never read would hold its rows until the lease
	// runs out and then count as "delivery outcome unknown".
	rows, last, held, err := rn.st.claimDue(context.WithoutCancel(ctx), rn.db, cp)
	p.n.held.Add(int64(held))
	p.turn.giveBack(cp.Limit - len(rows))
	if err != nil {
		return uuid.Nil, err
	}
	if len(rows) > 0 {
		chunks <- claimedChunk{claimID: cp.ClaimID, rows: rows, secrets: secrets}
	}
	return last, nil
}

// sendable reports whether any unit has a recipient.
func sendable(units []sendUnit) bool {
	for _, u := range units {
		if len(u.rows) > 0 {
			return true
		}
	}
	return false
}

// deliver renders, sends and records one claimed chunk. Whatever happens,
// it records an outcome for every row it sent or might have sent; only a
// chunk it never handed to the provider is released.
func (rn *Runner) deliver(ctx context.Context, p *pass, st Step, plan *emailPlan, ch claimedChunk) {
	// Recording must survive a cancelled pass: an unrecorded claim would
	// later count as "delivery outcome unknown".
	bg := context.WithoutCancel(ctx)
	release := func() {
		if err := rn.st.releaseClaim(bg, rn.db, ch.claimID); err != nil {
			rn.log.Error("release campaign claim", "claim_id", ch.claimID, "err", err)
		}
	}
	outcomes := make([]outcome, 0, len(ch.rows))
	// One shared request per plan (a step's variants each have theirs).
	shared := map[*emailPlan]*sendUnit{}
	var plans []*emailPlan
	var solos []sendUnit
	for i, r := range ch.rows {
		// Checked per recipient: a large template that cannot be batched
		// renders whole for each one. Nothing has gone out yet.
		if ctx.Err() != nil {
			release()
			return
		}
		switch {
		case !r.ConditionMet:
			// Read before anything else: the step does not apply to it.
			outcomes = append(outcomes, skippedOutcome(p, st, r))
		case r.SuppressedReason != "":
			// The address the email would go to is suppressed.
			outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed,
				Detail: "address suppressed (" + r.SuppressedReason + ")"})
		case r.Suppressed:
			outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: DetailUnsubscribed})
		case plan.forRow(r).failDetail != "":
			outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: plan.forRow(r).failDetail})
		case r.Email == "":
			outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: DetailNoEmail})
		case !deliverableAddress(r.Email):
			// One address the provider rejects would fail the whole batch.
			outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: DetailInvalidEmail})
		case !r.HasToken || r.Ordinal < 1 || r.Ordinal > len(ch.secrets):
			// Cannot happen: the claim stores a token for every sendable row.
			outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: "unsubscribe token missing"})
		default:
			rp := plan.forRow(r)
			pz, html := rn.personalize(p, st, rp, r, makeToken(st.ID, r.ParticipantID, ch.secrets[r.Ordinal-1]))
			if html == "" {
				u := shared[rp]
				if u == nil {
					u = &sendUnit{batch: rp.batch(rp.shared)}
					shared[rp] = u
					plans = append(plans, rp)
				}
				u.batch.Personalizations = append(u.batch.Personalizations, pz)
				u.rows = append(u.rows, i)
				continue
			}
			solo := sendUnit{batch: rp.batch(html), rows: []int{i}}
			solo.batch.Personalizations = []mailer.Personalization{pz}
			solos = append(solos, solo)
		}
	}
	units := make([]sendUnit, 0, len(plans)+len(solos))
	for _, sp := range plans {
		units = append(units, *shared[sp])
	}
	units = append(units, solos...)
	if sendable(units) {
		// From here the emails may leave: a crash now makes the claim
		// "delivery outcome unknown" instead of giving it back.
		mine, err := rn.st.markSending(bg, rn.db, ch.claimID, rn.now())
		if err != nil || !mine {
			// Not recorded as sending: nothing may go out. A lost claim was
			// settled by the pass that reaped it; an error leaves it to the
			// reaper, which gives it back.
			rn.log.Error("campaign chunk not sent: its claim could not be marked as sending", "campaign_id", p.campaign.ID,
				"step_id", st.ID, "claim_id", ch.claimID, "still_claimed", mine, "err", err)
			return
		}
	}
	var refused []string // addresses the provider refused for good (SMTP 550, 551, 553)
	for _, u := range units {
		if len(u.rows) == 0 {
			continue
		}
		sendCtx, cancel := context.WithTimeout(bg, rn.opts.SendTimeout)
		results := rn.mail.Deliver(sendCtx, u.batch)
		cancel()
		logged := false
		for k, i := range u.rows {
			r := ch.rows[i]
			res := results[k]
			var perm *mailer.Error
			switch {
			case res.Err == nil:
				outcomes = append(outcomes, outcome{
					ParticipantID: r.ParticipantID, Result: ResultSuccess, MessageID: res.MessageID,
					ContactID: r.ContactID, Address: r.Email, Subject: u.batch.Personalizations[k].Subject,
				})
			case errors.As(res.Err, &perm) && perm.Permanent:
				outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: providerDetail(perm)})
				if perm.BadAddress {
					refused = append(refused, r.Email)
				}
			default:
				detail := providerDetail(res.Err)
				if !logged {
					logged = true
					rn.log.Warn("campaign send failed; will retry", "campaign_id", p.campaign.ID, "step_id", st.ID, "recipients", len(u.rows), "err", res.Err)
				}
				if r.Tries >= rn.opts.MaxTries {
					outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: detail})
				} else {
					outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Detail: detail})
				}
			}
		}
	}
	rn.record(bg, p, st, recordParams{ClaimID: ch.claimID, Outcomes: outcomes,
		PerRecipientIDs: p.settings.prov.Provider != ProviderSendGrid}, ch.rows)
	if len(refused) > 0 {
		rn.suppressRefused(bg, p, refused)
	}
}

// suppressRefused suppresses the addresses the provider refused as
// unknown or invalid (reason bounce, source provider), so the book's
// later emails do not go to them.
func (rn *Runner) suppressRefused(ctx context.Context, p *pass, addresses []string) {
	err := postgres.InTx(ctx, rn.db, func(tx *postgres.Tx) error {
		_, err := suppression.New(rn.now).WithOutbox(rn.st.outbox).Suppress(ctx, tx, p.campaign.BookID, addresses, suppression.ReasonBounce, suppression.SourceProvider, nil)
		return err
	})
	if err != nil {
		rn.log.Error("suppress refused addresses", "campaign_id", p.campaign.ID, "addresses", len(addresses), "err", err)
	}
}

// sendUnit is one provider request and the chunk rows it carries.
type sendUnit struct {
	batch mailer.Batch
	rows  []int
}

// fitsBatch reports whether substitutions stay within the provider's
// per-recipient limits.
func fitsBatch(subs map[string]string) bool {
	if len(subs) > mailer.MaxSubstitutions {
		return false
	}
	size := 0
	for k, v := range subs {
		size += len(k) + len(v)
	}
	return size <= mailer.MaxSubstitutionBytes
}

// deliverableAddress is a conservative check of what the provider
// accepts: one "@", something before it, a dotted domain, no spaces or
// separators.
func deliverableAddress(a string) bool {
	at := strings.IndexByte(a, '@')
	return at > 0 && at == strings.LastIndexByte(a, '@') && strings.Contains(a[at+1:], ".") &&
		!strings.ContainsAny(a, " \t\r\n<>,;\"") && !strings.HasSuffix(a, ".") && len(a) <= 254
}

// record writes a chunk's outcomes, retrying a failing database a few
// times: the emails are out, and an unrecorded claim would be reaped as
// "delivery outcome unknown" instead of its real result.
func (rn *Runner) record(ctx context.Context, p *pass, st Step, rp recordParams, rows []claimedRow) {
	rp.ActiveSteps, rp.StepID, rp.CampaignID = p.activeSteps, st.ID, p.campaign.ID
	var err error
	for attempt := range 5 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt*attempt) * 200 * time.Millisecond)
		}
		rp.Now = rn.now()
		rp.RetryAt = rp.Now.Add(rn.opts.RetryAfter)
		var done int
		if done, err = rn.recordWithEvents(ctx, p, rp, rows); err == nil {
			rn.count(p, rp.Outcomes, done)
			return
		}
	}
	rn.log.Error("record campaign outcomes", "campaign_id", p.campaign.ID, "step_id", st.ID, "claim_id", rp.ClaimID, "err", err)
}

// recordWithEvents records a claim's outcomes and, when an active webhook
// of the team subscribes to email.sent, email.failed or
// participant.completed, their events in the same transaction. Which
// types are wanted is asked once per claimed chunk: with no subscriber
// the record is what it was, plus that one question.
func (rn *Runner) recordWithEvents(ctx context.Context, p *pass, rp recordParams, rows []claimedRow) (int, error) {
	if rn.st.outbox == nil {
		return rn.st.recordOutcomes(ctx, rn.db, rp)
	}
	var done int
	err := postgres.InTx(ctx, rn.db, func(tx *postgres.Tx) error {
		wanted, err := rn.st.outbox.WantedOf(ctx, tx, p.teamID, events.EmailSent, events.EmailFailed, events.ParticipantCompleted)
		if err != nil {
			return err
		}
		if done, err = rn.st.recordOutcomes(ctx, tx, rp); err != nil || len(wanted) == 0 {
			return err
		}
		return rn.st.emitRecorded(ctx, tx, p.teamID, p.campaign.BookID, rp, rows, wanted)
	})
	return done, err
}

func (rn *Runner) count(p *pass, outs []outcome, completed int) {
	for _, o := range outs {
		switch o.Result {
		case ResultSuccess:
			p.n.sent.Add(1)
		case ResultFailed:
			p.n.failed.Add(1)
		case ResultSkipped:
			p.n.skipped.Add(1)
		default:
			p.n.retrying.Add(1)
		}
	}
	p.n.completed.Add(int64(completed))
}

// providerDetail is the result_detail of a provider error.
func providerDetail(err error) string {
	var me *mailer.Error
	if errors.As(err, &me) && me.Message != "" {
		return me.Message
	}
	return err.Error()
}

// personalize builds one recipient. html is "" when the recipient joins
// the chunk's shared request (its substitutions fill in the shared body);
// otherwise it is the recipient's whole body, for a request of its own:
// when the template has more merge expressions than the provider takes
// substitutions (plan.solo), or this recipient's values are too long.
func (rn *Runner) personalize(p *pass, st Step, plan *emailPlan, r claimedRow, token string) (pz mailer.Personalization, html string) {
	fullName := strings.TrimSpace(r.FirstName + " " + r.LastName)
	v := mailmerge.Values{
		Fields: map[string]string{
			"first_name": r.FirstName, "last_name": r.LastName, "full_name": fullName,
			"company": r.Company, "job_title": r.JobTitle, "email": r.Email, "phone": r.Phone,
			"website": r.Website, "birthday": r.Birthday, "book_name": p.book.name,
		},
		Custom:         r.Custom,
		UnsubscribeURL: rn.links.unsubscribePageURL(token),
		Event:          r.Event,
	}
	pz = mailer.Personalization{
		To: r.Email, ToName: fullName,
		Headers: map[string]string{
			"List-Unsubscribe":      "<" + rn.links.oneClickURL(token, p.campaign.ID) + ">",
			"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
		},
		CustomArgs: map[string]string{
			"campaign_id": p.campaign.ID.String(), "step_id": st.ID.String(), "participant_id": r.ParticipantID.String(),
		},
	}
	if !plan.solo {
		subject, subs := plan.tpl.Personalize(v)
		if fitsBatch(subs) {
			pz.Subject, pz.Substitutions = subject, subs
			return pz, ""
		}
	}
	pz.Subject, html = plan.tpl.Render(v, plan.footer)
	return pz, html
}
