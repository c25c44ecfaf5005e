package campaigns

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/mailmerge"
	"github.com/contactbook/contactbook/internal/postgres"
)

// ProcessingOptions tune the processor; zero values take the defaults.
type ProcessingOptions struct {
	// ChunkSize is how many participants one claim takes and one provider
	// request carries (at most mailer.MaxBatch). Default mailer.MaxBatch.
	ChunkSize int
	// Senders is how many chunks are sent and recorded at once. Default 3.
	Senders int
	// Claimers is how many claim statements run at once, each over its own
	// range of contacts. Default 2.
	Claimers int
	// Lease is how long a claim may stay unanswered before the next pass
	// records it as "delivery outcome unknown". It must exceed SendTimeout
	// plus the time a claimed chunk waits for a sender. Default 10 minutes.
	Lease time.Duration
	// SendTimeout bounds one provider request. Default 60 seconds.
	SendTimeout time.Duration
	// MaxTries is how many provider attempts a transient error (5xx,
	// network) gets before it is recorded as failed. Default 3.
	MaxTries int
	// RetryAfter is the earliest a transient error is retried (on a later
	// pass). Default 1 minute.
	RetryAfter time.Duration
	// TurnParticipants is how many participants one campaign may claim in
	// one turn of the scheduler before the other campaigns get theirs.
	// Default 10,000.
	TurnParticipants int
	// TurnTime is how long one turn of the scheduler goes on claiming new
	// chunks of a campaign; chunks claimed by then are still sent. Default
	// 10 seconds.
	TurnTime time.Duration
}

func (o ProcessingOptions) withDefaults() ProcessingOptions {
	if o.ChunkSize <= 0 || o.ChunkSize > mailer.MaxBatch {
		o.ChunkSize = mailer.MaxBatch
	}
	if o.Senders <= 0 {
		o.Senders = 3
	}
	if o.Claimers <= 0 || o.Claimers > 16 {
		o.Claimers = 2
	}
	if o.Lease <= 0 {
		o.Lease = 10 * time.Minute
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = time.Minute
	}
	if o.MaxTries <= 0 {
		o.MaxTries = 3
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = time.Minute
	}
	if o.TurnParticipants <= 0 {
		o.TurnParticipants = 10_000
	}
	if o.TurnTime <= 0 {
		o.TurnTime = 10 * time.Second
	}
	return o
}

// RunResult counts what one pass over a campaign did.
type RunResult struct {
	Sent      int // emails the provider accepted
	Failed    int // completion records written as failed
	Retrying  int // transient provider errors left for a later pass
	Triggered int // trigger steps recorded as success
	Completed int // participants that became completed
	Reaped    int // interrupted claims recorded as "delivery outcome unknown"
}

type counters struct {
	sent, failed, retrying, triggered, completed, reaped atomic.Int64
}

func (c *counters) result() RunResult {
	return RunResult{
		Sent: int(c.sent.Load()), Failed: int(c.failed.Load()), Retrying: int(c.retrying.Load()),
		Triggered: int(c.triggered.Load()), Completed: int(c.completed.Load()), Reaped: int(c.reaped.Load()),
	}
}

// pass is one pass over one campaign.
type pass struct {
	campaign    Campaign
	book        mergeBook
	settings    storedSettings
	configured  bool
	activeSteps []uuid.UUID
	turn        *turn // nil: no bound
	n           counters
}

// turn bounds what one pass may claim, so that the scheduler can give
// every campaign its turn: at most a number of participants, and no new
// claim once its time is up. It runs on the wall clock: it shares out
// the processor's time, it is no rule of the campaign. A nil *turn
// bounds nothing.
type turn struct {
	left  atomic.Int64
	until time.Time
	cut   atomic.Bool // it stopped a claim: work may be left
}

func newTurn(participants int, d time.Duration) *turn {
	t := &turn{until: time.Now().Add(d)}
	t.left.Store(int64(participants))
	return t
}

