package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// envelope is the routing part of a message, from CDP clients or from the extension. Raw fields
// point into the message bytes: payloads are never decoded on the hot path.
type envelope struct {
	hasID     bool
	id        int64
	rawID     []byte // the id as sent (may not be an integer)
	typ       string // extension messages only
	method    string
	sessionID string
	targetID  string
	params    []byte
	result    []byte
	errRaw    []byte
	tab       []byte
	children  []byte
	reason    string
	protocol  int
	product   string
	userAgent string
	extVer    string
	onDemand  bool   // hello: the extension attaches the debugger only when asked
	batches   bool   // hello: the extension takes batch frames (see wire.BatchFrames)
	trace     []byte // response: the extension's times of a traced request (see legs.go)
}

var (
	errNotObject   = errors.New("message must be a JSON object")
	errInvalidJSON = errors.New("invalid JSON")
)

// parseEnvelope reads the top-level keys of a JSON object. Values of keys it needs as strings
// or numbers are decoded; object values are kept as sub-slices of b. Unknown keys are skipped.
func parseEnvelope(b []byte) (envelope, error) {
	var e envelope
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return e, errNotObject
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		if skipWS(b, i+1) != len(b) {
			return e, errors.New("trailing data after JSON object")
		}
		return e, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return e, errors.New("expected a string key")
		}
		kEnd, err := skipString(b, i)
		if err != nil {
			return e, err
		}
		key := b[i+1 : kEnd-1]
		i = skipWS(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return e, errors.New("expected ':' after key")
		}
		i = skipWS(b, i+1)
		vEnd, err := skipValue(b, i, 0)
		if err != nil {
			return e, err
		}
		val := b[i:vEnd]
		if err := e.set(key, val); err != nil {
			return e, err
		}
		i = skipWS(b, vEnd)
		if i >= len(b) {
			return e, errors.New("unexpected end of JSON object")
		}
		if b[i] == '}' {
			if skipWS(b, i+1) != len(b) {
				return e, errors.New("trailing data after JSON object")
			}
			return e, nil
		}
		if b[i] != ',' {
			return e, errors.New("expected ',' or '}' in object")
		}
		i = skipWS(b, i+1)
	}
}

func (e *envelope) set(key, val []byte) error {
	var err error
	switch string(key) {
	case "id":
		e.rawID = val
		if n, perr := strconv.ParseInt(string(val), 10, 64); perr == nil {
			e.id, e.hasID = n, true
		} else if len(val) > 0 && val[0] != 'n' { // null is no id
			e.hasID = true
			err = errors.New("'id' must be an integer")
		}
	case "method":
		e.method, err = decodeString(val, "method")
	case "sessionId":
		e.sessionID, err = decodeString(val, "sessionId")
	case "targetId":
		e.targetID, err = decodeString(val, "targetId")
	case "type":
		e.typ, err = decodeString(val, "type")
	case "reason":
		e.reason, err = decodeString(val, "reason")
	case "product":
		e.product, err = decodeString(val, "product")
	case "userAgent":
		e.userAgent, err = decodeString(val, "userAgent")
	case "extensionVersion":
		e.extVer, err = decodeString(val, "extensionVersion")
	case "onDemand":
		e.onDemand = string(val) == "true"
	case "batches":
		e.batches = string(val) == "true"
	case "protocol":
		e.protocol, err = strconv.Atoi(string(val))
	case "params":
		e.params = val
	case "result":
		e.result = val
	case "error":
		e.errRaw = val
	case "tab":
		e.tab = val
	case "children":
		e.children = val
	case "trace":
		e.trace = val
	}
	return err
}

