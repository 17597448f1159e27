// Package wire holds the message shapes of the protocol spoken between the tabrelay browser
// extension and the relay over the /extension WebSocket. PROTOCOL.md beside this file is the
// authoritative description; the extension's protocol.js is its JavaScript twin.
package wire

import "encoding/json"

// Version is the protocol version this relay speaks. Bump it on incompatible changes.
const Version = 1

// Close codes the relay uses on the extension socket.
const (
	// CloseReplaced means a newer extension connection took over; do not reconnect on your own.
	CloseReplaced = 4001
	// CloseBadVersion means the hello's protocol version is not supported.
	CloseBadVersion = 4002
	// CloseTokenRotated means the pairing secret changed; a new token is needed.
	CloseTokenRotated = 4003
)

// Message types.
const (
	TypeHello       = "hello"
	TypeWelcome     = "welcome"
	TypeTabShared   = "tabShared"
	TypeTabUpdated  = "tabUpdated"
	TypeTabUnshared = "tabUnshared"
	TypeEvent       = "event"
	TypeResponse    = "response"
	TypePing        = "ping"
	TypePong        = "pong"

	TypeCDP         = "cdp"
	TypeCreateTab   = "createTab"
	TypeCloseTab    = "closeTab"
	TypeActivateTab = "activateTab"
	TypeUnshareTab  = "unshareTab"
	// TypeAttachTab asks an extension that said "onDemand" to attach the tab's debugger now.
	TypeAttachTab = "attachTab"
	// TypeDetachTab asks an extension that said "onDemand" to detach the tab's debugger; the tab
	// stays shared.
	TypeDetachTab = "detachTab"
)

// Reasons a tab stops being shared.
const (
	ReasonUser           = "user"
	ReasonClosed         = "closed"
	ReasonCanceledByUser = "canceled_by_user"
	ReasonCrashed        = "crashed"
	ReasonReplaced       = "replaced"
	ReasonDiscarded      = "discarded"
	ReasonDetached       = "detached"
)

// Origins of a share: who caused the tab to be shared.
const (
	OriginUser   = "user"
	OriginOpener = "opener"
	OriginClient = "client"
)

// Envelope is every message's routing part. Payloads (params, result, error, tab) stay raw so the
// hot path never decodes or re-encodes them.
type Envelope struct {
	Type      string          `json:"type"`
	ID        int64           `json:"id,omitempty"`
	TargetID  string          `json:"targetId,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`

	// hello
	Protocol         int    `json:"protocol,omitempty"`
	ExtensionVersion string `json:"extensionVersion,omitempty"`
	Product          string `json:"product,omitempty"`
	UserAgent        string `json:"userAgent,omitempty"`
	// OnDemand says the extension attaches the debugger only when asked (see TypeAttachTab).
	OnDemand bool `json:"onDemand,omitempty"`
	// Batches says the extension takes batch frames from the relay (see MaxBatchBytes).
	Batches bool `json:"batches,omitempty"`

	// tabShared / tabUpdated / tabUnshared
	Tab      *Tab    `json:"tab,omitempty"`
	Children []Child `json:"children,omitempty"`
	TabID    int64   `json:"tabId,omitempty"`
	Reason   string  `json:"reason,omitempty"`
	// Trace is a traced request's answer's four extension times (Unix ms; see PROTOCOL.md).
	Trace []float64       `json:"trace,omitempty"`
	Extra json.RawMessage `json:"-"`
}

// Tab describes one shared tab as the extension reports it.
type Tab struct {
	TabID          int64  `json:"tabId"`
	TargetID       string `json:"targetId"`
	URL            string `json:"url"`
	Title          string `json:"title"`
	WindowID       int64  `json:"windowId,omitempty"`
	Active         bool   `json:"active,omitempty"`
	OpenerTargetID string `json:"openerTargetId,omitempty"`
	Origin         string `json:"origin,omitempty"`
	Reattached     bool   `json:"reattached,omitempty"`
	// Detached says the tab is shared without the debugger attached (debugger on demand).
	Detached bool `json:"detached,omitempty"`
	// Loading says the tab was still loading (chrome.tabs' status) when the extension looked; in
	// the announcement of a tab whose debugger was attached again, that its main document was
	// (the page's own document.readyState: chrome.tabs also counts the loads of its frames).
	Loading bool `json:"loading,omitempty"`
}

// Child is a child target (out-of-process iframe, worker) already attached when a tab is announced.
type Child struct {
	SessionID  string          `json:"sessionId"`
	TargetInfo json.RawMessage `json:"targetInfo"`
}