// take reserves up to n participants for one claim; 0 when the turn is
// over.
func (t *turn) take(n int) int {
	if t == nil {
		return n
	}
	if time.Now().After(t.until) {
		t.cut.Store(true)
		return 0
	}
	for {
		left := t.left.Load()
		if left <= 0 {
			t.cut.Store(true)
			return 0
		}
		k := min(int64(n), left)
		if t.left.CompareAndSwap(left, left-k) {
			return int(k)
		}
	}
}

// giveBack returns the part of a reservation a claim did not use.
func (t *turn) giveBack(n int) {
	if t != nil && n > 0 {
		t.left.Add(int64(n))
	}
}

// unfinished reports whether the turn stopped a claim, so the campaign
// may have due participants left.
func (t *turn) unfinished() bool { return t != nil && t.cut.Load() }

// ProcessCampaign makes one pass over an active campaign of a team with
// the paid add-on: interrupted claims are settled, then each active step
// in order sends to (or triggers for) every participant it is due for,
// then participants whose active steps are all done become completed.
// Safe to run concurrently with itself, in this process or another.
func (s *Service) ProcessCampaign(ctx context.Context, campaignID uuid.UUID) (RunResult, error) {
	return s.processCampaign(ctx, campaignID, nil)
}

// processCampaign is ProcessCampaign bounded by t (nil: no bound). A pass
// cut short by its turn leaves the final completion sweep to the pass that
// finishes; the participants it sent to are completed as they are
// recorded.
func (s *Service) processCampaign(ctx context.Context, campaignID uuid.UUID, t *turn) (RunResult, error) {
	c, teamID, err := s.st.campaignRef(ctx, s.db, campaignID)
	if err != nil {
		return RunResult{}, err
	}
	if c.Status != StatusActive {
		return RunResult{}, apperr.New(apperr.InvalidStatus, "Only active campaigns run; this one is %s.", c.Status)
	}
	addon, err := s.accounts.Addon(ctx, teamID)
	if err != nil {
		return RunResult{}, err
	}
	if !addon.Paid() {
		return RunResult{}, errPaidRequired
	}
	steps, err := s.st.steps(ctx, s.db, campaignID)
	if err != nil {
		return RunResult{}, err
	}
	p := &pass{campaign: c, turn: t}
	if p.book, err = s.st.mergeBook(ctx, s.db, c.BookID); err != nil {
		return RunResult{}, err
	}
	if p.settings, p.configured, err = s.loadSettings(ctx, s.db, c.BookID); err != nil {
		return RunResult{}, err
	}
	reaped, released, err := s.st.reapExpired(ctx, s.db, campaignID, s.now())
	if err != nil {
		return RunResult{}, err
	}
	if reaped+released > 0 {
		s.log.Warn("settled the claims of an interrupted pass", "campaign_id", campaignID,
			"outcome_unknown", reaped, "given_back", released)
	}
	p.n.reaped.Add(reaped)
	p.n.failed.Add(reaped)
	for _, st := range steps {
		if st.Active {
			p.activeSteps = append(p.activeSteps, st.ID)
		}
	}
	var earlier []uuid.UUID
	for _, st := range steps {
		if !st.Active {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		if err := s.processStep(ctx, p, st, earlier); err != nil {
			return p.n.result(), fmt.Errorf("campaign %s step %s: %w", c.ID, st.ID, err)
		}
		earlier = append(earlier, st.ID)
	}
	if t.unfinished() {
		return p.n.result(), nil
	}
	done, err := s.st.completeParticipants(ctx, s.db, campaignID, p.activeSteps, s.now())
	if err != nil {
		return p.n.result(), err
	}
	p.n.completed.Add(done)
	return p.n.result(), nil
}

// cutoff is the latest enrollment time for which st is due now; due is
// false when the step is not due for anyone yet (a future fixed date).
func (s *Service) cutoff(st Step) (cut *time.Time, due bool) {
	now := s.now()
	switch st.ScheduleType {
	case ScheduleDelay:
		t := now.AddDate(0, 0, -st.DelayDays)
		return &t, true
	case ScheduleFixedDate:
		if st.FixedDate == nil {
			return nil, false
		}
		start, ok := fixedDateStart(*st.FixedDate)
		return nil, ok && !now.Before(start)
	}
	return nil, true
}

func (s *Service) processStep(ctx context.Context, p *pass, st Step, earlier []uuid.UUID) error {
	cut, due := s.cutoff(st)
	if !due {
		return nil
	}
	base := claimParams{
		CampaignID: p.campaign.ID, StepID: st.ID, Cutoff: cut,
		Earlier: earlier, Limit: s.opts.ChunkSize, MaxTries: s.opts.MaxTries,
	}
	if st.StepType == StepTrigger {
		return s.processTrigger(ctx, p, st, base)
	}
	plan, err := s.planEmail(ctx, p, st)
	if err != nil {
		return err
	}
	base.CustomKeys = plan.customKeys
	if plan.claimSize > 0 {
		base.Limit = plan.claimSize
	}
	return s.processEmail(ctx, p, st, plan, base)
}

// --- email steps ---

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
}

