package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/suppression"
)

// mailerEvents receives the email provider's Event Webhook batches. It is
// not behind login: the provider signs each batch over the exact body
// bytes with the book's key, so the body is read raw. The answer comes
// after the batch is committed.
func (s *Server) mailerEvents(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	bookID, err := pathUUID(r, "book_id")
	if err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, delivery.MaxBatchBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apperr.New(apperr.PayloadTooLarge, "The event batch is larger than %d MB.", delivery.MaxBatchBytes>>20)
		}
		return apperr.Wrap(err, apperr.InvalidInput, "The event batch could not be read.")
	}
	res, err := s.delivery.Ingest(r.Context(), bookID, r.Header.Get(delivery.SignatureHeader), r.Header.Get(delivery.TimestampHeader), body)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, res)
}

// sesNotifications receives Amazon SNS deliveries of a book's SES
// feedback. It is not behind login: each message is signed by SNS, and
// is verified with the certificate it names.
func (s *Server) sesNotifications(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	bookID, err := pathUUID(r, "book_id")
	if err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, delivery.MaxSNSBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apperr.New(apperr.PayloadTooLarge, "The SNS message is larger than %d MB.", delivery.MaxSNSBytes>>20)
		}
		return apperr.Wrap(err, apperr.InvalidInput, "The SNS message could not be read.")
	}
	if s.sesFeedback == nil {
		return apperr.New(apperr.Unavailable, "SES feedback is not set up on this service.")
	}
	res, err := s.sesFeedback.Receive(r.Context(), bookID, body)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, res)
}

func (s *Server) listSuppressions(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	pg, err := pagePaging(r, 20, 100)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	items, total, err := s.suppressions.List(r.Context(), sc, suppression.Filter{
		Reason: suppression.Reason(q.Get("reason")), Q: q.Get("q"), Limit: pg.Limit, Offset: pg.Offset,
	})
	if err != nil {
		return err
	}
	return page(w, nonNil(items), pg, total)
}

// exportSuppressions streams the book's suppression list (the list's
// reason and q filters) as a CSV download.
func (s *Server) exportSuppressions(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	q := r.URL.Query()
	return s.streamDownload(w, "suppression export", func(start func(contentType, filename string) io.Writer) error {
		return s.suppressions.Export(r.Context(), sc, suppression.Filter{Reason: suppression.Reason(q.Get("reason")), Q: q.Get("q")},
			func() io.Writer { return start("text/csv; charset=utf-8", "suppressions.csv") })
	})
}

func (s *Server) addSuppression(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in suppression.AddInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	out, created, err := s.suppressions.Add(r.Context(), sc, in)
	if err != nil {
		return err
	}
	if created {
		return data(w, http.StatusCreated, out)
	}
	return data(w, http.StatusOK, out)
}

func (s *Server) liftSuppression(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	if err := s.suppressions.Lift(r.Context(), sc.Actor, id); err != nil {
		return err
	}
	return noContent(w)
}

func (s *Server) deliverability(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	days, err := queryInt(r, "days", 30)
	if err != nil {
		return err
	}
	out, err := s.delivery.Deliverability(r.Context(), sc, days)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, out)
}

func (s *Server) contactActivity(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	pg, err := pagePaging(r, 20, 100)
	if err != nil {
		return err
	}
	items, total, err := s.delivery.Activity(r.Context(), sc.Actor, id, pg.Limit, pg.Offset)
	if err != nil {
		return err
	}
	return page(w, nonNil(items), pg, total)
}
