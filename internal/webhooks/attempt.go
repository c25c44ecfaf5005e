package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// retryable: 5xx, network errors and timeouts are retried; 2xx is done;
// 3xx (redirects are not followed) and 4xx are the receiver's final word;
// a refused address or an unusable URL will not change by retrying.
func (o outcome) retryable() bool {
	if o.responseStatus != nil {
		return *o.responseStatus >= 500
	}
	return o.errText != nil && !o.finalErr
}

// attempt POSTs the stored body to the webhook and reports what happened.
func (e *Engine) attempt(ctx context.Context, j job) outcome {
	o := outcome{job: j, at: e.cfg.Now()}
	// The clock starts before the deadline is set, so an attempt cut by
	// the timeout never reads as shorter than the timeout.
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.URL, bytes.NewReader(j.Body))
	if err != nil {
		o.errText, o.finalErr = ptr(redactIn("invalid URL: "+err.Error(), j.URL)), true
		return o
	}
	ts := strconv.FormatInt(o.at.Unix(), 10)
	// The delivery's id, the same on every attempt of it (retries, manual
	// ones included): what receivers deduplicate on.
	id := j.DeliveryID.String()
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set("X-Service-Event", j.EventType)
	h.Set("X-Service-Signature", SignatureHex(j.Secret, j.Body))
	h.Set("X-Service-Delivery", id)
	h.Set("X-Service-Timestamp", ts)
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	if sig, err := StandardSignature(j.Secret, id, ts, j.Body); err == nil {
		h.Set("webhook-signature", sig)
	}

	res, err := e.client.Do(req)
	if err != nil {
		o.duration = time.Since(start)
		var refused *RefusedError
		o.errText, o.finalErr = ptr(redactIn(describe(err, e.cfg.Timeout), j.URL)), errors.As(err, &refused)
		return o
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, MaxLoggedBody))
	// Read a little more so the connection can be reused, then let go.
	_, _ = io.CopyN(io.Discard, res.Body, 64<<10)
	_ = res.Body.Close()
	o.duration = time.Since(start)
	code := int32(res.StatusCode)
	o.responseStatus = &code
	o.responseBody = loggable(body)
	o.success = res.StatusCode >= 200 && res.StatusCode < 300
	return o
}

// describe turns a client error into the log's words.
func describe(err error, timeout time.Duration) string {
	// A refusal names neither the address nor its kind: the delivery log
	// is read by the team's admins, and the address a name resolves to
	// would map the service's network for them.
	var refused *RefusedError
	if errors.As(err, &refused) {
		return "refused: address not allowed"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("timeout: no response within %s", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Sprintf("timeout: no response within %s", timeout)
		}
		err = ue.Err
	}
	return "network error: " + err.Error()
}

// loggable makes a response body storable as text: invalid UTF-8 is
// replaced and NUL bytes (which PostgreSQL text refuses) are dropped.
func loggable(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}

func ptr[T any](v T) *T { return &v }

// SignatureHex is the X-Service-Signature of body: hex HMAC-SHA256 keyed
// with the whole secret string, "whsec_" prefix included.
func SignatureHex(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// StandardSignature is the Standard Webhooks webhook-signature header:
// "v1," + base64 HMAC-SHA256 of "id.timestamp.body", keyed, as that spec
// says, with the bytes the secret's base64 part (after "whsec_") decodes to.
func StandardSignature(secret, id, timestamp string, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil {
		return "", fmt.Errorf("decode signing secret: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}
