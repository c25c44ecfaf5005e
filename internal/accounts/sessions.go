package accounts

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
)

// startSession records a new session of userID in db and signs its token.
// A session lives as long as its token; ending it (logout, a password
// change) makes the token useless even before it expires.
// The session keeps the client's address and browser (audit.OriginFrom)
// for the session list.
func (s *Service) startSession(ctx context.Context, db postgres.DB, userID uuid.UUID) (Session, error) {
	return s.startSSOSession(ctx, db, userID, uuid.Nil)
}

// startSSOSession is startSession for a sign-in through ssoTeam's single
// sign-on (uuid.Nil: none); its token says so (auth.Claims.SSOTeamID).
func (s *Service) startSSOSession(ctx context.Context, db postgres.DB, userID, ssoTeam uuid.UUID) (Session, error) {
	sid, err := uuid.NewRandom()
	if err != nil {
		return Session{}, apperr.Wrap(err, apperr.Internal, "session id")
	}
	exp := s.tokens.Expiry()
	origin := audit.OriginFrom(ctx)
	if err := s.st.insertSession(ctx, db, sid, userID, s.now(), exp, origin.IP, origin.UserAgent); err != nil {
		return Session{}, err
	}
	tok, err := s.tokens.IssueSSO(userID, sid, ssoTeam, exp)
	return Session{Token: tok, ExpiresAt: exp, SessionID: sid}, err
}

var errSessionEnded = apperr.New(apperr.Unauthorized, "This session has ended (logged out or password changed); log in again.")

// CheckSession tells whether a verified token's session is still open: one
// primary-key lookup, remembered for sessionCacheTTL, so a busy dashboard
// costs about one query per session and second, and a session ended on
// another instance is refused there within that time.
func (s *Service) CheckSession(ctx context.Context, c auth.Claims) error {
	// Wall time, not the injected clock: it only ages this instance's
	// cache; whether the session is open is the database's answer.
	now := time.Now()
	if s.sessions.open(c, now) {
		return nil
	}
	ok, seen, err := s.st.sessionSeen(ctx, s.db, c.SessionID, c.UserID)
	if err != nil {
		return err
	}
	if !ok {
		return errSessionEnded
	}
	s.sessions.put(c, now.Add(sessionCacheTTL))
	// last_seen_at is kept to the minute, as a key's last use: the
	// session list needs no more, and a write per request would cost more
	// than the lookup.
	if seen == nil || now.Sub(*seen) > time.Minute {
		if err := s.st.touchSession(ctx, s.db, c.SessionID, now); err != nil {
			s.log.WarnContext(ctx, "record session use", "err", err)
		}
	}
	return nil
}

// SessionInfo is one open session of a user, as the session list shows it.
type SessionInfo struct {
	ID         uuid.UUID `json:"id"`
	CreatedAt  time.Time `json:"created_at"`
	LastSeenAt time.Time `json:"last_seen_at"`
	IP         string    `json:"ip"`
	UserAgent  string    `json:"user_agent"`
	// Current marks the session of the request that asked.
	Current bool `json:"current"`
}

// Sessions lists the actor's open sessions, most recently seen first.
func (s *Service) Sessions(ctx context.Context, actor *auth.Actor) ([]SessionInfo, error) {
	if actor.IsKey() {
		return nil, errNeedsUser
	}
	list, err := s.st.sessionsOf(ctx, s.db, actor.UserID, s.now())
	for i := range list {
		list[i].Current = list[i].ID == actor.SessionID
	}
	return list, err
}

// EndSession ends one of the actor's sessions: its token is refused here
// at once and on every other instance within sessionCacheTTL.
func (s *Service) EndSession(ctx context.Context, actor *auth.Actor, sid uuid.UUID) error {
	if actor.IsKey() {
		return errNeedsUser
	}
	ok, err := s.st.deleteSessionOf(ctx, s.db, sid, actor.UserID)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.NotFoundf("You have no open session with this id.")
	}
	s.sessions.forgetSession(sid)
	return nil
}

// Logout ends the actor's session.
func (s *Service) Logout(ctx context.Context, actor *auth.Actor) error {
	if actor.IsKey() || actor.SessionID == uuid.Nil {
		return apperr.New(apperr.Unauthorized, "Only a login token can log out.")
	}
	if err := s.st.deleteSession(ctx, s.db, actor.SessionID); err != nil {
		return err
	}
	s.sessions.forgetSession(actor.SessionID)
	return nil
}

// sessionCacheTTL bounds how long an ended session may still be accepted
// by an instance other than the one that ended it: a logged-out or
// revoked token must stop working everywhere within a second.
const sessionCacheTTL = 500 * time.Millisecond

type openSession struct {
	userID uuid.UUID
	until  time.Time
}

// sessionCache remembers sessions found open, by session id.
type sessionCache struct {
	mu      sync.Mutex
	entries map[uuid.UUID]openSession
}

const sessionCacheMax = 10000

func (c *sessionCache) open(cl auth.Claims, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[cl.SessionID]
	return ok && e.userID == cl.UserID && now.Before(e.until)
}

func (c *sessionCache) put(cl auth.Claims, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= sessionCacheMax {
		c.entries = map[uuid.UUID]openSession{}
	}
	c.entries[cl.SessionID] = openSession{userID: cl.UserID, until: until}
}

func (c *sessionCache) forgetSession(sid uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, sid)
}

func (c *sessionCache) forgetUser(userID uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for sid, e := range c.entries {
		if e.userID == userID {
			delete(c.entries, sid)
		}
	}
}
