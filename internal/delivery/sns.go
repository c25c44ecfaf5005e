package delivery

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // SNS SignatureVersion 1 is SHA1withRSA, as Amazon signs it
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// MaxSNSBytes bounds an SNS delivery (SNS messages are at most 256 KB).
const MaxSNSBytes = 1 << 20

// SNSConfig is what SES feedback needs beyond the delivery service.
type SNSConfig struct {
	// CertHosts, when set, are the only hosts (host or host:port) that
	// signing certificates and subscription links may come from, instead
	// of sns.<region>.amazonaws.com (tests).
	CertHosts []string
	// HTTP fetches certificates and confirms subscriptions (nil: a
	// client of its own with a 10 s timeout).
	HTTP *http.Client
}

// SESFeedback takes Amazon SES feedback through Amazon SNS HTTPS
// deliveries: it verifies each message's signature with the certificate
// at its SigningCertURL, confirms subscriptions, and applies bounces,
// complaints, deliveries, opens and clicks as the SendGrid events are
// applied, matched by the SES message id.
type SESFeedback struct {
	s     *Service
	hosts []string
	http  *http.Client

	mu    sync.Mutex
	certs map[string]*x509.Certificate // by URL, fetched once per instance
}

// NewSESFeedback returns the SES feedback intake of s.
func NewSESFeedback(s *Service, c SNSConfig) *SESFeedback {
	if c.HTTP == nil {
		c.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	return &SESFeedback{s: s, hosts: c.CertHosts, http: c.HTTP, certs: map[string]*x509.Certificate{}}
}

// snsMessage is an SNS HTTPS delivery.
type snsMessage struct {
	Type             string  `json:"Type"`
	MessageID        string  `json:"MessageId"`
	Token            string  `json:"Token"`
	TopicArn         string  `json:"TopicArn"`
	Subject          *string `json:"Subject"`
	Message          string  `json:"Message"`
	SubscribeURL     string  `json:"SubscribeURL"`
	Timestamp        string  `json:"Timestamp"`
	SignatureVersion string  `json:"SignatureVersion"`
	Signature        string  `json:"Signature"`
	SigningCertURL   string  `json:"SigningCertURL"`
}

var (
	errSNSSignature = apperr.New(apperr.Unauthorized, "The SNS message signature is missing or wrong, or its certificate is not from Amazon SNS.")
	errNotSNS       = apperr.Invalidf("The body must be an Amazon SNS message (JSON with Type, MessageId, Message and a signature).")
	snsHost         = regexp.MustCompile(`^sns\.[a-z]{2}(-[a-z]+)+-[0-9]{1,2}\.amazonaws\.com$`)
)

// Receive verifies and applies one SNS delivery for the book. It returns
// once the effect is committed; a message that was applied before counts
// as duplicates.
func (f *SESFeedback) Receive(ctx context.Context, bookID uuid.UUID, body []byte) (IngestResult, error) {
	if _, ok, err := f.s.campaigns.WebhookKey(ctx, f.s.db, bookID); err != nil {
		return IngestResult{}, err
	} else if !ok {
		return IngestResult{}, errNoBook
	}
	var m snsMessage
	if err := json.Unmarshal(body, &m); err != nil || m.Type == "" || m.MessageID == "" {
		return IngestResult{}, errNotSNS
	}
	if err := f.verify(ctx, m); err != nil {
		return IngestResult{}, err
	}
	now := f.s.now()
	switch m.Type {
	case "SubscriptionConfirmation":
		if err := f.confirm(ctx, m.SubscribeURL); err != nil {
			return IngestResult{}, err
		}
		if err := f.s.campaigns.MarkEventsReceived(ctx, f.s.db, bookID, now); err != nil {
			return IngestResult{}, err
		}
		return IngestResult{Received: 1, Applied: 1}, nil
	case "Notification":
	default: // UnsubscribeConfirmation and anything newer: nothing to do
		return IngestResult{Received: 1, Ignored: 1}, nil
	}
	if err := f.s.campaigns.MarkEventsReceived(ctx, f.s.db, bookID, now); err != nil {
		return IngestResult{}, err
	}
	evs := sesEvents(m, now)
	if len(evs) == 0 {
		return IngestResult{Received: 1, Ignored: 1}, nil
	}
	res, _, err := f.s.applyByMessageID(ctx, bookID, evs, now)
	return res, err
}

// verify checks the signature as Amazon documents it: the certificate
// comes from an https URL on an SNS host, and signs (SHA1withRSA for
// version 1, SHA256withRSA for 2) the message's canonical string.
func (f *SESFeedback) verify(ctx context.Context, m snsMessage) error {
	if m.Signature == "" || m.SigningCertURL == "" || (m.SignatureVersion != "1" && m.SignatureVersion != "2") {
		return errSNSSignature
	}
	if !f.allowedURL(m.SigningCertURL) {
		return errSNSSignature
	}
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if err != nil {
		return errSNSSignature
	}
	cert, err := f.cert(ctx, m.SigningCertURL)
	if err != nil {
		return err
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return errSNSSignature
	}
	canonical := []byte(stringToSign(m))
	if m.SignatureVersion == "2" {
		sum := sha256.Sum256(canonical)
		err = rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig)
	} else {
		sum := sha1.Sum(canonical) //nolint:gosec
		err = rsa.VerifyPKCS1v15(pub, crypto.SHA1, sum[:], sig)
	}
	if err != nil {
		return errSNSSignature
	}
	return nil
}

