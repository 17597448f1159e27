// Package csvsafe writes CSV that a spreadsheet opens as data. Our CSV files hold text that
// web pages wrote (extracted records, step results, URLs), and a cell a spreadsheet reads as a
// formula (=HYPERLINK(…), =cmd|…, @SUM(…)) would run when the user opens the file: such a cell
// is written with a leading apostrophe, which spreadsheets show as text and do not evaluate.
package csvsafe

import (
	"encoding/csv"
	"io"
	"strings"
)

// Writer is a csv.Writer whose rows are made safe with [Cell].
type Writer struct {
	*csv.Writer
	row []string
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{Writer: csv.NewWriter(w)} }

// Write writes one row, each cell made safe with [Cell] (record is not changed).
func (w *Writer) Write(record []string) error {
	w.row = w.row[:0]
	for _, c := range record {
		w.row = append(w.row, Cell(c))
	}
	return w.Writer.Write(w.row)
}

// Cell is s as a spreadsheet should show it: s itself, or s after an apostrophe when a
// spreadsheet would read it as a formula (it starts with =, @, a tab or a carriage return, or
// with + or - followed by more than a number: "-5", "+1 555 0100" stay as they are).
func Cell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '@', '\t', '\r':
		return "'" + s
	case '+', '-':
		if strings.Trim(s[1:], "0123456789 .,()") != "" || len(s) == 1 {
			return "'" + s
		}
	}
	return s
}
