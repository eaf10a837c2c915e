package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
)

// lookupFunc answers one request: the leading stored pages of tokens,
// chained from prior.
type lookupFunc func(ctx context.Context, prior *prefix.Digest, tokens []int64) (prefix.Result, error)

// lookupRequest is the body of POST /v1/lookup.
type lookupRequest struct {
	// Tokens are the prompt's token ids (SGLang's radix key: the ids the
	// model sees, not text).
	Tokens []int64 `json:"tokens"`
	// Prior is the hash of the page before Tokens' first (hex; "" or
	// absent: the prompt starts at the root). A router extending a prefix
	// it already found passes the last_hash it got back.
	Prior string `json:"prior,omitempty"`
}

// lookupResponse is the answer.
type lookupResponse struct {
	Pages    int    `json:"pages"`               // leading pages stored
	Hashed   int    `json:"hashed"`              // full pages the tokens make
	PageSize int    `json:"page_size"`           // tokens (bigram units) per page
	LastHash string `json:"last_hash,omitempty"` // hash of page pages-1: the prior to continue from
	// Incomplete says why counting stopped at a page whose check failed
	// (direct mode): the prefix may be longer than Pages.
	Incomplete string `json:"incomplete,omitempty"`
}

type errorResponse struct {
	Error string `json:"error"`
}

// maxBody bounds a request body: 16 MiB is over a million token ids.
const maxBody = 16 << 20

// server is the HTTP side of the command: lookups, metrics, health.
type server struct {
	mode     string
	pageSize int
	lookup   lookupFunc
	m        *metrics
	reg      *prometheus.Registry
	// ready says whether answers are current (index mode: subscribed and
	// not resynchronising), with the reason when not.
	ready func() (bool, string)
}

func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/lookup", s.serveLookup)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, why := true, ""
		if s.ready != nil {
			ok, why = s.ready()
		}
		if !ok {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	return mux
}

func (s *server) serveLookup(w http.ResponseWriter, r *http.Request) {
	t0 := time.Now()
	code, resp := s.answer(r)
	s.m.observeLookup(code, time.Since(t0))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(resp)
}

// answer decodes a request and looks it up: 400 for a request SGLang would
// refuse (a prior that is not 32 bytes, a token id out of range, not
// JSON), 503 when the store could not be asked.
func (s *server) answer(r *http.Request) (int, any) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return http.StatusUnsupportedMediaType, errorResponse{fmt.Sprintf("content type %q: want application/json", ct)}
	}
	b := reqBufs.Get().(*reqBuf)
	defer putReqBuf(b)
	req, err := readRequest(r, b)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, errorResponse{fmt.Sprintf("request: over %d bytes", tooLarge.Limit)}
	case err != nil:
		return http.StatusBadRequest, errorResponse{"request: " + err.Error()}
	}
	prior, err := prefix.ParsePrior(req.Prior)
	if err != nil {
		return http.StatusBadRequest, errorResponse{err.Error()}
	}
	res, err := s.lookup(r.Context(), prior, req.Tokens)
	var le *prefix.LookupError
	switch {
	case errors.Is(err, prefix.ErrTokenRange):
		return http.StatusBadRequest, errorResponse{err.Error()}
	case errors.As(err, &le) && le.Index >= 0:
		// The check of the page where counting stopped failed: the answer
		// stands, and says it may be short.
	case err != nil:
		return http.StatusServiceUnavailable, errorResponse{err.Error()}
	}
	s.m.observePages(res)
	out := lookupResponse{Pages: res.Pages, Hashed: res.Hashed, PageSize: s.pageSize}
	if res.HasLast {
		out.LastHash = res.LastHash.String()
	}
	if err != nil {
		out.Incomplete = err.Error()
	}
	return http.StatusOK, out
}
