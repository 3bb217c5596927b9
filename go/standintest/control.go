package standintest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Args are a condition's or an action's arguments, as the control API takes them.
type Args map[string]any

// Until names await conditions and their arguments, e.g.
// Until{"deployment": {"job": "web", "status": "successful"}}; every one must hold.
type Until map[string]Args

// FiredTimer is one timer the clock fired while it moved.
type FiredTimer struct {
	At      time.Time       `json:"at"`
	Kind    string          `json:"kind"`
	Subject string          `json:"subject"`
	Detail  json.RawMessage `json:"detail,omitempty"`
}

// Moved is what a clock move did: the new virtual instant and the timers fired on the way.
type Moved struct {
	Now   time.Time    `json:"now"`
	Fired []FiredTimer `json:"fired"`
}

// Awaited is what Await observed once its conditions held.
type Awaited struct {
	Met      bool                       `json:"met"`
	Waited   string                     `json:"waited"`
	Observed map[string]json.RawMessage `json:"observed"`
	Now      time.Time                  `json:"now"`
	Fired    []FiredTimer               `json:"fired"`
	Index    uint64                     `json:"index"`
}

// Acted is what an action did.
type Acted struct {
	Do      string          `json:"do"`
	Service string          `json:"service"`
	Result  json.RawMessage `json:"result"`
	Index   uint64          `json:"index"`
}

// Advance moves the virtual clock forward by d, firing every timer that falls
// due in virtual-time order (sessions expire, deployments progress, …).
func (s *Server) Advance(d time.Duration) Moved {
	s.t.Helper()
	var moved Moved
	s.call(http.MethodPost, "/clock/advance", map[string]string{"by": d.String()}, &moved)
	return moved
}

// AdvanceTo moves the virtual clock to the instant at (an earlier one fails the test).
func (s *Server) AdvanceTo(at time.Time) Moved {
	s.t.Helper()
	var moved Moved
	s.call(http.MethodPost, "/clock/advance-to", map[string]string{"to": formatInstant(at)}, &moved)
	return moved
}

// Now is the virtual clock's instant.
func (s *Server) Now() time.Time {
	s.t.Helper()
	var clock struct {
		NowMs int64 `json:"nowMs"`
	}
	s.call(http.MethodGet, "/clock", nil, &clock)
	return time.UnixMilli(clock.NowMs).UTC()
}

// Reset puts standin back in its start state (the fixtures, the seed and the
// start time it was started with).
func (s *Server) Reset() {
	s.t.Helper()
	s.call(http.MethodPost, "/reset", nil, nil)
}

// ApplyFixture adds a fixture to the current state. fixture is a shipped
// fixture's name (a string), a JSON document ([]byte or json.RawMessage), or
// any value encoding/json turns into one (a map, a struct). A document names no
// files: give a job file's text as "hclSource".
func (s *Server) ApplyFixture(fixture any) {
	s.t.Helper()
	s.call(http.MethodPost, "/fixtures", fixture, nil)
}

// Snapshot is the whole state (store, indexes, clock, timers), for Restore.
func (s *Server) Snapshot() []byte {
	s.t.Helper()
	return s.call(http.MethodGet, "/snapshot", nil, nil)
}

// Restore puts back a state that Snapshot returned, exactly.
func (s *Server) Restore(snapshot []byte) {
	s.t.Helper()
	s.call(http.MethodPut, "/snapshot", json.RawMessage(snapshot), nil)
}

// Await moves the virtual clock timer by timer until every condition holds,
// for at most within of virtual time (0: standin's default). Conditions that
// do not hold by then fail the test with what standin observed. The names
// are the control API's (GET /_standin/actions lists them): allocations,
// check, deployment, evaluation, job, kv, service, session, …
func (s *Server) Await(until Until, within time.Duration) Awaited {
	s.t.Helper()
	body := map[string]any{"until": until}
	if within != 0 {
		body["within"] = within.String()
	}
	var awaited Awaited
	s.call(http.MethodPost, "/await", body, &awaited)
	return awaited
}

// Act runs one timeline action now, e.g. Act("node-down", Args{"node": "client-1"})
// or Act("check-critical", Args{"check": "web-ttl"}).
func (s *Server) Act(action string, args Args) Acted {
	s.t.Helper()
	body := map[string]any{}
	for name, value := range args {
		body[name] = value
	}
	body["do"] = action
	var acted Acted
	s.call(http.MethodPost, "/actions", body, &acted)
	return acted
}

// Tape is everything recorded since the last reset, for `standin replay`.
func (s *Server) Tape() []byte {
	s.t.Helper()
	return s.call(http.MethodGet, "/tape", nil, nil)
}

// call sends one control request and returns the answer's body, decoded into
// out when out is not nil. A refusal fails the test with standin's message.
func (s *Server) call(method, path string, body any, out any) []byte {
	s.t.Helper()
	var reader io.Reader
	if body != nil {
		encoded, err := encodeBody(body)
		if err != nil {
			s.t.Fatalf("standintest: %s /_standin%s: cannot encode the body: %v", method, path, err)
		}
		reader = bytes.NewReader(encoded)
	}
	req, err := http.NewRequest(method, s.controlURL(path), reader)
	if err != nil {
		s.t.Fatalf("standintest: %s /_standin%s: %v", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("standintest: %s /_standin%s: %v", method, path, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("standintest: %s /_standin%s: reading the answer: %v", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		s.t.Fatalf("standintest: %s /_standin%s: %s: %s", method, path, resp.Status, errorMessage(answer))
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			s.t.Fatalf("standintest: %s /_standin%s: unexpected answer %.200q: %v", method, path, answer, err)
		}
	}
	return answer
}

// encodeBody sends raw JSON as it is and encodes anything else.
func encodeBody(body any) ([]byte, error) {
	switch raw := body.(type) {
	case json.RawMessage:
		return raw, nil
	case []byte:
		return raw, nil
	}
	return json.Marshal(body)
}

// errorMessage is the control API's {"error": "…"}, or the body itself when it is not that.
func errorMessage(body []byte) string {
	var failure struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &failure) == nil && failure.Error != "" {
		return failure.Error
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 500 {
		text = text[:500] + "…"
	}
	return fmt.Sprintf("%q", text)
}
