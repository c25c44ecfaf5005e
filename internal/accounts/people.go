package accounts

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/accountmail"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/validate"
)

// Lifetimes of emailed links.
const (
	InvitationLifetime = 7 * 24 * time.Hour
	ResetLifetime      = time.Hour
)

// Invitation is a pending invitation to a team. Its token is only ever in
// the email.
type Invitation struct {
	ID        uuid.UUID  `json:"id"`
	TeamID    uuid.UUID  `json:"team_id"`
	Email     string     `json:"email"`
	Role      string     `json:"role"`
	InvitedBy *uuid.UUID `json:"invited_by"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
}

// InvitationInput invites an address to a team.
type InvitationInput struct {
	Email string        `json:"email" validate:"required,email,max=254"`
	Role  auth.RoleName `json:"role" validate:"required,enum"`
}

// InvitationView is what the holder of an invitation link may see.
type InvitationView struct {
	Team          TeamBrief `json:"team"`
	Email         string    `json:"email"`
	Role          string    `json:"role"`
	ExpiresAt     time.Time `json:"expires_at"`
	AccountExists bool      `json:"account_exists"`
}

// AcceptInput accepts an invitation: with a login of the invited address,
// or with Name and Password to create that account.
type AcceptInput struct {
	Token    string `json:"token" validate:"required,max=200"`
	Name     string `json:"name"`
	Password string `json:"password"`
}

// newAccountInput is what creating an account from an invitation needs.
type newAccountInput struct {
	Name     string `json:"name" validate:"required,max=200"`
	Password string `json:"password" validate:"required,min=8,max=72"`
}

// Accepted is the answer to an accepted invitation.
type Accepted struct {
	Session
	Team TeamBrief `json:"team"`
	Role string    `json:"role"`
}

var errInvitationGone = apperr.NotFoundf("This invitation link is unknown, used, replaced, revoked or expired; ask the team's admin for a new one.")

// Invite invites an address to the team (admin; owner to invite an owner)
// and emails the link. A pending invitation of the same address is
// replaced, so its link stops working.
func (s *Service) Invite(ctx context.Context, sc access.Scope, in InvitationInput) (Invitation, error) {
	in.Email = strings.TrimSpace(in.Email)
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return Invitation{}, err
	}
	if err := validate.Struct(in); err != nil {
		return Invitation{}, err
	}
	role := string(in.Role)
	if err := requireGrant(ctx, sc, role); err != nil {
		return Invitation{}, err
	}
	token, hash, err := auth.NewLinkToken()
	if err != nil {
		return Invitation{}, err
	}
	now := s.now()
	var inv Invitation
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		member, err := s.st.isMemberByEmail(ctx, tx, sc.Team, in.Email)
		if err != nil {
			return err
		}
		if member {
			return apperr.New(apperr.Conflict, "%s is already a member of the team; change their role instead.", in.Email)
		}
		inv, err = s.st.replaceInvitation(ctx, tx, Invitation{
			TeamID: sc.Team, Email: in.Email, Role: role, InvitedBy: sc.Actor.CreatedBy(), CreatedAt: now, ExpiresAt: now.Add(InvitationLifetime),
		}, hash)
		if err != nil {
			return err
		}
		team, err := s.st.team(ctx, tx, sc.Team)
		if err != nil {
			return err
		}
		inviter, err := s.st.user(ctx, tx, sc.Actor.UserID)
		if err != nil {
			return err
		}
		if err := s.record(ctx, tx, sc.Actor, sc.Team, "member.invited", "invitation", inv.ID.String(),
			map[string]any{"email": inv.Email, "role": inv.Role}); err != nil {
			return err
		}
		return s.mail.QueueInvitation(ctx, tx, now, accountmail.Invitation{
			To: in.Email, TeamName: team.Name, Inviter: inviter.Name, Role: role, Token: token, ExpiresAt: inv.ExpiresAt,
		})
	})
	return inv, err
}

// Invitations lists the team's pending invitations (admin).
func (s *Service) Invitations(ctx context.Context, sc access.Scope) ([]Invitation, error) {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return nil, err
	}
	return s.st.pendingInvitations(ctx, s.db, sc.Team, s.now())
}

// RevokeInvitation deletes a pending invitation (admin): its link stops
// working.
func (s *Service) RevokeInvitation(ctx context.Context, sc access.Scope, id uuid.UUID) error {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return err
	}
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		email, err := s.st.deleteInvitation(ctx, tx, sc.Team, id)
		if err != nil {
			return err
		}
		return s.record(ctx, tx, sc.Actor, sc.Team, "invitation.revoked", "invitation", id.String(), map[string]any{"email": email})
	})
}

// LookupInvitation shows a pending invitation to the holder of its token.
func (s *Service) LookupInvitation(ctx context.Context, token string) (InvitationView, error) {
	v, err := s.st.invitationView(ctx, s.db, auth.HashLinkToken(token), s.now())
	if apperr.Is(err, apperr.NotFound) {
		return InvitationView{}, errInvitationGone
	}
	return v, err
}

// AcceptInvitation makes the invited person a member. actor is the
// logged-in account (nil when the person is not logged in): it must have
// the invited address. Without one, in.Name and in.Password create the
// account of the invited address, with no team of its own. Either way the
// token is what proves control of the address, and it works once.
func (s *Service) AcceptInvitation(ctx context.Context, actor *auth.Actor, in AcceptInput) (Accepted, error) {
	if err := validate.Struct(in); err != nil {
		return Accepted{}, err
	}
	hash := auth.HashLinkToken(in.Token)
	now := s.now()
	pending, err := s.st.invitationByHash(ctx, s.db, hash, now, false)
	if err != nil {
		return Accepted{}, err
	}
	var passwordHash string
	if actor == nil {
		acc := newAccountInput{Name: strings.TrimSpace(in.Name), Password: in.Password}
		if err := validate.Struct(acc); err != nil {
			return Accepted{}, err
		}
		in.Name = acc.Name
		if passwordHash, err = auth.HashPassword(acc.Password, s.passwordCost); err != nil {
			return Accepted{}, err
		}
	} else if actor.IsKey() {
		return Accepted{}, apperr.New(apperr.Unauthorized, "Accept an invitation with a login token, not an API key.")
	}
	var res Accepted
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		// Locked and checked again: of two accepts racing, one wins.
		inv, err := s.st.invitationByHash(ctx, tx, hash, now, true)
		if err != nil {
			return err
		}
		if inv.ID != pending.ID {
			return errInvitationGone
		}
		var u User
		if actor != nil {
			if u, err = s.st.user(ctx, tx, actor.UserID); err != nil {
				return err
			}
			if !strings.EqualFold(u.Email, inv.Email) {
				return apperr.Forbiddenf("This invitation is for another email address; log in with the invited address to accept it.")
			}
		} else {
			u, err = s.st.insertUser(ctx, tx, inv.Email, in.Name, passwordHash)
			if apperr.Is(err, apperr.Conflict) {
				return apperr.New(apperr.Conflict, "An account with this email already exists; log in with it, then accept the invitation.")
			}
			if err != nil {
				return err
			}
		}
		m, err := s.st.insertMember(ctx, tx, inv.TeamID, u.ID, inv.Role)
		if err != nil {
			return err
		}
		if err := s.st.markAccepted(ctx, tx, inv.ID, now); err != nil {
			return err
		}
		team, err := s.st.team(ctx, tx, inv.TeamID)
		if err != nil {
			return err
		}
		res.Team, res.Role = TeamBrief{ID: team.ID, Name: team.Name}, inv.Role
		if res.Session, err = s.startSession(ctx, tx, u.ID); err != nil {
			return err
		}
		if err := s.record(ctx, tx, auth.UserActor(u.ID, nil), inv.TeamID, "member.joined", "user", u.ID.String(),
			map[string]any{"email": u.Email, "role": inv.Role, "invitation_id": inv.ID}); err != nil {
			return err
		}
		return s.outbox.Append(ctx, tx, now, memberEvent(events.MemberJoined, inv.TeamID, m))
	})
	return res, err
}