func (s *Service) planEmail(ctx context.Context, p *pass, st Step) (*emailPlan, error) {
	plan := &emailPlan{}
	if st.EmailTemplateID == nil {
		plan.failDetail = DetailTemplateDeleted
		return plan, nil
	}
	t, err := s.st.template(ctx, s.db, p.campaign.BookID, *st.EmailTemplateID)
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
	if !p.configured || plan.apiKey == "" || plan.fromEmail == "" {
		plan.failDetail = DetailNotConfigured
		return plan, nil
	}
	plan.tpl = mailmerge.Compile(t.Subject, t.BodyHTML, p.book.customKeys)
	plan.footer = footerOf(p.settings.Settings)
	plan.shared = plan.tpl.SharedHTML(plan.footer)
	plan.customKeys = plan.tpl.CustomKeys()
	plan.solo = plan.tpl.Placeholders() > mailer.MaxSubstitutions
	plan.claimSize = claimSize(s.opts.ChunkSize, plan.solo, len(plan.shared))
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
	return mailer.Batch{
		APIKey: plan.apiKey, FromEmail: plan.fromEmail, FromName: plan.fromName, ReplyTo: plan.replyTo, HTML: html,
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
func (s *Service) processEmail(ctx context.Context, p *pass, st Step, plan *emailPlan, base claimParams) error {
	chunks := make(chan claimedChunk, s.opts.Senders)
	var senders sync.WaitGroup
	for range s.opts.Senders {
		senders.Add(1)
		go func() {
			defer senders.Done()
			for ch := range chunks {
				s.deliver(ctx, p, st, plan, ch)
			}
		}()
	}
	last, err := s.claimChunk(ctx, p, base, plan, contactRange{}, chunks)
	var (
		claimers sync.WaitGroup
		mu       sync.Mutex
	)
	if err == nil && last != uuid.Nil {
		for _, r := range splitAfter(last, s.opts.Claimers) {
			claimers.Add(1)
			go func() {
				defer claimers.Done()
				if rerr := s.claimRange(ctx, p, base, plan, r, chunks); rerr != nil {
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
func (s *Service) claimRange(ctx context.Context, p *pass, base claimParams, plan *emailPlan, r contactRange, chunks chan<- claimedChunk) error {
	for ctx.Err() == nil {
		last, err := s.claimChunk(ctx, p, base, plan, r, chunks)
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
func (s *Service) claimChunk(ctx context.Context, p *pass, base claimParams, plan *emailPlan, r contactRange, chunks chan<- claimedChunk) (uuid.UUID, error) {
	if ctx.Err() != nil {
		return uuid.Nil, nil
	}
	cp := base
	if cp.Limit = p.turn.take(base.Limit); cp.Limit == 0 {
		return uuid.Nil, nil
	}
	cp.After, cp.Upto, cp.ClaimID, cp.Now = r.after, r.upto, uuid.New(), s.now()
	cp.LeaseUntil = cp.Now.Add(s.opts.Lease)
	var secrets [][]byte
	if plan.failDetail == "" {
		secrets, cp.TokenHashes = newSecrets(cp.Limit)
	}
	// Once started, a claim runs to its end whatever happens to ctx: a
	// claim committed but never read would hold its rows until the lease
	// runs out and then count as "delivery outcome unknown".
	rows, last, err := s.st.claimDue(context.WithoutCancel(ctx), s.db, cp)
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
func (s *Service) deliver(ctx context.Context, p *pass, st Step, plan *emailPlan, ch claimedChunk) {
	// Recording must survive a cancelled pass: an unrecorded claim would
	// later count as "delivery outcome unknown".
	bg := context.WithoutCancel(ctx)
	release := func() {
		if err := s.st.releaseClaim(bg, s.db, ch.claimID); err != nil {
			s.log.Error("release campaign claim", "claim_id", ch.claimID, "err", err)
		}
	}
	outcomes := make([]outcome, 0, len(ch.rows))
	shared := sendUnit{batch: plan.batch(plan.shared)}
	var solos []sendUnit
	for i, r := range ch.rows {
		// Checked per recipient: a large template that cannot be batched
		// renders whole for each one. Nothing has gone out yet.
		if ctx.Err() != nil {
			release()
			return
		}
		switch {
		case r.Suppressed:
			outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: DetailUnsubscribed})
		case plan.failDetail != "":
			outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: plan.failDetail})
		case r.Email == "":
			outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: DetailNoEmail})
		case !deliverableAddress(r.Email):
			// One address the provider rejects would fail the whole batch.
			outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: DetailInvalidEmail})
		case !r.HasToken || r.Ordinal < 1 || r.Ordinal > len(ch.secrets):
			// Cannot happen: the claim stores a token for every sendable row.
			outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: "unsubscribe token missing"})
		default:
			pz, html := s.personalize(p, st, plan, r, makeToken(st.ID, r.ParticipantID, ch.secrets[r.Ordinal-1]))
			if html == "" {
				shared.batch.Personalizations = append(shared.batch.Personalizations, pz)
				shared.rows = append(shared.rows, i)
				continue
			}
			solo := sendUnit{batch: plan.batch(html), rows: []int{i}}
			solo.batch.Personalizations = []mailer.Personalization{pz}
			solos = append(solos, solo)
		}
	}
	units := append([]sendUnit{shared}, solos...)
	if sendable(units) {
		// From here the emails may leave: a crash now makes the claim
		// "delivery outcome unknown" instead of giving it back.
		mine, err := s.st.markSending(bg, s.db, ch.claimID, s.now())
		if err != nil || !mine {
			// Not recorded as sending: nothing may go out. A lost claim was
			// settled by the pass that reaped it; an error leaves it to the
			// reaper, which gives it back.
			s.log.Error("campaign chunk not sent: its claim could not be marked as sending", "campaign_id", p.campaign.ID,
				"step_id", st.ID, "claim_id", ch.claimID, "still_claimed", mine, "err", err)
			return
		}
	}
	for _, u := range units {
		if len(u.rows) == 0 {
			continue
		}
		sendCtx, cancel := context.WithTimeout(bg, s.opts.SendTimeout)
		msgID, err := s.sender.Send(sendCtx, u.batch)
		cancel()
		var perm *mailer.Error
		switch {
		case err == nil:
			for k, i := range u.rows {
				r := ch.rows[i]
				outcomes = append(outcomes, outcome{
					ParticipantID: r.ParticipantID, Result: ResultSuccess, MessageID: msgID,
					ContactID: r.ContactID, Address: r.Email, Subject: u.batch.Personalizations[k].Subject,
				})
			}
		case errors.As(err, &perm) && perm.Permanent:
			for _, i := range u.rows {
				outcomes = append(outcomes, outcome{ParticipantID: ch.rows[i].ParticipantID, Result: ResultFailed, Detail: providerDetail(perm)})
			}
		default:
			detail := providerDetail(err)
			s.log.Warn("campaign send failed; will retry", "campaign_id", p.campaign.ID, "step_id", st.ID, "recipients", len(u.rows), "err", err)
			for _, i := range u.rows {
				r := ch.rows[i]
				if r.Tries >= s.opts.MaxTries {
					outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: detail})
				} else {
					outcomes = append(outcomes, outcome{ParticipantID: r.ParticipantID, Detail: detail})
				}
			}
		}
	}
	s.record(bg, p, st, recordParams{ClaimID: ch.claimID, Outcomes: outcomes})
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
func (s *Service) record(ctx context.Context, p *pass, st Step, rp recordParams) {
	rp.ActiveSteps, rp.StepID, rp.CampaignID = p.activeSteps, st.ID, p.campaign.ID
	var err error
	for attempt := range 5 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt*attempt) * 200 * time.Millisecond)
		}
		rp.Now = s.now()
		rp.RetryAt = rp.Now.Add(s.opts.RetryAfter)
		var done int
		if done, err = s.st.recordOutcomes(ctx, s.db, rp); err == nil {
			s.count(p, rp.Outcomes, done)
			return
		}
	}
	s.log.Error("record campaign outcomes", "campaign_id", p.campaign.ID, "step_id", st.ID, "claim_id", rp.ClaimID, "err", err)
}