// allowedURL is the host rule: https, on sns.<region>.amazonaws.com at
// the default port, or on one of the configured hosts.
func (f *SESFeedback) allowedURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.User != nil {
		return false
	}
	host := strings.ToLower(u.Host)
	if len(f.hosts) == 0 {
		return u.Port() == "" && snsHost.MatchString(host)
	}
	for _, h := range f.hosts {
		if h == host || (!strings.Contains(h, ":") && u.Port() == "" && h == strings.ToLower(u.Hostname())) {
			return true
		}
	}
	return false
}

// cert fetches (once per instance) the PEM certificate at u.
func (f *SESFeedback) cert(ctx context.Context, u string) (*x509.Certificate, error) {
	f.mu.Lock()
	c := f.certs[u]
	f.mu.Unlock()
	if c != nil {
		return c, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, errSNSSignature
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return nil, apperr.Wrap(err, apperr.Unavailable, "The SNS signing certificate could not be fetched; SNS will deliver the message again.")
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, apperr.New(apperr.Unavailable, "The SNS signing certificate could not be fetched; SNS will deliver the message again.")
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, errSNSSignature
	}
	c, err = x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, errSNSSignature
	}
	// Real time, not the service clock: certificates are dated by it.
	if now := time.Now(); now.After(c.NotAfter) || now.Before(c.NotBefore) {
		return nil, errSNSSignature
	}
	f.mu.Lock()
	if len(f.certs) > 64 {
		clear(f.certs)
	}
	f.certs[u] = c
	f.mu.Unlock()
	return c, nil
}

// confirm fetches the subscription's SubscribeURL (same host rule).
func (f *SESFeedback) confirm(ctx context.Context, subscribeURL string) error {
	if !f.allowedURL(subscribeURL) {
		return apperr.Invalidf("The SubscribeURL is not an Amazon SNS address.")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, subscribeURL, nil)
	if err != nil {
		return apperr.Invalidf("The SubscribeURL is not a URL.")
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return apperr.Wrap(err, apperr.Unavailable, "Amazon SNS could not be reached to confirm the subscription.")
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return apperr.New(apperr.Unavailable, "Amazon SNS refused the subscription confirmation (HTTP %d).", resp.StatusCode)
	}
	return nil
}

// stringToSign is SNS's canonical string of the message.
func stringToSign(m snsMessage) string {
	var b strings.Builder
	add := func(k, v string) { b.WriteString(k + "\n" + v + "\n") }
	add("Message", m.Message)
	add("MessageId", m.MessageID)
	if m.Type == "Notification" {
		if m.Subject != nil {
			add("Subject", *m.Subject)
		}
		add("Timestamp", m.Timestamp)
		add("TopicArn", m.TopicArn)
		add("Type", m.Type)
		return b.String()
	}
	add("SubscribeURL", m.SubscribeURL)
	add("Timestamp", m.Timestamp)
	add("Token", m.Token)
	add("TopicArn", m.TopicArn)
	add("Type", m.Type)
	return b.String()
}

// sesNote is an SES notification (notificationType) or event-publishing
// record (eventType), as far as it matters here.
type sesNote struct {
	NotificationType string `json:"notificationType"`
	EventType        string `json:"eventType"`
	Mail             struct {
		MessageID string `json:"messageId"`
	} `json:"mail"`
	Bounce *struct {
		BounceType        string `json:"bounceType"`
		BouncedRecipients []struct {
			EmailAddress   string `json:"emailAddress"`
			DiagnosticCode string `json:"diagnosticCode"`
			Status         string `json:"status"`
		} `json:"bouncedRecipients"`
		Timestamp string `json:"timestamp"`
	} `json:"bounce"`
	Complaint *struct {
		ComplainedRecipients []struct {
			EmailAddress string `json:"emailAddress"`
		} `json:"complainedRecipients"`
		Timestamp string `json:"timestamp"`
	} `json:"complaint"`
	Delivery *struct {
		Recipients []string `json:"recipients"`
		Timestamp  string   `json:"timestamp"`
	} `json:"delivery"`
	DeliveryDelay *struct {
		DelayType         string `json:"delayType"`
		DelayedRecipients []struct {
			EmailAddress string `json:"emailAddress"`
		} `json:"delayedRecipients"`
		Timestamp string `json:"timestamp"`
	} `json:"deliveryDelay"`
	Open *struct {
		Timestamp string `json:"timestamp"`
	} `json:"open"`
	Click *struct {
		Timestamp string `json:"timestamp"`
		Link      string `json:"link"`
	} `json:"click"`
}

