package campaigns

import (
	"context"

	"github.com/google/uuid"
	"github.com/riverqueue/river/rivertype"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/validate"
)

// Service holds the campaign rules of requests: templates, campaigns,
// steps, participants, settings, statistics, test sends, images and the
// unsubscribe page. Background processing is the Runner's.
type Service struct {
	shared
	queue      Queue
	suppressor suppression.Suppressor
}

// NewService wires the service.
func NewService(d Deps) *Service {
	sh := newShared(d)
	return &Service{shared: sh, queue: d.Queue, suppressor: suppression.New(sh.now).WithOutbox(d.Outbox)}
}

// ErrAddonRequired answers campaign requests of teams without the add-on.
var ErrAddonRequired = apperr.New(apperr.AddonRequired, "Campaign add-on is required")

var (
	errPaidRequired       = apperr.New(apperr.AddonRequired, "Campaign add-on is required: running campaigns needs the paid add-on, a trial cannot send.")
	errTemplateNotFound   = apperr.NotFoundf("No email template with this id in the book.")
	errCampaignNotFound   = apperr.NotFoundf("No campaign with this id.")
	errStepNotFound       = apperr.NotFoundf("No step with this id in the campaign.")
	errParticipantMissing = apperr.NotFoundf("No participant with this id in the campaign.")
	errContactNotFound    = apperr.NotFoundf("No contact with this id.")
)

// requireAddon checks the team may use campaign features (trial or paid).
func (s *Service) requireAddon(ctx context.Context, teamID uuid.UUID) error {
	a, err := s.accounts.Addon(ctx, teamID)
	if err != nil {
		return err
	}
	if !a.Enabled() {
		return ErrAddonRequired
	}
	return nil
}

// bookFor checks the scope's book for a campaign request: the team must
// have the add-on, and the caller must hold min. Membership was proven
// when the book was resolved; the add-on is checked before the role so a
// team member learns first what the whole team lacks.
func (s *Service) bookFor(ctx context.Context, sc access.Scope, min auth.Role) error {
	// Viewer is what resolving the book proved: this only refuses a scope
	// without a book, and costs no query.
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return err
	}
	if err := s.requireAddon(ctx, sc.Book.TeamID); err != nil {
		return err
	}
	return sc.Require(ctx, min)
}

// scoped is a resource addressed by id with the team that owns it.
type scoped struct {
	campaign Campaign
	teamID   uuid.UUID
}

// campaignFor loads a campaign addressed by id. When the request says
// which team it acts for (the scope's book, or the API key's team), that
// team's add-on comes first: a team without it hears so whatever the id,
// rather than that an id it could never have made is unknown. Then
// NOT_FOUND outside the caller's team or the scope's book, the add-on of
// the campaign's team, and the role.
func (s *Service) campaignFor(ctx context.Context, sc access.Scope, id uuid.UUID, min auth.Role) (scoped, error) {
	caller := uuid.Nil
	switch {
	case sc.InBook():
		caller = sc.Book.TeamID
	case sc.Actor.IsKey():
		caller = sc.Actor.KeyTeamID
	}
	if caller != uuid.Nil {
		if err := s.requireAddon(ctx, caller); err != nil {
			return scoped{}, err
		}
	}
	c, teamID, err := s.st.campaignRef(ctx, s.db, id)
	if err != nil {
		return scoped{}, err
	}
	if sc.InBook() && sc.Book.ID != c.BookID {
		return scoped{}, errCampaignNotFound
	}
	if err := s.authorize(ctx, sc.Actor, teamID, min, errCampaignNotFound, teamID == caller); err != nil {
		return scoped{}, err
	}
	return scoped{campaign: c, teamID: teamID}, nil
}

// authorize checks membership (outsider gets notFound), the add-on
// (unless the caller checked it already), then the role.
func (s *Service) authorize(ctx context.Context, actor *auth.Actor, teamID uuid.UUID, min auth.Role, notFound error, addonChecked bool) error {
	if err := actor.Require(ctx, teamID, auth.RoleViewer, notFound); err != nil {
		return err
	}
	if !addonChecked {
		if err := s.requireAddon(ctx, teamID); err != nil {
			return err
		}
	}
	return actor.Require(ctx, teamID, min, notFound)
}

