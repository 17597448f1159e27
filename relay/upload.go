package relay

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/tabrelay/tabrelay/relay/wire"
)

// Uploads whatever the extension's file access.
//
// Chrome answers DOM.setFileInputFiles from an extension's debugger with "Not allowed" when the
// extension may not read local files ("Allow access to file URLs" off on chrome://extensions,
// the default for store installs). The relay runs on the same machine as the browser: it then
// reads the files itself and gives their bytes to the page, in an isolated world, as File
// objects set on the input through a DataTransfer, firing input and change as a real choice
// does. Every client and the agent get this, up to HubOptions.MaxUploadBytes.

// DefaultMaxUploadBytes is HubOptions.MaxUploadBytes's default.
const DefaultMaxUploadBytes = 50 << 20

// uploadPiece is how much base64 text one Runtime.callFunctionOn carries to the page: requests
// to the extension are single frames, so a large upload goes in several.
const uploadPiece = 4 << 20

// notAllowed is Chrome's answer to DOM.setFileInputFiles without file access.
const notAllowed = "Not allowed"

// ErrUploadTooLarge is returned (as a CDP error) when files to set on an input without the
// extension's file access are larger together than HubOptions.MaxUploadBytes.
var ErrUploadTooLarge = errors.New("upload too large")

// uploadFile is one file read for the fallback.
type uploadFile struct {
	Name         string  `json:"name"`
	Type         string  `json:"type"`
	LastModified float64 `json:"lastModified"`
	Pieces       int     `json:"pieces"`
	data         string  // base64
}

// setFileInputFiles forwards DOM.setFileInputFiles and, when Chrome refuses it for lack of file
// access, sets the files itself (see above). It reports whether it handled the command. Call
// with h.mu held.
func (h *Hub) setFileInputFiles(r *req) bool {
	var par struct {
		Files         []string `json:"files"`
		NodeID        int64    `json:"nodeId"`
		BackendNodeID int64    `json:"backendNodeId"`
		ObjectID      string   `json:"objectId"`
	}
	if len(r.params) > 0 && json.Unmarshal(r.params, &par) != nil {
		return false // Chrome tells the client what is wrong
	}
	s, t := r.s, r.s.t
	n := s.opened()
	r.c.inflight++
	s.emulating++
	finished := false
	finish := func(send func()) {
		if finished {
			return
		}
		finished = true
		s.emulating--
		r.c.inflight--
		if _, ok := r.c.sessions[s.id]; ok && !r.c.closed {
			s.inOrder(n, send)
		}
		s.answered(n)
	}
	fail := func(msg string) { finish(func() { r.fail(codeServerError, msg) }) }
	offline := func() { fail("tabrelay: the browser extension is not connected") }
	call := func(method string, params any, done func(result []byte, errRaw []byte)) {
		if !t.live || h.ext == nil {
			offline()
			return
		}
		raw := mustJSON(params)
		p := &pending{method: method, target: t, done: done}
		if !h.request(p, func(id int64) []byte { return extCDPMsg(id, t.id, s.ext, method, raw) }, h.opts.CommandTimeout) {
			offline()
		}
	}
	p := &pending{method: r.method, target: t, done: func(result, errRaw []byte) {
		var cdpErr wire.Error
		if errRaw == nil || json.Unmarshal(errRaw, &cdpErr) != nil || cdpErr.Message != notAllowed {
			finish(func() {
				if errRaw != nil {
					r.c.send(rawErrorMsg(r.id, r.sid, errRaw))
					return
				}
				r.ok(result)
			})
			return
		}
		h.log.Debug().Str("target", t.id).Int("files", len(par.Files)).Msg("DOM.setFileInputFiles: Chrome says the extension has no file access; the relay sets the files itself")
		limit := h.opts.MaxUploadBytes
		go func() { // read the files without holding the hub
			files, err := readUploads(par.Files, limit)
			h.mu.Lock()
			defer h.mu.Unlock()
			if err != nil {
				fail(err.Error())
				return
			}
			h.uploadInPage(t, s, par.NodeID, par.BackendNodeID, par.ObjectID, files, call, func(errMsg string) {
				if errMsg != "" {
					fail(errMsg)
					return
				}
				finish(func() { r.ok(nil) })
			})
		}()
	}}
	if !t.live || h.ext == nil {
		offline()
		return true
	}
	if !h.request(p, func(id int64) []byte { return extCDPMsg(id, t.id, s.ext, r.method, r.params) }, h.opts.CommandTimeout) {
		offline()
	}
	return true
}

// readUploads reads the files to upload, refusing directories, unreadable files and a total
// past limit.
func readUploads(paths []string, limit int64) ([]uploadFile, error) {
	var total int64
	var out []uploadFile
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("tabrelay: cannot upload %s: %w", p, err)
		}
		if st.IsDir() {
			return nil, fmt.Errorf("tabrelay: cannot upload %s: it is a directory", p)
		}
		total += st.Size()
		if total > limit {
			return nil, fmt.Errorf("tabrelay: %w: the files to upload are more than %d MB together, the limit when the extension has no file access (the relay then sends their bytes to the page itself); turn on \"Allow access to file URLs\" for tabrelay on chrome://extensions, so that Chrome reads the files, or raise the limit (tabrelay serve --max-upload-mb)", ErrUploadTooLarge, limit>>20)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("tabrelay: cannot upload %s: %w", p, err)
		}
		typ := mime.TypeByExtension(strings.ToLower(filepath.Ext(p)))
		if i := strings.IndexByte(typ, ';'); i >= 0 {
			typ = typ[:i] // Chrome gives a File's type without parameters
		}
		b64 := base64.StdEncoding.EncodeToString(data)
		out = append(out, uploadFile{
			Name: filepath.Base(p), Type: typ, LastModified: float64(st.ModTime().UnixMilli()),
			Pieces: (len(b64) + uploadPiece - 1) / uploadPiece, data: b64,
		})
	}
	return out, nil
}