func (s *Service) count(p *pass, outs []outcome, completed int) {
	for _, o := range outs {
		switch o.Result {
		case ResultSuccess:
			p.n.sent.Add(1)
		case ResultFailed:
			p.n.failed.Add(1)
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
func (s *Service) personalize(p *pass, st Step, plan *emailPlan, r claimedRow, token string) (pz mailer.Personalization, html string) {
	fullName := strings.TrimSpace(r.FirstName + " " + r.LastName)
	v := mailmerge.Values{
		Fields: map[string]string{
			"first_name": r.FirstName, "last_name": r.LastName, "full_name": fullName,
			"company": r.Company, "job_title": r.JobTitle, "email": r.Email, "phone": r.Phone,
			"website": r.Website, "birthday": r.Birthday, "book_name": p.book.name,
		},
		Custom:         r.Custom,
		UnsubscribeURL: s.unsubscribePageURL(token),
	}
	pz = mailer.Personalization{
		To: r.Email, ToName: fullName,
		Headers: map[string]string{
			"List-Unsubscribe":      "<" + s.oneClickURL(token, p.campaign.ID) + ">",
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

// unsubscribePageURL is the visible link in the footer: a page that lists
// the contact's campaigns and changes nothing by itself.
func (s *Service) unsubscribePageURL(token string) string {
	return s.baseURL + "/api/unsubscribe?token=" + url.QueryEscape(token)
}

// oneClickURL is the RFC 8058 List-Unsubscribe target.
func (s *Service) oneClickURL(token string, campaignID uuid.UUID) string {
	return s.baseURL + "/api/unsubscribe/confirm?token=" + url.QueryEscape(token) + "&campaign_id=" + campaignID.String()
}

// Unsubscribe tokens are the step id, the participant id (which name the
// completion row of the email) and a 256-bit random secret, URL-safe
// base64 encoded; the database keeps only the SHA-256 of the secret.
const (
	secretSize = 32
	tokenSize  = 16 + 16 + secretSize
)

// newSecrets makes n token secrets and their SHA-256 hashes.
func newSecrets(n int) (secrets, hashes [][]byte) {
	buf := make([]byte, secretSize*n)
	if _, err := rand.Read(buf); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // the platform is broken; never continue without randomness
	}
	secrets, hashes = make([][]byte, n), make([][]byte, n)
	for i := range n {
		secrets[i] = buf[i*secretSize : (i+1)*secretSize]
		sum := sha256.Sum256(secrets[i])
		hashes[i] = sum[:]
	}
	return secrets, hashes
}

// makeToken builds the token of one email.
func makeToken(stepID, participantID uuid.UUID, secret []byte) string {
	var raw [tokenSize]byte
	copy(raw[:16], stepID[:])
	copy(raw[16:32], participantID[:])
	copy(raw[32:], secret)
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// parseToken splits a token into the key of its completion row and the
// SHA-256 of its secret; ok is false for anything that is not a token.
func parseToken(token string) (stepID, participantID uuid.UUID, secretHash []byte, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != tokenSize {
		return uuid.Nil, uuid.Nil, nil, false
	}
	copy(stepID[:], raw[:16])
	copy(participantID[:], raw[16:32])
	sum := sha256.Sum256(raw[32:])
	return stepID, participantID, sum[:], true
}

// --- trigger steps ---

// processTrigger enrolls each due participant's contact into the target
// campaign. Claim, enrollment and completion commit together, so a crash
// leaves either nothing or everything and no claim is ever interrupted.
func (s *Service) processTrigger(ctx context.Context, p *pass, st Step, base claimParams) error {
	after := uuid.Nil
	for ctx.Err() == nil {
		var last uuid.UUID
		var outs []outcome
		var completed int
		limit := p.turn.take(base.Limit)
		if limit == 0 {
			return nil
		}
		var claimed int
		err := postgres.InTx(ctx, s.db, func(tx pgx.Tx) error {
			cp := base
			cp.Limit, cp.After, cp.ClaimID, cp.Now = limit, after, uuid.New(), s.now()
			cp.LeaseUntil = cp.Now.Add(s.opts.Lease)
			rows, l, err := s.st.claimDue(ctx, tx, cp)
			last, claimed = l, len(rows)
			if err != nil || len(rows) == 0 {
				return err
			}
			failDetail := ""
			if st.TriggerCampaignID == nil {
				failDetail = DetailTriggerDeleted
			} else {
				status, err := s.st.lockCampaignStatus(ctx, tx, *st.TriggerCampaignID)
				switch {
				case apperr.Is(err, apperr.NotFound):
					failDetail = DetailTriggerDeleted
				case err != nil:
					return err
				case status == StatusArchived:
					failDetail = DetailTriggerArchived
				}
			}
			var enroll []uuid.UUID
			outs = make([]outcome, 0, len(rows))
			for _, r := range rows {
				switch {
				case failDetail != "":
					outs = append(outs, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: failDetail})
				case r.Suppressed:
					outs = append(outs, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: DetailUnsubscribed})
				default:
					enroll = append(enroll, r.ContactID)
					outs = append(outs, outcome{ParticipantID: r.ParticipantID, Result: ResultSuccess})
				}
			}
			if len(enroll) > 0 {
				if err := s.st.enrollTriggered(ctx, tx, *st.TriggerCampaignID, enroll, cp.Now); err != nil {
					return err
				}
			}
			completed, err = s.st.recordOutcomes(ctx, tx, recordParams{
				ClaimID: cp.ClaimID, Outcomes: outs, Now: cp.Now, RetryAt: cp.Now, ActiveSteps: p.activeSteps,
				StepID: st.ID, CampaignID: p.campaign.ID,
			})
			return err
		})
		p.turn.giveBack(limit - claimed)
		if err != nil {
			return err
		}
		if last == uuid.Nil {
			return nil
		}
		after = last
		for _, o := range outs {
			if o.Result == ResultSuccess {
				p.n.triggered.Add(1)
			} else {
				p.n.failed.Add(1)
			}
		}
		p.n.completed.Add(int64(completed))
	}
	return nil
}