// Run asks for an active campaign to be processed in the background
// (member, paid add-on). started is false when a run of the campaign is
// already queued or running: nothing new is started.
func (s *Service) Run(ctx context.Context, sc access.Scope, campaignID uuid.UUID) (started bool, err error) {
	ref, err := s.campaignFor(ctx, sc, campaignID, auth.RoleMember)
	if err != nil {
		return false, err
	}
	// The campaign's own state first: it holds whatever the team pays.
	if ref.campaign.Status != StatusActive {
		return false, apperr.New(apperr.InvalidStatus, "Only active campaigns can run; this one is %s. Set its status to active first.", ref.campaign.Status)
	}
	addon, err := s.accounts.Addon(ctx, ref.teamID)
	if err != nil {
		return false, err
	}
	if !addon.Paid() {
		return false, errPaidRequired
	}
	return s.queueRun(ctx, campaignID)
}

// maxRunsBehind bounds the runs of one campaign queued behind running
// ones: each is asked for while all the others run, so there are never
// more of them than workers.
const maxRunsBehind = 64

// queueRun queues a run whose pass starts after this call, so it reads
// whatever the caller changed before asking. A run still queued is such
// a run already (started false). A running one is not: its pass may
// have read the steps, or claimed, before the change (a step made due, a
// participant enrolled), and the queue would take it for the run asked
// for, leaving the change to the next scheduler tick; so a run is queued
// behind it. River's uniqueness always counts running jobs, hence a job
// of its own: RunArgs.Behind names the running one.
func (s *Service) queueRun(ctx context.Context, campaignID uuid.UUID) (started bool, err error) {
	args := RunArgs{CampaignID: campaignID}
	for range maxRunsBehind {
		res, err := s.queue.Insert(ctx, args, nil)
		if err != nil {
			return false, apperr.Wrap(err, apperr.Internal, "queue campaign run")
		}
		if !res.UniqueSkippedAsDuplicate {
			return true, nil
		}
		if res.Job == nil || res.Job.State != rivertype.JobStateRunning {
			return false, nil
		}
		args.Behind = res.Job.ID
	}
	return false, apperr.New(apperr.Internal, "queue campaign run: %d runs of the campaign are running", maxRunsBehind)
}

// --- templates ---

// Templates lists the book's templates sorted by name.
func (s *Service) Templates(ctx context.Context, sc access.Scope) ([]Template, error) {
	if err := s.bookFor(ctx, sc, auth.RoleViewer); err != nil {
		return nil, err
	}
	return s.st.templates(ctx, s.db, sc.Book.ID)
}

// Template returns one template of the book.
func (s *Service) Template(ctx context.Context, sc access.Scope, id uuid.UUID) (Template, error) {
	if err := s.bookFor(ctx, sc, auth.RoleViewer); err != nil {
		return Template{}, err
	}
	return s.st.template(ctx, s.db, sc.Book.ID, id)
}

// CreateTemplate adds a template to the book (member).
func (s *Service) CreateTemplate(ctx context.Context, sc access.Scope, in TemplateInput) (Template, error) {
	if err := s.bookFor(ctx, sc, auth.RoleMember); err != nil {
		return Template{}, err
	}
	t := Template{BookID: sc.Book.ID, Name: in.Name, Subject: in.Subject, BodyHTML: in.BodyHTML, CreatedBy: sc.Actor.CreatedBy()}
	if err := normalizeTemplate(&t); err != nil {
		return Template{}, err
	}
	return s.st.insertTemplate(ctx, s.db, t, s.now())
}

