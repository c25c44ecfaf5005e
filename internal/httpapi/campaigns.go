package httpapi

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// --- templates ---

func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	ts, err := s.campaigns.Templates(r.Context(), a, bookID)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(ts))
}

func (s *Server) getTemplate(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID, id uuid.UUID) error {
	t, err := s.campaigns.Template(r.Context(), a, bookID, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, t)
}

func (s *Server) createTemplate(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	var in campaigns.TemplateInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	t, err := s.campaigns.CreateTemplate(r.Context(), a, bookID, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, t)
}

func (s *Server) updateTemplate(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID, id uuid.UUID) error {
	var p campaigns.TemplatePatch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	t, err := s.campaigns.UpdateTemplate(r.Context(), a, bookID, id, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, t)
}

func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID, id uuid.UUID) error {
	if err := s.campaigns.DeleteTemplate(r.Context(), a, bookID, id); err != nil {
		return err
	}
	return message(w, "The email template was deleted.")
}

func (s *Server) sendTestEmail(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID, id uuid.UUID) error {
	var in campaigns.SendTestInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := s.campaigns.SendTest(r.Context(), a, bookID, id, in); err != nil {
		return err
	}
	return message(w, "The test email was sent to "+strings.TrimSpace(in.Email)+".")
}

// --- campaigns ---

func (s *Server) listCampaigns(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	cs, err := s.campaigns.Campaigns(r.Context(), a, bookID)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(cs))
}

func (s *Server) getCampaign(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	c, err := s.campaigns.Campaign(r.Context(), a, id, hint)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, c)
}

func (s *Server) createCampaign(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	var in campaigns.CampaignInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	c, err := s.campaigns.CreateCampaign(r.Context(), a, bookID, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, c)
}

func (s *Server) updateCampaign(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	var p campaigns.CampaignPatch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	c, err := s.campaigns.UpdateCampaign(r.Context(), a, id, hint, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, c)
}

func (s *Server) deleteCampaign(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	if err := s.campaigns.DeleteCampaign(r.Context(), a, id, hint); err != nil {
		return err
	}
	return message(w, "The campaign was deleted with its steps, participants and completion records.")
}

func (s *Server) runCampaign(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	started, err := s.campaigns.Run(r.Context(), a, id, hint)
	if err != nil {
		return err
	}
	if !started {
		return message(w, "The campaign is already being processed.")
	}
	return message(w, "Campaign processing started.")
}

// --- steps ---

func (s *Server) createStep(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	var in campaigns.StepInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	st, err := s.campaigns.CreateStep(r.Context(), a, id, hint, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, st)
}

func (s *Server) updateStep(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
	stepID, err := pathUUID(r, "sid")
	if err != nil {
		return err
	}
	hint, err := bookHint(r)
	if err != nil {
		return err
	}
	var p campaigns.StepPatch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	st, err := s.campaigns.UpdateStep(r.Context(), a, id, stepID, hint, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, st)
}

func (s *Server) deleteStep(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
	stepID, err := pathUUID(r, "sid")
	if err != nil {
		return err
	}
	hint, err := bookHint(r)
	if err != nil {
		return err
	}
	if err := s.campaigns.DeleteStep(r.Context(), a, id, stepID, hint); err != nil {
		return err
	}
	return message(w, "The step was deleted.")
}

func (s *Server) reorderSteps(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	var in campaigns.ReorderInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := s.campaigns.ReorderSteps(r.Context(), a, id, hint, in); err != nil {
		return err
	}
	return message(w, "The steps were reordered.")
}

// --- participants ---

func (s *Server) enrollParticipants(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	var in campaigns.EnrollInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	n, err := s.campaigns.Enroll(r.Context(), a, id, hint, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, map[string]int64{"enrolled": n})
}

func (s *Server) enrollLabel(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	var in campaigns.EnrollLabelInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	n, err := s.campaigns.EnrollLabel(r.Context(), a, id, hint, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, map[string]int64{"enrolled": n})
}