func decodeString(val []byte, field string) (string, error) {
	if len(val) == 0 || val[0] != '"' {
		if bytes.Equal(val, []byte("null")) {
			return "", nil
		}
		return "", errors.New("'" + field + "' must be a string")
	}
	inner := val[1 : len(val)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), nil
	}
	var s string
	if err := json.Unmarshal(val, &s); err != nil {
		return "", errors.New("'" + field + "' is not a valid string")
	}
	return s, nil
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the closing quote of the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexAny(b[j:], "\"\\")
		if k < 0 {
			return 0, errors.New("unterminated string")
		}
		j += k
		if b[j] == '"' {
			return j + 1, nil
		}
		j += 2 // skip the escaped character
		if j > len(b) {
			return 0, errors.New("unterminated string")
		}
	}
}

const maxDepth = 1000

// skipValue returns the index after the JSON value starting at b[i]. Nested values are checked
// for balanced brackets and terminated strings; scalars for their first character only, which is
// enough to route: payloads are validated by whoever decodes them.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("unexpected end of JSON")
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		if depth > maxDepth {
			return 0, errors.New("JSON nested too deeply")
		}
		stack := []byte{c}
		j := i + 1
		for len(stack) > 0 {
			k := bytes.IndexAny(b[j:], "\"{}[]")
			if k < 0 {
				return 0, errors.New("unexpected end of JSON")
			}
			j += k
			switch b[j] {
			case '"':
				end, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = end
				continue
			case '{', '[':
				if len(stack) > maxDepth {
					return 0, errors.New("JSON nested too deeply")
				}
				stack = append(stack, b[j])
			case '}':
				if stack[len(stack)-1] != '{' {
					return 0, errors.New("mismatched '}'")
				}
				stack = stack[:len(stack)-1]
			case ']':
				if stack[len(stack)-1] != '[' {
					return 0, errors.New("mismatched ']'")
				}
				stack = stack[:len(stack)-1]
			}
			j++
		}
		return j, nil
	case c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n':
		j := i + 1
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
			j++
		}
		lit := b[i:j]
		if c == 't' && !bytes.Equal(lit, []byte("true")) || c == 'f' && !bytes.Equal(lit, []byte("false")) || c == 'n' && !bytes.Equal(lit, []byte("null")) {
			return 0, errors.New("invalid literal")
		}
		return j, nil
	default:
		return 0, errors.New("invalid character in JSON")
	}
}

// The errors Chrome answers malformed client messages with, in its words.
const (
	msgNotObject = "Message must be an object"
	msgNoID      = "Message must have integer 'id' property"
	msgNoMethod  = "Message must have string 'method' property"
	msgBadParams = "Message may have object 'params' property"
	msgBadSID    = "Message may have string 'sessionId' property"
)

// malformedReply is the answer to a client message parseEnvelope refused (err), as Chrome
// answers it: not JSON, -32700; not an object or no integer id, -32600 without id (a message
// whose id cannot be read must not be taken for the command with a similar id); a bad method,
// params or sessionId, -32600 with the id. The connection stays open.
func malformedReply(msg []byte, err error) []byte {
	if !json.Valid(msg) {
		return errorMsg(false, 0, "", codeParseError, "Message must be valid JSON: "+err.Error())
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return errorMsg(false, 0, "", codeInvalidRequest, msgNotObject)
	}
	id, perr := strconv.ParseInt(string(m["id"]), 10, 64)
	if perr != nil {
		return errorMsg(false, 0, "", codeInvalidRequest, msgNoID)
	}
	var method string
	if json.Unmarshal(m["method"], &method) != nil || method == "" {
		return errorMsg(true, id, "", codeInvalidRequest, msgNoMethod)
	}
	if p := m["params"]; len(p) > 0 && p[0] != '{' {
		return errorMsg(true, id, "", codeInvalidRequest, msgBadParams)
	}
	if sid, ok := m["sessionId"]; ok && (len(sid) == 0 || sid[0] != '"') {
		return errorMsg(true, id, "", codeInvalidRequest, msgBadSID)
	}
	return errorMsg(true, id, "", codeInvalidRequest, "Message is malformed: "+err.Error())
}