// CDPRequest asks the extension to send a CDP command to a tab or one of its child sessions.
type CDPRequest struct {
	Type      string          `json:"type"`
	ID        int64           `json:"id"`
	TargetID  string          `json:"targetId"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
	// Trace asks the extension to answer with its own times (PROTOCOL.md, "Tracing a
	// command's legs"); only a relay run with per-leg tracing sets it.
	Trace bool `json:"trace,omitempty"`
}

// TabRequest asks the extension to create, close, activate or unshare a tab.
type TabRequest struct {
	Type       string `json:"type"`
	ID         int64  `json:"id"`
	TargetID   string `json:"targetId,omitempty"`
	URL        string `json:"url,omitempty"`
	Background bool   `json:"background,omitempty"`
	NewWindow  bool   `json:"newWindow,omitempty"`
}

// Welcome is the relay's answer to hello.
type Welcome struct {
	Type         string `json:"type"`
	Protocol     int    `json:"protocol"`
	RelayVersion string `json:"relayVersion"`
	BrowserID    string `json:"browserId"`
	// Chunks says the relay takes large messages split into chunk frames (see ChunkPrefix).
	Chunks bool `json:"chunks,omitempty"`
	// Batches says the relay takes batch frames from the extension too (see MaxBatchBytes).
	Batches bool `json:"batches,omitempty"`
}

// ChunkPrefix starts a chunk frame: a piece of one large message the extension split so that
// small messages can go between its pieces. The frame is the text
//
//	#chunk <stream> <more|end>\n<piece>
//
// where stream (a decimal number, unique on the connection while the message is in flight)
// names the message and the pieces of a stream, concatenated in order, are its JSON text. Only
// an extension told "chunks": true in the welcome sends them. See PROTOCOL.md.
const ChunkPrefix = "#chunk "

// ChunkSize is how much text the extension puts in one chunk frame at most (in UTF-16 code
// units, so at most 3 MiB of UTF-8), and the size above which it splits a message.
const ChunkSize = 1 << 20

// MaxBatchBytes bounds a batch frame: a JSON array of several messages in one text frame,
// which the relay sends an extension whose hello said "batches": true when several messages
// wait to go out at once (under load), so the extension handles them in one socket event. A
// message as large as this or larger always goes in a frame of its own. See PROTOCOL.md.
const MaxBatchBytes = 256 << 10

// Error is a CDP-shaped error.
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

// Downloads (see PROTOCOL.md, "Downloads").
const (
	// TypeDownload is the extension's report on a download started in a shared tab
	// (Download), sent when chrome.downloads says it completed or was interrupted.
	TypeDownload = "download"
	// TypeCancelDownload asks the extension to cancel a download (DownloadRequest).
	TypeCancelDownload = "cancelDownload"
)

// States of a Download, as chrome.downloads names them.
const (
	DownloadStateInProgress  = "in_progress"
	DownloadStateComplete    = "complete"
	DownloadStateInterrupted = "interrupted"
)

// Download is the extension's report on a download started in a shared tab: GUID is the
// download's guid from the tab's Page.downloadWillBegin, the rest comes from chrome.downloads.
type Download struct {
	Type          string  `json:"type"`
	TargetID      string  `json:"targetId"`
	GUID          string  `json:"guid"`
	State         string  `json:"state"`
	Path          string  `json:"path,omitempty"` // where the browser saved it (absolute), once known
	Error         string  `json:"error,omitempty"`
	TotalBytes    float64 `json:"totalBytes,omitempty"`
	ReceivedBytes float64 `json:"receivedBytes,omitempty"`
}

// DownloadRequest asks the extension to act on a download, named by its guid.
type DownloadRequest struct {
	Type string `json:"type"`
	ID   int64  `json:"id"`
	GUID string `json:"guid"`
}

// Site permissions (see PROTOCOL.md, "Site permissions").
const (
	// TypeSetPermissions asks the extension to make its content settings exactly the list
	// given (PermissionsRequest): it clears every content type of ContentTypes it manages, then
	// sets each entry. An empty list clears them all.
	TypeSetPermissions = "setPermissions"
)

// Content types (chrome.contentSettings names) the extension manages for CDP clients' site
// permission overrides, and clears when it starts, connects or loses the relay.
const (
	ContentTypeLocation      = "location"
	ContentTypeNotifications = "notifications"
	ContentTypeMicrophone    = "microphone"
	ContentTypeCamera        = "camera"
	ContentTypeClipboard     = "clipboard"
)

// ContentTypes lists the content types the extension manages, in the order it applies them.
var ContentTypes = []string{ContentTypeLocation, ContentTypeNotifications, ContentTypeMicrophone, ContentTypeCamera, ContentTypeClipboard}

// Values of a ContentSetting's Setting, as chrome.contentSettings names them.
const (
	SettingAllow = "allow"
	SettingBlock = "block"
	SettingAsk   = "ask"
)

// ContentSetting is one site permission override: a content type, the pattern of the sites it
// applies to (chrome.contentSettings' primaryPattern, "<all_urls>" for every site) and the
// setting.
type ContentSetting struct {
	ContentType string `json:"contentType"`
	Pattern     string `json:"pattern"`
	Setting     string `json:"setting"`
}

// PermissionsRequest asks the extension to make its content settings exactly Settings.
type PermissionsRequest struct {
	Type     string           `json:"type"`
	ID       int64            `json:"id"`
	Settings []ContentSetting `json:"settings"`
}

// Choosing a tab (see PROTOCOL.md, "Choosing a tab").
const (
	// TypeChooseTab tells the extension that a client (a CDP client, or the agent) wants a tab
	// while none is shared: the extension offers the person a choice of tab (ChooseTab). It
	// needs no answer; sharing the chosen tab is an ordinary tabShared.
	TypeChooseTab = "chooseTab"
	// TypeChooseTabEnded tells the extension that nobody waits for a tab any more: every
	// client that caused a chooseTab disconnected or stopped waiting before a tab was shared.
	// The extension's tab chooser then says so and shares nothing. It needs no answer.
	TypeChooseTabEnded = "chooseTabEnded"
)

// ChooseTab is the relay's chooseTab notice.
type ChooseTab struct {
	Type string `json:"type"`
	// Client says who is waiting: "cdp" for a CDP client, "agent" for the agent.
	Client string `json:"client"`
}

// ChooseTabEnded is the relay's chooseTabEnded notice.
type ChooseTabEnded struct {
	Type string `json:"type"`
}
