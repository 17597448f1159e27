package actions

import (
	"time"

	"github.com/rs/zerolog"
)

// actionTimes are the moments one action on a tab passed its phases (the gate's read, aiming,
// the input, the wait after it, settling), for the debug log: where an action's time goes,
// seen from the service (see Options.Log). The tab's queue serialises actions, so one record
// per tab suffices.
type actionTimes struct {
	start time.Time
	marks []mark
}

// mark is one phase of an action: its name and when it ended.
type mark struct {
	name string
	at   time.Time
}

// begin starts the record of a new action.
func (t *actionTimes) begin() { t.start, t.marks = time.Now(), t.marks[:0] }

// mark notes that the phase name ended now.
func (t *actionTimes) mark(name string) { t.marks = append(t.marks, mark{name, time.Now()}) }

// log writes each phase's duration in milliseconds, and the total, to a debug event.
func (t *actionTimes) log(log zerolog.Logger, kind string) {
	ev := log.Debug()
	if !ev.Enabled() {
		return
	}
	ev = ev.Str("kind", kind)
	prev := t.start
	for _, m := range t.marks {
		ev = ev.Float64(m.name+"_ms", float64(m.at.Sub(prev).Microseconds())/1000)
		prev = m.at
	}
	ev.Float64("total_ms", float64(prev.Sub(t.start).Microseconds())/1000).Msg("action phases")
}
