package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/state"
)

// EncodeJSON is a document as `ooda --json` prints it: indented, known
// secrets masked (in their JSON-escaped form too), then every character a
// terminal acts on escaped, so /api/status is, byte for byte, what
// `ooda status --json` prints.
func EncodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return safetext.JSON(secret.RedactBytes(b.Bytes())), nil
}

// apiError is the body of an /api/ response that is not the document.
type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := EncodeJSON(v)
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = EncodeJSON(apiError{Error: err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}

// apiStatus is `ooda status --json`: the same document from the same
// function. A configuration that cannot be loaded is 500, where the
// command exits 2.
func (s *server) apiStatus(w http.ResponseWriter, p Project) {
	cfg, st, err := p.load()
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError{Error: configProblem(err)})
		return
	}
	writeJSON(w, http.StatusOK, present.Dashboard(cfg, st, s.now()))
}

// apiScorecard is `ooda status --scorecard [--window N] --json`.
func (s *server) apiScorecard(w http.ResponseWriter, r *http.Request, p Project) {
	window := 0
	if v := r.URL.Query().Get("window"); v != "" || r.URL.Query().Has("window") {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			writeJSON(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("window=%s: give a number of cycles above 0 (or leave it out for all)", v)})
			return
		}
		window = n
	}
	cfg, st, err := p.load()
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError{Error: configProblem(err)})
		return
	}
	writeJSON(w, http.StatusOK, present.BuildScorecard(cfg, st, window))
}

// historyRange reads from and to (cycle numbers, both included) of
// /api/history. Without to, it is from+MaxHistoryCycles-1, or without
// either the last cycle state.json counts; without from, the range is the
// MaxHistoryCycles cycles up to to.
func historyRange(r *http.Request, last func() int) (from, to int, err error) {
	q := r.URL.Query()
	num := func(name string) (int, bool, error) {
		if !q.Has(name) {
			return 0, false, nil
		}
		v := q.Get(name)
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, false, fmt.Errorf("%s=%s: give a cycle number, 1 or more", name, v)
		}
		return n, true, nil
	}
	from, hasFrom, err := num("from")
	if err != nil {
		return 0, 0, err
	}
	to, hasTo, err := num("to")
	if err != nil {
		return 0, 0, err
	}
	switch {
	case !hasTo && hasFrom:
		to = from + MaxHistoryCycles - 1
	case !hasTo:
		to = max(last(), 1)
	}
	if !hasFrom {
		from = max(to-MaxHistoryCycles+1, 1)
	}
	switch {
	case from > to:
		return 0, 0, fmt.Errorf("from=%d is after to=%d", from, to)
	case to-from+1 > MaxHistoryCycles:
		return 0, 0, fmt.Errorf("from=%d to=%d spans %d cycles; ask for at most %d at a time", from, to, to-from+1, MaxHistoryCycles)
	}
	return from, to, nil
}

// apiHistory streams the cycles from..to of cycle_log.jsonl, each line
// with the annotations of later cycles applied, as one JSON array, oldest
// first. The log is read line by line (state.Store.CycleHistory) and each
// record written as it is read, so neither the log nor the answer is held
// in memory. A log that cannot be read before anything was written is
// 500, naming it; one that fails part way aborts the response, so that a
// client sees a broken document rather than a short one that parses.
func (s *server) apiHistory(w http.ResponseWriter, r *http.Request, p Project) {
	_, st, err := p.load()
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError{Error: configProblem(err)})
		return
	}
	from, to, err := historyRange(r, func() int {
		snap, _ := st.LoadFiles(state.StateFile)
		if snap == nil {
			return 0
		}
		return snap.State.CycleCount
	})
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Error: err.Error()})
		return
	}
	started := false
	start := func() {
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("["))
		}
	}
	n := 0
	_, herr := st.CycleHistory(func(rec state.CycleRecord) bool {
		c := rec.Line.CycleID
		if c < from || c > to {
			return true
		}
		b, err := json.Marshal(rec.Fields)
		if err != nil {
			return true
		}
		start()
		if n > 0 {
			w.Write([]byte(","))
		}
		w.Write([]byte("\n"))
		w.Write(safetext.JSON(secret.RedactBytes(b)))
		n++
		return true
	})
	if herr != nil {
		if !started {
			writeJSON(w, http.StatusInternalServerError, apiError{Error: fmt.Sprintf("cycle history: %v", herr)})
			return
		}
		// The status line is sent: only a cut connection can say the
		// document is incomplete.
		panic(http.ErrAbortHandler)
	}
	start()
	if n > 0 {
		w.Write([]byte("\n"))
	}
	w.Write([]byte("]\n"))
}
