package delivery

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-message"
	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/suppression"
)

// Mailbox is a book's bounce mailbox, its password in the clear.
type Mailbox struct {
	BookID             uuid.UUID
	Host               string
	Port               int
	Username, Password string
	Folder             string
}

// Mailboxes lists the bounce mailboxes to read (campaigns, which owns
// the email settings and their sealed secrets).
type Mailboxes interface {
	BounceMailboxes(ctx context.Context) ([]Mailbox, error)
}

// BounceReadArgs is the periodic job that reads every bounce mailbox.
// At most one is queued or running, so one instance reads at a time.
type BounceReadArgs struct{}

// Kind names the job in river_job.
func (BounceReadArgs) Kind() string { return "delivery_bounce_mailboxes" }

// InsertOpts makes the read unique while queued or running; a failed
// one waits for the next.
func (BounceReadArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: jobs.QueuedStates}}
}

// readEvery is how often the bounce mailboxes are read.
const readEvery = 5 * time.Minute

// maxPerRead bounds the messages read from one mailbox in one run (the
// rest wait for the next).
const maxPerRead = 500

// BounceReader reads the SMTP books' bounce mailboxes over IMAP (implicit
// TLS): new delivery status notifications that name an email a book sent
// are applied like the provider's events and flagged \Seen; anything
// else is left unread.
type BounceReader struct {
	river.WorkerDefaults[BounceReadArgs]
	s     *Service
	boxes Mailboxes
	roots *x509.CertPool
	log   *slog.Logger
}

// NewBounceReader reads the mailboxes boxes lists into s; roots are the
// trusted certificate authorities (nil: the system's).
func NewBounceReader(s *Service, boxes Mailboxes, roots *x509.CertPool, log *slog.Logger) *BounceReader {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &BounceReader{s: s, boxes: boxes, roots: roots, log: log}
}

// Jobs registers the reader and its periodic job.
func (r *BounceReader) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) {
	if err := river.AddWorkerSafely[BounceReadArgs](w, r); err != nil {
		return nil, err
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(readEvery),
		func() (river.JobArgs, *river.InsertOpts) { return BounceReadArgs{}, nil },
		&river.PeriodicJobOpts{ID: "delivery_bounce_mailboxes"})}, nil
}

// Timeout bounds one run over every mailbox.
func (r *BounceReader) Timeout(*river.Job[BounceReadArgs]) time.Duration { return 4 * time.Minute }

// Work reads every mailbox; one that fails is logged and the others are
// read.
func (r *BounceReader) Work(ctx context.Context, _ *river.Job[BounceReadArgs]) error {
	boxes, err := r.boxes.BounceMailboxes(ctx)
	if err != nil {
		return err
	}
	for _, m := range boxes {
		res, err := r.Read(ctx, m)
		if err != nil {
			r.log.Warn("bounce mailbox not read", "book_id", m.BookID, "host", m.Host, "err", err)
			continue
		}
		if res.Received > 0 {
			r.log.Info("bounce mailbox read", "book_id", m.BookID, "received", res.Received, "applied", res.Applied, "duplicates", res.Duplicates, "ignored", res.Ignored)
		}
	}
	return nil
}

// Read reads one mailbox's unseen messages and applies the DSNs among
// them.
func (r *BounceReader) Read(ctx context.Context, m Mailbox) (IngestResult, error) {
	addr := net.JoinHostPort(m.Host, strconv.Itoa(m.Port))
	dialer := &net.Dialer{Timeout: 15 * time.Second}
	c, err := imapclient.DialTLS(addr, &imapclient.Options{
		TLSConfig: &tls.Config{ServerName: m.Host, RootCAs: r.roots, MinVersion: tls.VersionTLS12},
		Dialer:    dialer,
	})
	if err != nil {
		return IngestResult{}, fmt.Errorf("connect to %s: %w", addr, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	if err := c.Login(m.Username, m.Password).Wait(); err != nil {
		return IngestResult{}, fmt.Errorf("login: %w", err)
	}
	if _, err := c.Select(m.Folder, nil).Wait(); err != nil {
		return IngestResult{}, fmt.Errorf("select %s: %w", m.Folder, err)
	}
	found, err := c.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
	if err != nil {
		return IngestResult{}, fmt.Errorf("search: %w", err)
	}
	uids := found.AllUIDs()
	if len(uids) > maxPerRead {
		uids = uids[:maxPerRead]
	}
	if len(uids) == 0 {
		return IngestResult{}, nil
	}
	// PEEK: reading does not set \Seen; only handled messages get it.
	body := &imap.FetchItemBodySection{Peek: true}
	msgs, err := c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{body}}).Collect()
	if err != nil {
		return IngestResult{}, fmt.Errorf("fetch: %w", err)
	}
	now := r.s.now()
	var evs []event
	byUID := map[imap.UID][]int{}
	for _, msg := range msgs {
		for _, e := range parseDSN(msg.FindBodySection(body), now) {
			byUID[msg.UID] = append(byUID[msg.UID], len(evs))
			evs = append(evs, e)
		}
	}
	if len(evs) == 0 {
		return IngestResult{}, nil
	}
	res, handled, err := r.s.applyDSNs(ctx, m.BookID, evs, now)
	if err != nil {
		return IngestResult{}, err
	}
	var seen imap.UIDSet
	for uid, idx := range byUID {
		for _, i := range idx {
			if handled[i] {
				seen.AddNum(uid)
				break
			}
		}
	}
	if len(seen) > 0 {
		if err := c.Store(seen, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{imap.FlagSeen}, Silent: true}, nil).Close(); err != nil {
			// Applied and committed; the next read finds them again and
			// counts them as duplicates.
			return res, fmt.Errorf("flag seen: %w", err)
		}
	}
	_ = c.Logout().Wait()
	return res, nil
}