func (s *Server) listParticipants(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	pg, err := pagePaging(r, 50, 100)
	if err != nil {
		return err
	}
	res, err := s.campaigns.Participants(r.Context(), a, id, hint, campaigns.Page{Limit: pg.Limit, Offset: pg.Offset})
	if err != nil {
		return err
	}
	return page(w, nonNil(res.Items), Meta{Page: pg.Page(), Limit: pg.Limit, Total: res.Total})
}

func (s *Server) removeParticipant(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
	pid, err := pathUUID(r, "pid")
	if err != nil {
		return err
	}
	hint, err := bookHint(r)
	if err != nil {
		return err
	}
	if err := s.campaigns.RemoveParticipant(r.Context(), a, id, pid, hint); err != nil {
		return err
	}
	return message(w, "The participant was removed from the campaign.")
}

func (s *Server) participantHistory(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
	pid, err := pathUUID(r, "pid")
	if err != nil {
		return err
	}
	hint, err := bookHint(r)
	if err != nil {
		return err
	}
	h, err := s.campaigns.History(r.Context(), a, id, pid, hint)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(h))
}

func (s *Server) campaignStats(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	st, err := s.campaigns.Stats(r.Context(), a, id, hint)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, st)
}

func (s *Server) stepContacts(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
	stepID, err := pathUUID(r, "sid")
	if err != nil {
		return err
	}
	hint, err := bookHint(r)
	if err != nil {
		return err
	}
	pg, err := pagePaging(r, 50, 100)
	if err != nil {
		return err
	}
	res, err := s.campaigns.StepContacts(r.Context(), a, id, stepID, hint, r.URL.Query().Get("result"),
		campaigns.Page{Limit: pg.Limit, Offset: pg.Offset})
	if err != nil {
		return err
	}
	return page(w, nonNil(res.Items), Meta{Page: pg.Page(), Limit: pg.Limit, Total: res.Total})
}

func (s *Server) contactCampaigns(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
	cs, err := s.campaigns.ContactCampaigns(r.Context(), a, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(cs))
}

// --- settings ---

func (s *Server) getCampaignSettings(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	v, err := s.campaigns.GetSettings(r.Context(), a, bookID)
	if err != nil {
		return err
	}
	if !v.Configured {
		return data(w, http.StatusOK, map[string]uuid.UUID{"book_id": v.BookID})
	}
	return data(w, http.StatusOK, v.Settings)
}

func (s *Server) putCampaignSettings(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	var in campaigns.SettingsInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	st, err := s.campaigns.PutSettings(r.Context(), a, bookID, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, st)
}

// --- images ---

// maxImageRequest bounds the whole multipart request: the image plus room
// for the part headers and other small fields.
const maxImageRequest = campaigns.MaxImageBytes + 1<<20

func (s *Server) uploadCampaignImage(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	url, err := s.campaigns.SaveImage(r.Context(), a, bookID, func() (io.Reader, error) {
		r.Body = http.MaxBytesReader(w, r.Body, maxImageRequest)
		mr, err := r.MultipartReader()
		if err != nil {
			return nil, apperr.New(apperr.UnsupportedMediaType, "Send the image as multipart/form-data with a file part named image.")
		}
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil, apperr.Invalidf("The form has no file part named image.")
			}
			if err != nil {
				return nil, imageReadError(err)
			}
			if part.FormName() == "image" {
				return imageReader{part}, nil
			}
		}
	})
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, map[string]string{"url": url})
}

// imageReader turns the request size limit and broken multipart bodies
// into the API's errors.
type imageReader struct{ r io.Reader }

func (ir imageReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, imageReadError(err)
	}
	return n, err
}

func imageReadError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return apperr.New(apperr.PayloadTooLarge, "The image is larger than 5 MB.")
	}
	return apperr.Wrap(err, apperr.InvalidInput, "The multipart body could not be read.")
}

func (s *Server) serveCampaignImage(w http.ResponseWriter, r *http.Request) error {
	img, err := s.campaigns.OpenImage(chi.URLParam(r, "name"))
	if err != nil {
		return err
	}
	defer img.File.Close()
	h := w.Header()
	h.Set("Content-Type", img.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	// Names are random and never reused, so the content never changes.
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	http.ServeContent(w, r, "", img.ModTime, img.File)
	return nil
}