// UpdateTemplate changes a template (member).
func (s *Service) UpdateTemplate(ctx context.Context, sc access.Scope, id uuid.UUID, p TemplatePatch) (Template, error) {
	if err := s.bookFor(ctx, sc, auth.RoleMember); err != nil {
		return Template{}, err
	}
	if !p.Name.Set && !p.Subject.Set && !p.BodyHTML.Set {
		return Template{}, apperr.Invalidf("Send at least one of name, subject, body_html.")
	}
	if p.Name.Null || p.Subject.Null || p.BodyHTML.Null {
		return Template{}, apperr.Invalidf("Template fields cannot be null; send an empty string to clear subject or body_html.")
	}
	t, err := s.st.template(ctx, s.db, sc.Book.ID, id)
	if err != nil {
		return Template{}, err
	}
	p.Name.ApplyTo(&t.Name)
	p.Subject.ApplyTo(&t.Subject)
	p.BodyHTML.ApplyTo(&t.BodyHTML)
	if err := normalizeTemplate(&t); err != nil {
		return Template{}, err
	}
	return s.st.updateTemplate(ctx, s.db, t, s.now())
}

// DeleteTemplate removes a template (member). Email steps that used it stay
// and record "email template was deleted" until they are given another.
func (s *Service) DeleteTemplate(ctx context.Context, sc access.Scope, id uuid.UUID) error {
	if err := s.bookFor(ctx, sc, auth.RoleMember); err != nil {
		return err
	}
	return s.st.deleteTemplate(ctx, s.db, sc.Book.ID, id)
}

// --- campaigns ---

// Campaigns lists the book's campaigns with their counts, newest first.
func (s *Service) Campaigns(ctx context.Context, sc access.Scope) ([]CampaignListItem, error) {
	if err := s.bookFor(ctx, sc, auth.RoleViewer); err != nil {
		return nil, err
	}
	return s.st.campaigns(ctx, s.db, sc.Book.ID)
}

// Campaign returns a campaign with its steps in order.
func (s *Service) Campaign(ctx context.Context, sc access.Scope, id uuid.UUID) (CampaignDetail, error) {
	ref, err := s.campaignFor(ctx, sc, id, auth.RoleViewer)
	if err != nil {
		return CampaignDetail{}, err
	}
	steps, err := s.st.steps(ctx, s.db, id)
	if err != nil {
		return CampaignDetail{}, err
	}
	if steps == nil {
		steps = []Step{}
	}
	return CampaignDetail{Campaign: ref.campaign, Steps: steps}, nil
}

// CreateCampaign adds a draft campaign to the book (member).
func (s *Service) CreateCampaign(ctx context.Context, sc access.Scope, in CampaignInput) (Campaign, error) {
	if err := s.bookFor(ctx, sc, auth.RoleMember); err != nil {
		return Campaign{}, err
	}
	c := Campaign{BookID: sc.Book.ID, Name: in.Name, Description: in.Description, Status: StatusDraft, CreatedBy: sc.Actor.CreatedBy(),
		AudienceSegmentID: in.AudienceSegmentID, ExitOnSegmentLeave: in.ExitOnSegmentLeave, EntryEvent: in.EntryEvent}
	if err := normalizeCampaign(&c); err != nil {
		return Campaign{}, err
	}
	if err := s.checkAudience(ctx, c); err != nil {
		return Campaign{}, err
	}
	return s.st.insertCampaign(ctx, s.db, c, s.now())
}