// applyDSNs applies the events and reports which named an email of the
// book (those messages are handled, whatever else they held).
func (s *Service) applyDSNs(ctx context.Context, bookID uuid.UUID, evs []event, now time.Time) (IngestResult, map[int]bool, error) {
	res, named, err := s.applyByMessageID(ctx, bookID, evs, now)
	if err != nil {
		return IngestResult{}, nil, err
	}
	handled := map[int]bool{}
	for i, e := range evs {
		if named[e.id] {
			handled[i] = true
		}
	}
	return res, handled, nil
}

// parseDSN reads a delivery status notification (RFC 3464): a
// multipart/report of report-type delivery-status whose
// message/delivery-status part has, per recipient, Action failed (others
// are delays or successes and are not bounces), and whose quoted original
// names its Message-ID. A 5.x.x status is a hard bounce, 4.x.x soft.
func parseDSN(raw []byte, now time.Time) []event {
	if len(raw) == 0 {
		return nil
	}
	ent, err := message.Read(bytes.NewReader(raw))
	if err != nil && !message.IsUnknownCharset(err) {
		return nil
	}
	mt, params, _ := ent.Header.ContentType()
	if mt != "multipart/report" || !strings.EqualFold(params["report-type"], "delivery-status") {
		return nil
	}
	dsnID := normalizeID(ent.Header.Get("Message-Id"))
	mr := ent.MultipartReader()
	if mr == nil {
		return nil
	}
	var status []byte
	var original string
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		pt, _, _ := p.Header.ContentType()
		switch pt {
		case "message/delivery-status", "message/global-delivery-status":
			status, _ = io.ReadAll(io.LimitReader(p.Body, 64<<10))
		case "text/rfc822-headers", "message/rfc822", "message/global-headers":
			h, err := textproto.NewReader(bufio.NewReader(io.LimitReader(p.Body, 256<<10))).ReadMIMEHeader()
			if err == nil || errors.Is(err, io.EOF) {
				original = normalizeID(h.Get("Message-Id"))
			}
		}
	}
	if status == nil || original == "" {
		return nil
	}
	var out []event
	tr := textproto.NewReader(bufio.NewReader(bytes.NewReader(status)))
	first := true
	for n := 0; n < 100; n++ {
		h, err := tr.ReadMIMEHeader()
		if len(h) == 0 && err != nil {
			break
		}
		if first { // the per-message fields
			first = false
			if h.Get("Final-Recipient") == "" {
				continue
			}
		}
		if !strings.EqualFold(strings.TrimSpace(h.Get("Action")), "failed") {
			continue
		}
		rcpt := h.Get("Final-Recipient")
		if _, addr, ok := strings.Cut(rcpt, ";"); ok {
			rcpt = addr
		}
		rcpt = strings.ToLower(strings.Trim(strings.TrimSpace(rcpt), "<>"))
		code := strings.TrimSpace(h.Get("Status"))
		detail := strings.TrimSpace(h.Get("Diagnostic-Code"))
		if _, d, ok := strings.Cut(detail, ";"); ok {
			detail = strings.TrimSpace(d)
		}
		if detail == "" {
			detail = code
		}
		e := event{messageID: original, email: rcpt, at: now, detail: clip(detail, maxDetail)}
		switch {
		case strings.HasPrefix(code, "5."):
			e.kind, e.suppress = kindBounced, suppression.ReasonBounce
		case strings.HasPrefix(code, "4."):
			e.kind = kindBlocked
		default:
			continue
		}
		if rcpt == "" {
			e.suppress = ""
		}
		key := dsnID
		if key == "" {
			key = original
		}
		e.id = clip("dsn:"+key+":"+rcpt, 200)
		out = append(out, e)
		if err != nil {
			break
		}
	}
	return out
}

func normalizeID(id string) string {
	id = strings.TrimSpace(id)
	id = strings.TrimPrefix(id, "<")
	return strings.TrimSpace(strings.TrimSuffix(id, ">"))
}
