package journal

// The fast read of a record's envelope. Rules of this file:
//
//   - parseEnvelope reads only lines in the exact layout json.Marshal gives
//     a Record: {"seq":…,"time":"…","pid":…,"session":"…","kind":"…",
//     "data":{…},"prev":"…"} (data optional), strings without escapes or
//     bytes outside printable ASCII, numbers without sign (seq), fraction or
//     exponent. Anything else — an older layout, an unknown field, an escape,
//     whitespace — is left to encoding/json, which decides.
//   - Where it answers, it answers what encoding/json would: the same Record
//     for a line encoding/json reads, and it answers nothing (ok false) for a
//     line encoding/json would refuse, so the fallback names the problem.
//     FuzzEnvelope holds it to that.
//   - The data object is checked to be valid JSON (json.Valid), as
//     json.Unmarshal of the whole line checks it, but it is not decoded: the
//     live state decodes the kinds it folds. That is where audit verify's
//     time went (reflection over every field of every record).

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/walletgate/walletgate/journal/records"
)

// lineParser is what one goroutine reading lines keeps between them. Its
// zero value (or nil) reads every record whole.
type lineParser struct {
	// skipData leaves out the data of the kinds the live state does not
	// fold (dataUnread), still checked to be valid JSON: for a reader that
	// keeps no record (Verify).
	skipData bool
	strs     map[string]string // sessions and kinds, read once each
}

// dataUnread are the kinds whose data neither the live state (Live.Apply)
// nor a check reads: most records of a journal (every tool call's start
// and end). A kind Apply folds must not be here; if it were, Verify would
// fold it empty and find the checkpoints wrong.
var dataUnread = map[string]bool{records.KindToolStart: true, records.KindToolEnd: true, records.KindPreview: true}

// str is string(b), shared with the last time it was read.
func (lp *lineParser) str(b []byte) string {
	if lp == nil {
		return string(b)
	}
	if s, ok := lp.strs[string(b)]; ok {
		return s
	}
	if lp.strs == nil || len(lp.strs) > 4096 {
		lp.strs = map[string]string{}
	}
	s := string(b)
	lp.strs[s] = s
	return s
}

// parseEnvelope decodes line as json.Unmarshal into a Record would, for a
// line in json.Marshal's layout; ok is false for any other line.
func parseEnvelope(line []byte, lp *lineParser) (rec records.Record, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !ok {
		return records.Record{}, false
	}
	var num []byte
	if num, rest, ok = cutNumber(rest); !ok || num[0] == '-' {
		return records.Record{}, false
	}
	if rec.Seq, ok = parseUint(num); !ok {
		return records.Record{}, false
	}
	var s []byte
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"time":`)); !ok {
		return records.Record{}, false
	}
	if s, rest, ok = cutPlainString(rest); !ok {
		return records.Record{}, false
	}
	if rec.Time.UnmarshalJSON(s) != nil {
		return records.Record{}, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"pid":`)); !ok {
		return records.Record{}, false
	}
	if num, rest, ok = cutNumber(rest); !ok {
		return records.Record{}, false
	}
	pid, err := strconv.ParseInt(string(num), 10, strconv.IntSize)
	if err != nil {
		return records.Record{}, false
	}
	rec.PID = int(pid)
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"session":`)); !ok {
		return records.Record{}, false
	}
	if s, rest, ok = cutPlainString(rest); !ok {
		return records.Record{}, false
	}
	rec.Session = lp.str(s[1 : len(s)-1])
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"kind":`)); !ok {
		return records.Record{}, false
	}
	if s, rest, ok = cutPlainString(rest); !ok {
		return records.Record{}, false
	}
	rec.Kind = lp.str(s[1 : len(s)-1])
	// prev is the last field: its value is between the last `,"prev":` and
	// the closing brace, and holds no quote, so the last occurrence is it.
	tail, ok := bytes.CutSuffix(rest, []byte(`}`))
	if !ok {
		return records.Record{}, false
	}
	at := len(tail) - len(`,"prev":""`) - 64 // where a hash's prev begins
	if at < 0 || !bytes.HasPrefix(tail[at:], []byte(`,"prev":"`)) {
		at = bytes.LastIndex(tail, []byte(`,"prev":`))
	}
	if at < 0 {
		return records.Record{}, false
	}
	if s, tail, ok = cutPlainString(tail[at+len(`,"prev":`):]); !ok || len(tail) != 0 {
		return records.Record{}, false
	}
	rec.Prev = string(s[1 : len(s)-1])
	mid := rest[:at]
	if len(mid) > 0 {
		data, ok := bytes.CutPrefix(mid, []byte(`,"data":`))
		if !ok || len(data) == 0 || data[0] != '{' || !json.Valid(data) {
			return records.Record{}, false
		}
		if lp == nil || !lp.skipData || !dataUnread[rec.Kind] {
			rec.Data = append(json.RawMessage(nil), data...)
		}
	}
	return rec, true
}

// cutNumber cuts a JSON integer (optional minus, digits, no leading zero)
// off b, up to the next comma.
func cutNumber(b []byte) (num, rest []byte, ok bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	digits := i - start
	if digits == 0 || (digits > 1 && b[start] == '0') || i >= len(b) || b[i] != ',' {
		return nil, nil, false
	}
	return b[:i], b[i:], true
}

// parseUint is strconv.ParseUint of digits, without a string.
func parseUint(digits []byte) (uint64, bool) {
	if len(digits) > 19 {
		n, err := strconv.ParseUint(string(digits), 10, 64)
		return n, err == nil
	}
	var n uint64
	for _, c := range digits {
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// cutPlainString cuts a quoted string of printable ASCII without escapes
// off b, quotes included.
func cutPlainString(b []byte) (s, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return b[:i+1], b[i+1:], true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, nil, false
		}
	}
	return nil, nil, false
}