// UpdateCampaign changes name, description or status (member). Any status
// may follow any status.
func (s *Service) UpdateCampaign(ctx context.Context, sc access.Scope, id uuid.UUID, p CampaignPatch) (Campaign, error) {
	ref, err := s.campaignFor(ctx, sc, id, auth.RoleMember)
	if err != nil {
		return Campaign{}, err
	}
	if !p.Name.Set && !p.Description.Set && !p.Status.Set && !p.AudienceSegmentID.Set && !p.ExitOnSegmentLeave.Set && !p.EntryEvent.Set {
		return Campaign{}, apperr.Invalidf("Send at least one of name, description, status, audience_segment_id, exit_on_segment_leave, entry_event.")
	}
	if p.Name.Null || p.Description.Null || p.Status.Null || p.ExitOnSegmentLeave.Null {
		return Campaign{}, apperr.Invalidf("Campaign fields cannot be null.")
	}
	c := ref.campaign
	p.Name.ApplyTo(&c.Name)
	p.Description.ApplyTo(&c.Description)
	p.Status.ApplyTo(&c.Status)
	p.ExitOnSegmentLeave.ApplyTo(&c.ExitOnSegmentLeave)
	if p.AudienceSegmentID.Set {
		c.AudienceSegmentID = nil
		if !p.AudienceSegmentID.Null {
			c.AudienceSegmentID = &p.AudienceSegmentID.V
		}
	}
	if p.EntryEvent.Set {
		c.EntryEvent = nil
		if !p.EntryEvent.Null {
			c.EntryEvent = &p.EntryEvent.V
		}
	}
	if err := normalizeCampaign(&c); err != nil {
		return Campaign{}, err
	}
	if err := s.checkAudience(ctx, c); err != nil {
		return Campaign{}, err
	}
	return s.st.updateCampaign(ctx, s.db, c, s.now())
}

// DeleteCampaign removes a campaign with its steps, participants and
// completion records (member).
func (s *Service) DeleteCampaign(ctx context.Context, sc access.Scope, id uuid.UUID) error {
	if _, err := s.campaignFor(ctx, sc, id, auth.RoleMember); err != nil {
		return err
	}
	return s.st.deleteCampaign(ctx, s.db, id)
}

// --- participants ---

// Enroll enrolls contacts of the campaign's book by id (member). Contacts
// already enrolled (in any participant status), suppressed contacts and
// contacts of other books are skipped and not counted.
func (s *Service) Enroll(ctx context.Context, sc access.Scope, campaignID uuid.UUID, in EnrollInput) (int64, error) {
	ref, err := s.campaignFor(ctx, sc, campaignID, auth.RoleMember)
	if err != nil {
		return 0, err
	}
	if in.SegmentID != nil {
		if len(in.ContactIDs) > 0 {
			return 0, apperr.Invalidf("`segment_id` replaces contact_ids: send one of the two, not both.")
		}
		return s.enrollSegment(ctx, ref, *in.SegmentID, sc.Actor.CreatedBy())
	}
	if len(in.ContactIDs) == 0 {
		return 0, apperr.Invalidf("`contact_ids` is required and must hold at least one contact id (or send segment_id instead).")
	}
	if len(in.ContactIDs) > MaxEnrollIDs {
		return 0, apperr.Invalidf("`contact_ids` may hold at most %d ids per request.", MaxEnrollIDs)
	}
	var n int64
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.lockEnrollable(ctx, tx, campaignID); err != nil {
			return err
		}
		n, err = s.st.enrollContacts(ctx, tx, campaignID, ref.campaign.BookID, in.ContactIDs, s.now(), sc.Actor.CreatedBy())
		return err
	})
	return n, err
}

// EnrollLabel enrolls every contact of the book carrying the label (member).
func (s *Service) EnrollLabel(ctx context.Context, sc access.Scope, campaignID uuid.UUID, in EnrollLabelInput) (int64, error) {
	ref, err := s.campaignFor(ctx, sc, campaignID, auth.RoleMember)
	if err != nil {
		return 0, err
	}
	if in.LabelID == nil {
		return 0, apperr.Invalidf("`label_id` is required.")
	}
	var n int64
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		// A label the team does not have is not found, as everywhere; one
		// of another of its books is the wrong input. The label is held
		// until the enrollment commits.
		bookID, teamID, found, err := books.LabelOwner(ctx, tx, *in.LabelID)
		if err != nil {
			return err
		}
		if !found || teamID != ref.teamID {
			return apperr.NotFoundf("No label with this id.")
		}
		if bookID != ref.campaign.BookID {
			return apperr.Invalidf("`label_id` must name a label of the campaign's book.")
		}
		if err := s.lockEnrollable(ctx, tx, campaignID); err != nil {
			return err
		}
		n, err = s.st.enrollLabel(ctx, tx, campaignID, ref.campaign.BookID, *in.LabelID, s.now(), sc.Actor.CreatedBy())
		return err
	})
	return n, err
}

