package task

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tabrelay/tabrelay/agent/actions"
)

// MaxRecordBytes caps the records a task keeps, all its extract steps together: 2 MiB of
// field names and values (some 20,000 records of 100 bytes), saved with the steps in the task
// store (they survive a restart) and rewritten with them on each save. Past the cap a step
// keeps the records that fit and counts the others in [StepRecords.Omitted]; what the model
// was shown does not change.
const MaxRecordBytes = 2 << 20

// StepRecords are the records an extract step read (its actions.Records: fields in order, the
// items, the pages read), as the task keeps them.
type StepRecords struct {
	actions.Records
	// Omitted counts the records the step read but the task did not keep: past
	// [MaxRecordBytes] of records in the task.
	Omitted int `json:"omitted,omitempty"`
}

// ErrNoRecords is returned (wrapped) for the records of a task none of whose steps ran
// extract.
var ErrNoRecords = errors.New("the task extracted nothing")

// recordSize is what a record counts against [MaxRecordBytes]: the bytes of its field names
// and values.
func recordSize(item map[string]string) int {
	n := 0
	for k, v := range item {
		n += len(k) + len(v)
	}
	return n
}

// recordBytes is the size of the records steps keep.
func recordBytes(steps []Step) int {
	n := 0
	for _, s := range steps {
		if s.Records != nil {
			for _, it := range s.Records.Items {
				n += recordSize(it)
			}
		}
	}
	return n
}

// keepRecords is what a step keeps of the records r when budget bytes of records are left in
// its task: the first records that fit, the others counted as omitted. It keeps r's slices
// (r is the step's own result).
func keepRecords(r *actions.Records, budget int) *StepRecords {
	kept := 0
	for _, it := range r.Items {
		if budget -= recordSize(it); budget < 0 {
			break
		}
		kept++
	}
	out := &StepRecords{Records: *r, Omitted: len(r.Items) - kept}
	out.Items = r.Items[:kept:kept]
	return out
}

// keepRecords has step keep the records recs an action read (extract), within what is left of
// the task's [MaxRecordBytes].
func (l *loop) keepRecords(step *Step, recs *actions.Records) {
	l.rn.mu.Lock()
	used := recordBytes(l.rn.task.Steps)
	l.rn.mu.Unlock()
	step.Records = keepRecords(recs, MaxRecordBytes-used)
	if step.Records.Omitted > 0 {
		l.opts.Log.Warn().Str("task", l.rn.task.ID).Str("step", step.ID).Int("kept", len(step.Records.Items)).Int("omitted", step.Records.Omitted).
			Msg("the task keeps only part of the extracted records (its records reached the cap)")
	}
}

// RecordTable is the records of a task's extract steps as one table.
type RecordTable struct {
	// Records are the table: Fields are the step column first (see [Task.RecordTable]), then
	// every field of the steps' records, in the order first seen; Items every kept record, in
	// step order, each with every field ("" for the fields its step did not read); Pages the
	// pages read, all steps together. Its WriteCSV writes the table as CSV.
	actions.Records
	// Steps are the indexes of the extract steps the records come from.
	Steps []int `json:"steps"`
	// Omitted counts the records the steps read but the task did not keep ([MaxRecordBytes]).
	Omitted int `json:"omitted"`
}

// StepColumn is the name of the records table's column that gives each record's step (its
// index, as in the steps report); "_step" (or "__step"…) when a field of the records is
// named "step" already.
const StepColumn = "step"

// RecordTable joins the records of every extract step of t into one table: a column for the
// step, then the union of the steps' fields in the order first seen (a field is the same field
// in two steps when its name is the same), so records of steps that read different fields
// share one header and leave the others empty. A task none of whose steps ran extract gives
// an error wrapping [ErrNoRecords] (an extract that found nothing gives a table without rows).
func (t *Task) RecordTable() (*RecordTable, error) {
	var fields []string
	seen := map[string]bool{}
	out := &RecordTable{Steps: []int{}}
	for _, s := range t.Steps {
		if s.Records == nil {
			continue
		}
		out.Steps = append(out.Steps, s.Index)
		out.Pages += s.Records.Pages
		out.Omitted += s.Records.Omitted
		for _, f := range s.Records.Fields {
			if !seen[f] {
				seen[f] = true
				fields = append(fields, f)
			}
		}
	}
	if len(out.Steps) == 0 {
		return nil, fmt.Errorf("task %s: %w: none of its %d steps ran extract, so it has no records to export; "+
			"to get records, run a task that extracts them (e.g. \"extract the products on this page as a table\": the agent's extract tool) "+
			"or extract from the tab yourself (tabrelay act extract --format csv; POST /api/act?format=csv with {\"action\":{\"kind\":\"extract\"}})",
			t.ID, ErrNoRecords, len(t.Steps))
	}
	col := StepColumn
	for seen[col] {
		col = "_" + col
	}
	out.Fields = append([]string{col}, fields...)
	out.Items = []map[string]string{}
	for _, s := range t.Steps {
		if s.Records == nil {
			continue
		}
		idx := strconv.Itoa(s.Index)
		for _, it := range s.Records.Items {
			rec := make(map[string]string, len(out.Fields))
			for _, f := range fields {
				rec[f] = it[f]
			}
			rec[col] = idx
			out.Items = append(out.Items, rec)
		}
	}
	return out, nil
}