// uploadStore keeps the pieces in the page until the files are made (a property of the isolated
// world's global, or of the page's when the node is not in the main frame's document).
const uploadStore = "__tabrelayUpload"

// addPieceFn adds one base64 piece, decoded, to the store.
const addPieceFn = `function (key, b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  (globalThis[key] ??= []).push(bytes);
}`

// setFilesFn makes the File objects from the stored pieces and sets them on the input, firing
// input and change as Chrome does when a person chooses files.
const setFilesFn = `function (key, files) {
  const pieces = globalThis[key] ?? [];
  delete globalThis[key];
  if (!(this instanceof HTMLInputElement) || this.type !== 'file') throw new Error('Node is not a file input element');
  const dt = new DataTransfer();
  let at = 0;
  for (const f of files) {
    dt.items.add(new File(pieces.slice(at, at + f.pieces), f.name, { type: f.type, lastModified: f.lastModified }));
    at += f.pieces;
  }
  this.files = dt.files;
  this.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
}`

// uploadInPage resolves the input in an isolated world of its frame (or the page's own world
// when that fails), sends the files' pieces and sets them. done gets "" or an error message.
// Call with h.mu held; done is called with h.mu held.
func (h *Hub) uploadInPage(t *target, s *session, nodeID, backendID int64, objectID string, files []uploadFile, call func(string, any, func([]byte, []byte)), done func(errMsg string)) {
	key := fmt.Sprintf("%s%d", uploadStore, h.nextID)
	send := func(obj string) {
		type step struct {
			fn   string
			args []any
		}
		var steps []step
		for _, f := range files {
			for i := 0; i < len(f.data); i += uploadPiece {
				steps = append(steps, step{addPieceFn, []any{key, f.data[i:min(i+uploadPiece, len(f.data))]}})
			}
		}
		steps = append(steps, step{setFilesFn, []any{key, files}})
		var next func(i int)
		next = func(i int) {
			if i == len(steps) {
				h.internal(t, s.ext, "Runtime.releaseObjectGroup", []byte(`{"objectGroup":"tabrelay-upload"}`))
				done("")
				return
			}
			args := make([]map[string]any, len(steps[i].args))
			for j, a := range steps[i].args {
				args[j] = map[string]any{"value": a}
			}
			call("Runtime.callFunctionOn", map[string]any{"objectId": obj, "functionDeclaration": steps[i].fn, "arguments": args, "silent": true}, func(result, errRaw []byte) {
				if msg := callError(result, errRaw); msg != "" {
					done("tabrelay: could not set the files on the input in the page: " + msg)
					return
				}
				next(i + 1)
			})
		}
		next(0)
	}
	if objectID != "" {
		send(objectID)
		return
	}
	if nodeID == 0 && backendID == 0 {
		done("Either nodeId, backendNodeId or objectId must be specified")
		return
	}
	node := map[string]any{}
	if nodeID != 0 {
		node["nodeId"] = nodeID
	} else {
		node["backendNodeId"] = backendID
	}
	resolve := func(ctxID int64, then func(obj string, errMsg string)) {
		p := map[string]any{"objectGroup": "tabrelay-upload"}
		for k, v := range node {
			p[k] = v
		}
		if ctxID != 0 {
			p["executionContextId"] = ctxID
		}
		call("DOM.resolveNode", p, func(result, errRaw []byte) {
			var res struct {
				Object struct {
					ObjectID string `json:"objectId"`
				} `json:"object"`
			}
			if msg := callError(nil, errRaw); msg != "" {
				then("", msg)
				return
			}
			if json.Unmarshal(result, &res) != nil || res.Object.ObjectID == "" {
				then("", "DOM.resolveNode gave no object")
				return
			}
			then(res.Object.ObjectID, "")
		})
	}
	// the frame of the session: the tab's main frame, or the child target's
	frameID := t.id
	if s.ext != "" {
		if ch := t.children[s.ext]; ch != nil {
			frameID = ch.targetID
		}
	}
	call("Page.createIsolatedWorld", map[string]any{"frameId": frameID, "worldName": "tabrelay upload"}, func(result, errRaw []byte) {
		var w struct {
			ContextID int64 `json:"executionContextId"`
		}
		if errRaw != nil || json.Unmarshal(result, &w) != nil {
			w.ContextID = 0
		}
		resolve(w.ContextID, func(obj, errMsg string) {
			if errMsg == "" {
				send(obj)
				return
			}
			if w.ContextID == 0 {
				done(errMsg)
				return
			}
			// the node is in another frame's document (a same-process iframe): its own world
			resolve(0, func(obj, errMsg string) {
				if errMsg != "" {
					done(errMsg)
					return
				}
				send(obj)
			})
		})
	})
}

// callError is the message of a failed CDP call or of the exception a function threw, or "".
func callError(result, errRaw []byte) string {
	if errRaw != nil {
		var e wire.Error
		if json.Unmarshal(errRaw, &e) == nil && e.Message != "" {
			return e.Message
		}
		return string(errRaw)
	}
	var res struct {
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if json.Unmarshal(result, &res) == nil && res.ExceptionDetails != nil {
		if d := res.ExceptionDetails.Exception.Description; d != "" {
			return d
		}
		return res.ExceptionDetails.Text
	}
	return ""
}
