package tools

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// Format is how a command prints its result.
type Format int

const (
	// Text is for people: tables for listings, one line per item for streams.
	Text Format = iota
	// JSON is for scripts: one document for listings, JSON lines for streams.
	JSON
)

// ParseFormat reads the value of -o: "text" (or "") and "json".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "", "text", "table":
		return Text, nil
	case "json":
		return JSON, nil
	}
	return Text, fmt.Errorf("output format %q: want text or json: %w", s, ErrUsage)
}

func (f Format) String() string {
	if f == JSON {
		return "json"
	}
	return "text"
}

// ErrUsage marks an error in how a command was called (a bad flag value or a
// missing argument) rather than in what it did; kzctl exits 2 for it.
var ErrUsage = errors.New("usage")

func usagef(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrUsage)...)
}

// kafkaErr joins a Kafka error with the message the broker sent along with
// it, if any, keeping the kerr error wrapped so its name stays first.
func kafkaErr(err error, msg string) error {
	if err == nil {
		return nil
	}
	if msg == "" || strings.Contains(err.Error(), msg) {
		return err
	}
	return fmt.Errorf("%w (%s)", err, msg)
}

// table writes aligned columns: a header row, then rows, written out by
// flush with no trailing blanks on a line (an empty last cell leaves none).
type table struct {
	w   io.Writer
	buf bytes.Buffer
	tw  *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{w: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 8, 2, ' ', 0)
	if len(header) > 0 {
		t.row(strAny(header)...)
	}
	return t
}

func strAny(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		a[i] = v
	}
	return a
}

func (t *table) row(cells ...any) {
	for i, c := range cells {
		if i > 0 {
			io.WriteString(t.tw, "\t")
		}
		fmt.Fprint(t.tw, c)
	}
	io.WriteString(t.tw, "\n")
}

func (t *table) flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	var out bytes.Buffer
	for line := range bytes.Lines(t.buf.Bytes()) {
		out.Write(bytes.TrimRight(line, " \n"))
		out.WriteByte('\n')
	}
	t.buf.Reset()
	_, err := t.w.Write(out.Bytes())
	return err
}

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJSONLine writes v as one compact JSON line.
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// jsonBytes is a key, value or header value in JSON output: a string when the
// bytes are UTF-8, else base64 under the field's _base64 twin, so nothing is
// lost; null bytes are a JSON null.
func jsonBytes(b []byte) (s *string, b64 string) {
	if b == nil {
		return nil, ""
	}
	if utf8.Valid(b) {
		v := string(b)
		return &v, ""
	}
	return nil, base64.StdEncoding.EncodeToString(b)
}

// printable renders bytes for a line of text: as they are when they are
// printable UTF-8, else Go-quoted so one record stays on one line.
func printable(b []byte) string {
	if !utf8.Valid(b) || strings.IndexFunc(string(b), func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0 {
		return strconv.Quote(string(b))
	}
	return string(b)
}

// int32List renders broker ids as 1,2,3.
func int32List(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}

// oneLine keeps an error to one line: brokers and libraries sometimes put
// newlines in messages.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
