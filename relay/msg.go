package relay

import (
	"encoding/json"
	"strconv"
)

// CDP error codes used in replies, as Chrome uses them.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeServerError    = -32000
	codeNoSession      = -32001
)

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendSession(b []byte, sessionID string) []byte {
	if sessionID != "" {
		b = append(b, `,"sessionId":`...)
		b = appendString(b, sessionID)
	}
	return b
}

// resultMsg builds {"id":N,"result":R,"sessionId":S}.
func resultMsg(id int64, sessionID string, result []byte) []byte {
	if len(result) == 0 {
		result = []byte("{}")
	}
	b := make([]byte, 0, len(result)+64)
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	b = appendSession(b, sessionID)
	return append(b, '}')
}

// errorMsg builds {"id":N,"error":{"code":C,"message":M},"sessionId":S}; hasID false omits id.
func errorMsg(hasID bool, id int64, sessionID string, code int, message string) []byte {
	b := make([]byte, 0, 96+len(message))
	b = append(b, '{')
	if hasID {
		b = append(b, `"id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, ',')
	}
	b = append(b, `"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = appendString(b, message)
	b = append(b, '}')
	b = appendSession(b, sessionID)
	return append(b, '}')
}

// rawErrorMsg builds an error reply carrying the extension's error object as is.
func rawErrorMsg(id int64, sessionID string, errRaw []byte) []byte {
	b := make([]byte, 0, len(errRaw)+64)
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"error":`...)
	b = append(b, errRaw...)
	b = appendSession(b, sessionID)
	return append(b, '}')
}

// eventMsg builds {"method":M,"params":P,"sessionId":S}.
func eventMsg(method string, params []byte, sessionID string) []byte {
	if len(params) == 0 {
		params = []byte("{}")
	}
	b := make([]byte, 0, len(params)+len(method)+64)
	b = append(b, `{"method":`...)
	b = appendString(b, method)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	b = appendSession(b, sessionID)
	return append(b, '}')
}

// extCDPMsg builds the relay's cdp request to the extension.
func extCDPMsg(id int64, targetID, extSession, method string, params []byte) []byte {
	b := make([]byte, 0, len(params)+len(method)+len(targetID)+96)
	b = append(b, `{"type":"cdp","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"targetId":`...)
	b = appendString(b, targetID)
	if extSession != "" {
		b = append(b, `,"sessionId":`...)
		b = appendString(b, extSession)
	}
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// mustJSON encodes v, which must be encodable (our own structs and maps).
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("relay: encoding " + err.Error())
	}
	return b
}
