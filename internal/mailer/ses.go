package mailer

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"
)

// sesClients keeps one SES client per book and credentials.
type sesClients struct {
	endpoint string // "" : the region's own
	http     *http.Client

	mu      sync.Mutex
	clients map[string]*sesClient
}

type sesClient struct {
	cfgKey string
	c      *sesv2.Client
}

func newSESClients(endpoint string, hc *http.Client) *sesClients {
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 32
		hc = &http.Client{Transport: t, Timeout: RequestTimeout}
	}
	return &sesClients{endpoint: strings.TrimRight(endpoint, "/"), http: hc, clients: map[string]*sesClient{}}
}

// client returns the SES client of a. The SDK's own retries are off: a
// request it sent again after a lost answer could send the email twice;
// a temporary failure goes back to the caller, which retries later.
func (sc *sesClients) client(a *Account) *sesv2.Client {
	s := a.SES
	key := strings.Join([]string{s.Region, s.AccessKeyID, s.SecretAccessKey}, "\x00")
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if c := sc.clients[a.Key]; c != nil && c.cfgKey == key {
		return c.c
	}
	opts := sesv2.Options{
		Region:           s.Region,
		Credentials:      aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(s.AccessKeyID, s.SecretAccessKey, "")),
		HTTPClient:       sc.http,
		RetryMaxAttempts: 1,
	}
	if sc.endpoint != "" {
		opts.BaseEndpoint = aws.String(sc.endpoint)
	}
	c := sesv2.New(opts)
	sc.clients[a.Key] = &sesClient{cfgKey: key, c: c}
	return c
}

// tagValue keeps a message tag to what SES accepts: letters, digits,
// underscore, dash (and at most 256 characters).
var tagUnsafe = regexp.MustCompile(`[^A-Za-z0-9_\-]`)

func sesTags(tags map[string]string) []types.MessageTag {
	out := make([]types.MessageTag, 0, len(tags))
	for k, v := range tags {
		k, v = tagUnsafe.ReplaceAllString(k, "_"), tagUnsafe.ReplaceAllString(v, "_")
		if k == "" || v == "" {
			continue
		}
		out = append(out, types.MessageTag{Name: aws.String(truncate(k, 256)), Value: aws.String(truncate(v, 256))})
	}
	return out
}

// deliverSES sends each message as raw MIME (built as for SMTP) with
// SendEmail, paced, a few at a time.
func (d *Dispatcher) deliverSES(ctx context.Context, a *Account, msgs []Message) []Result {
	out := make([]Result, len(msgs))
	if a.SES.Region == "" || a.SES.AccessKeyID == "" || a.SES.SecretAccessKey == "" {
		for i := range out {
			out[i].Err = &Error{Permanent: true, Message: "SES region or credentials missing"}
		}
		return out
	}
	c := d.ses.client(a)
	sched := d.pace.schedule(a)
	const parallel = 8
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range msgs {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	remaining := len(msgs)
	for range min(parallel, len(msgs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				mu.Lock()
				n := remaining
				remaining--
				mu.Unlock()
				if err := sched.wait(ctx, n); err != nil {
					out[i].Err = asError(err)
					continue
				}
				out[i] = d.sendSES(ctx, c, a, &msgs[i])
				if e, ok := out[i].Err.(*Error); ok && !e.Permanent {
					d.pace.slowDown(a)
				}
			}
		}()
	}
	wg.Wait()
	for i := range out {
		if out[i].MessageID == "" && out[i].Err == nil {
			out[i].Err = &Error{Message: "sending stopped: " + context.Cause(ctx).Error(), cause: ctx.Err()}
		}
	}
	return out
}

func (d *Dispatcher) sendSES(ctx context.Context, c *sesv2.Client, a *Account, m *Message) Result {
	raw, err := m.MIME()
	if err != nil {
		return Result{Err: asError(err)}
	}
	in := &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(headerText(m.FromEmail)),
		Destination:      &types.Destination{ToAddresses: []string{headerText(m.To)}},
		Content:          &types.EmailContent{Raw: &types.RawMessage{Data: raw}},
		EmailTags:        sesTags(m.Tags),
	}
	if a.SES.ConfigurationSet != "" {
		in.ConfigurationSetName = aws.String(a.SES.ConfigurationSet)
	}
	// A request once started is not cut short by the caller's deadline:
	// SES may have taken it, and an answer lost to a cancellation would
	// have it sent again. RequestTimeout bounds it.
	reqCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RequestTimeout)
	defer cancel()
	res, err := c.SendEmail(reqCtx, in)
	if err != nil {
		return Result{Err: sesError(ctx, err)}
	}
	return Result{MessageID: aws.ToString(res.MessageId)}
}

// sesError classifies an SES failure: MessageRejected and the other
// refusals of the request are permanent; throttling, 5xx and network
// failures temporary.
func sesError(ctx context.Context, err error) *Error {
	if ctx.Err() != nil {
		return &Error{Message: "sending stopped: " + ctx.Err().Error(), cause: ctx.Err()}
	}
	status := 0
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	var tooMany *types.TooManyRequestsException
	var limit *types.LimitExceededException
	var api smithy.APIError
	switch {
	case errors.As(err, &tooMany), errors.As(err, &limit):
		return &Error{Status: status, Message: "SES throttled the send: " + apiMessage(err), cause: err}
	case errors.As(err, &api):
		msg := truncate(api.ErrorCode()+": "+api.ErrorMessage(), maxMessageLen)
		if status >= 500 || api.ErrorFault() == smithy.FaultServer || strings.Contains(api.ErrorCode(), "Throttl") {
			return &Error{Status: status, Message: "SES error: " + msg, cause: err}
		}
		return &Error{Permanent: true, Status: status, Message: msg, cause: err}
	case status >= 400 && status < 500:
		return &Error{Permanent: true, Status: status, Message: "SES refused the request (" + statusText(status) + ")", cause: err}
	}
	return &Error{Status: status, Message: "SES unreachable: " + err.Error(), cause: err}
}

func apiMessage(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorMessage()
	}
	return err.Error()
}

// verifySES asks GetAccount with the account's credentials.
func (d *Dispatcher) verifySES(ctx context.Context, a *Account) (bool, string) {
	if a.SES.AccessKeyID == "" || a.SES.SecretAccessKey == "" {
		return false, "ses_access_key_id and ses_secret_access_key are required"
	}
	res, err := d.ses.client(a).GetAccount(ctx, &sesv2.GetAccountInput{})
	if err != nil {
		return false, sesError(ctx, err).Message
	}
	if !res.SendingEnabled {
		return false, "SES sending is paused for this account in " + a.SES.Region
	}
	detail := "SES account in " + a.SES.Region + " can send"
	if !res.ProductionAccessEnabled {
		detail += " (sandbox: only to verified addresses)"
	}
	return true, detail
}