// lockEnrollable holds the campaign row while enrolling so an archive or a
// delete cannot slip in between the check and the insert.
func (s *Service) lockEnrollable(ctx context.Context, tx *postgres.Tx, campaignID uuid.UUID) error {
	status, err := s.st.lockCampaignStatus(ctx, tx, campaignID)
	if err != nil {
		return err
	}
	if status == StatusArchived {
		return apperr.New(apperr.InvalidStatus, "The campaign is archived; set another status before enrolling contacts.")
	}
	return nil
}

// Participants lists the campaign's participants, removed ones excluded.
func (s *Service) Participants(ctx context.Context, sc access.Scope, campaignID uuid.UUID, pg Page) (Paged[Participant], error) {
	if _, err := s.campaignFor(ctx, sc, campaignID, auth.RoleViewer); err != nil {
		return Paged[Participant]{}, err
	}
	return s.st.participants(ctx, s.db, campaignID, pg)
}

// RemoveParticipant marks a participant removed: no more campaign emails
// reach it (member). Removing a removed participant changes nothing.
func (s *Service) RemoveParticipant(ctx context.Context, sc access.Scope, campaignID, participantID uuid.UUID) error {
	if _, err := s.campaignFor(ctx, sc, campaignID, auth.RoleMember); err != nil {
		return err
	}
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		return s.st.removeParticipant(ctx, tx, campaignID, participantID, s.now())
	})
}

// History lists a participant's completion records in step order.
func (s *Service) History(ctx context.Context, sc access.Scope, campaignID, participantID uuid.UUID) ([]HistoryItem, error) {
	if _, err := s.campaignFor(ctx, sc, campaignID, auth.RoleViewer); err != nil {
		return nil, err
	}
	if _, err := s.st.participantStatus(ctx, s.db, campaignID, participantID); err != nil {
		return nil, err
	}
	return s.st.history(ctx, s.db, campaignID, participantID)
}

// Stats summarises the campaign and each of its steps.
func (s *Service) Stats(ctx context.Context, sc access.Scope, campaignID uuid.UUID) (Stats, error) {
	if _, err := s.campaignFor(ctx, sc, campaignID, auth.RoleViewer); err != nil {
		return Stats{}, err
	}
	return s.st.stats(ctx, s.db, campaignID)
}

// StepContacts lists the completion records of one step with their
// contacts; result filters to success or failed ("" for all).
func (s *Service) StepContacts(ctx context.Context, sc access.Scope, campaignID, stepID uuid.UUID, result string, pg Page) (Paged[StepContact], error) {
	if _, err := s.campaignFor(ctx, sc, campaignID, auth.RoleViewer); err != nil {
		return Paged[StepContact]{}, err
	}
	filter, err := ParseStepContactFilter(result)
	if err != nil {
		return Paged[StepContact]{}, err
	}
	if _, err := s.st.step(ctx, s.db, campaignID, stepID, false); err != nil {
		return Paged[StepContact]{}, err
	}
	return s.st.stepContacts(ctx, s.db, stepID, filter, pg)
}

// ContactCampaigns lists every campaign the contact is or was enrolled in.
func (s *Service) ContactCampaigns(ctx context.Context, actor *auth.Actor, contactID uuid.UUID) ([]ContactCampaign, error) {
	_, teamID, err := s.st.contactRef(ctx, s.db, contactID)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, actor, teamID, auth.RoleViewer, errContactNotFound, false); err != nil {
		return nil, err
	}
	return s.st.contactCampaigns(ctx, s.db, contactID)
}

// validateEmail checks one address the way struct tags do.
func validateEmail(field, addr string) error {
	v := struct {
		Addr string `validate:"required,email,max=254"`
	}{addr}
	if err := validate.Struct(v); err != nil {
		return apperr.Invalidf("`%s` must be a valid email address.", field)
	}
	return nil
}