// sesEvents reads the events of a notification; their ids are the SNS
// MessageId (and the recipient's place), so a redelivery is a duplicate.
func sesEvents(m snsMessage, now time.Time) []event {
	var n sesNote
	if json.Unmarshal([]byte(m.Message), &n) != nil || n.Mail.MessageID == "" {
		return nil
	}
	kind := n.NotificationType
	if kind == "" {
		kind = n.EventType
	}
	at := func(ts string) time.Time {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			return t.UTC()
		}
		return now
	}
	id := func(i int) string { return fmt.Sprintf("sns:%s:%d", clip(m.MessageID, 150), i) }
	var out []event
	add := func(e event) {
		e.id = id(len(out))
		e.messageID = n.Mail.MessageID
		e.email = strings.ToLower(strings.TrimSpace(e.email))
		if e.email == "" {
			e.suppress = ""
		}
		e.detail = clip(e.detail, maxDetail)
		out = append(out, e)
	}
	switch kind {
	case "Bounce":
		if n.Bounce == nil {
			break
		}
		t := at(n.Bounce.Timestamp)
		for _, r := range n.Bounce.BouncedRecipients {
			e := event{email: r.EmailAddress, at: t, detail: r.DiagnosticCode}
			if n.Bounce.BounceType == "Permanent" {
				e.kind, e.suppress = kindBounced, suppression.ReasonBounce
			} else {
				e.kind = kindBlocked // transient or undetermined: soft, state only
			}
			add(e)
		}
	case "Complaint":
		if n.Complaint == nil {
			break
		}
		t := at(n.Complaint.Timestamp)
		for _, r := range n.Complaint.ComplainedRecipients {
			add(event{kind: kindComplained, email: r.EmailAddress, at: t, suppress: suppression.ReasonComplaint})
		}
	case "Delivery":
		if n.Delivery == nil {
			break
		}
		for _, r := range n.Delivery.Recipients {
			add(event{kind: kindDelivered, email: r, at: at(n.Delivery.Timestamp)})
		}
	case "DeliveryDelay":
		if n.DeliveryDelay == nil {
			break
		}
		for _, r := range n.DeliveryDelay.DelayedRecipients {
			add(event{kind: kindDeferred, email: r.EmailAddress, at: at(n.DeliveryDelay.Timestamp), detail: n.DeliveryDelay.DelayType})
		}
	case "Open":
		if n.Open != nil {
			add(event{kind: kindOpened, at: at(n.Open.Timestamp)})
		}
	case "Click":
		if n.Click != nil {
			add(event{kind: kindClicked, at: at(n.Click.Timestamp), detail: n.Click.Link})
		}
	}
	return out
}

// applyByMessageID applies events that name their email by provider
// message id (SES, the bounce mailbox): each id is looked up among the
// book's campaign emails, then among its transactional emails; events of
// an unknown id are ignored. named holds the ids of the events that named
// an email.
func (s *Service) applyByMessageID(ctx context.Context, bookID uuid.UUID, evs []event, now time.Time) (out IngestResult, named map[string]bool, err error) {
	out = IngestResult{Received: len(evs)}
	named = map[string]bool{}
	msgIDs := make([]string, 0, len(evs))
	for _, e := range evs {
		msgIDs = append(msgIDs, e.messageID)
	}
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		clear(named)
		if err := lockBook(ctx, tx, bookID); err != nil {
			return err
		}
		refs, err := emailsByMessageID(ctx, tx, bookID, msgIDs)
		if err != nil {
			return err
		}
		var matched, others []event
		for _, e := range evs {
			r, ok := refs[e.messageID]
			if !ok {
				// Not a campaign email's id: maybe a transactional one's.
				others = append(others, e)
				continue
			}
			e.campaign, e.campaignID, e.stepID, e.participantID = true, r.campaignID, r.stepID, r.participantID
			matched = append(matched, e)
			named[e.id] = true
		}
		res, txNamed, err := s.apply(ctx, tx, bookID, matched, others, now)
		if err != nil {
			return err
		}
		for _, id := range txNamed {
			named[id] = true
		}
		out.Applied = res.applied
		out.Duplicates = res.matched - res.applied
		out.Ignored = len(evs) - res.matched
		return s.suppress(ctx, tx, bookID, res, now)
	})
	if err != nil {
		return IngestResult{}, nil, err
	}
	return out, named, nil
}
