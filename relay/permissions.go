package relay

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/tabrelay/tabrelay/relay/wire"
)

// Site permissions: Browser.grantPermissions, Browser.setPermission and
// Browser.resetPermissions. Chrome keeps permission overrides for the DevTools connection that
// set them and drops them when it resets or goes away. tabrelay's browser context is the user's
// own profile, so it applies them as the extension's content settings (chrome.contentSettings),
// which take precedence over the user's own site settings while they exist and are removed
// without touching the user's: each client's overrides are kept here, the extension is told the
// whole set the connected clients hold (latest override first for the same type and sites)
// after every change, and it clears its content settings when it starts, connects or loses the
// relay, so that nothing stays behind a crash.

// permissionTypes maps the Browser.PermissionType names that have a content setting to it.
// The others have none the extension can set: the call is refused (unsupportedPermission).
var permissionTypes = map[string]string{
	"geolocation":             wire.ContentTypeLocation,
	"notifications":           wire.ContentTypeNotifications,
	"audioCapture":            wire.ContentTypeMicrophone,
	"videoCapture":            wire.ContentTypeCamera,
	"clipboardReadWrite":      wire.ContentTypeClipboard,
	"clipboardSanitizedWrite": wire.ContentTypeClipboard,
}

// permissionNames maps the PermissionDescriptor names (Browser.setPermission, the Permissions
// API's names) that have a content setting to it.
var permissionNames = map[string]string{
	"geolocation":     wire.ContentTypeLocation,
	"notifications":   wire.ContentTypeNotifications,
	"push":            wire.ContentTypeNotifications,
	"microphone":      wire.ContentTypeMicrophone,
	"camera":          wire.ContentTypeCamera,
	"clipboard-read":  wire.ContentTypeClipboard,
	"clipboard-write": wire.ContentTypeClipboard,
}

// permissionSettings maps Browser.PermissionSetting to the content setting.
var permissionSettings = map[string]string{
	"granted": wire.SettingAllow,
	"denied":  wire.SettingBlock,
	"prompt":  wire.SettingAsk,
}

// allSites is the content settings pattern of an override without origin: Chrome applies it to
// every origin.
const allSites = "<all_urls>"

// permKey names one override: a content type for the sites of a pattern.
type permKey struct{ contentType, pattern string }

// permOverride is one client's override: its setting and when it was set (the hub's counter;
// the latest wins among clients).
type permOverride struct {
	setting string
	seq     int64
}

// unsupportedPermission is the error for a permission without a content setting.
func unsupportedPermission(name string) string {
	return fmt.Sprintf("tabrelay: the permission %q cannot be set: tabrelay applies permissions to the user's own browser profile through the extension's content settings, and %q has none (supported: %s)", name, name, supportedPermissions())
}

// supportedPermissions lists the Browser.PermissionType names tabrelay applies.
func supportedPermissions() string {
	names := make([]string, 0, len(permissionTypes))
	for n := range permissionTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// sitePattern turns a CDP origin into a content settings pattern: "<all_urls>" without one.
func sitePattern(origin string) (string, error) {
	if origin == "" {
		return allSites, nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("tabrelay: origin %q: permissions apply to http and https origins (scheme://host[:port])", origin)
	}
	return u.Scheme + "://" + u.Host + "/*", nil
}

// permissions handles Browser.grantPermissions, Browser.setPermission and
// Browser.resetPermissions for r's client. Call with h.mu held.
func (h *Hub) permissions(r *req) {
	var p struct {
		Permissions []string `json:"permissions"`
		Permission  *struct {
			Name string `json:"name"`
		} `json:"permission"`
		Setting          string `json:"setting"`
		Origin           string `json:"origin"`
		BrowserContextID string `json:"browserContextId"`
	}
	if !r.decode(&p) {
		return
	}
	if p.BrowserContextID != "" && p.BrowserContextID != h.contextID {
		r.fail(codeServerError, "Failed to find browser context for id "+p.BrowserContextID)
		return
	}
	pattern, err := sitePattern(p.Origin)
	if err != nil {
		r.fail(codeInvalidParams, err.Error())
		return
	}
	set := map[permKey]string{}
	switch r.method {
	case "Browser.grantPermissions":
		if p.Permissions == nil {
			r.fail(codeInvalidParams, "Invalid parameters: Failed to deserialize params.permissions - BINDINGS: mandatory field missing")
			return
		}
		// as Chrome: the given permissions are granted to the origin, all others rejected
		for _, ct := range wire.ContentTypes {
			set[permKey{ct, pattern}] = wire.SettingBlock
		}
		for _, name := range p.Permissions {
			ct, ok := permissionTypes[name]
			if !ok {
				r.fail(codeInvalidParams, unsupportedPermission(name))
				return
			}
			set[permKey{ct, pattern}] = wire.SettingAllow
		}
	case "Browser.setPermission":
		if p.Permission == nil || p.Setting == "" {
			r.fail(codeInvalidParams, "Invalid parameters: Failed to deserialize params.permission - BINDINGS: mandatory field missing")
			return
		}
		setting, ok := permissionSettings[p.Setting]
		if !ok {
			r.fail(codeInvalidParams, fmt.Sprintf("Invalid parameters: setting: unknown value %q (granted, denied or prompt)", p.Setting))
			return
		}
		ct, ok := permissionNames[p.Permission.Name]
		if !ok {
			r.fail(codeInvalidParams, unsupportedPermission(p.Permission.Name))
			return
		}
		set[permKey{ct, pattern}] = setting
	}
	old := r.c.perms
	next := make(map[permKey]permOverride, len(old)+len(set))
	if r.method != "Browser.resetPermissions" {
		for k, v := range old {
			next[k] = v
		}
	}
	for k, setting := range set {
		h.permSeq++
		next[k] = permOverride{setting: setting, seq: h.permSeq}
	}
	r.c.perms = next
	if !h.syncPermissions(func(errRaw []byte) {
		if errRaw != nil {
			r.c.perms = old
			h.syncPermissions(nil)
			r.fail(codeServerError, "tabrelay: the browser extension could not apply the permissions: "+wireErrorMessage(errRaw))
			return
		}
		r.ok(nil)
	}) {
		r.c.perms = old
		r.fail(codeServerError, "tabrelay: the browser extension is not connected, so permissions cannot be applied")
	}
}

// wantedPermissions is the content settings the connected clients hold: per type and pattern,
// the latest override. Call with h.mu held.
func (h *Hub) wantedPermissions() []wire.ContentSetting {
	latest := map[permKey]permOverride{}
	for c := range h.clients {
		for k, v := range c.perms {
			if cur, ok := latest[k]; !ok || v.seq > cur.seq {
				latest[k] = v
			}
		}
	}
	out := make([]wire.ContentSetting, 0, len(latest))
	for k, v := range latest {
		out = append(out, wire.ContentSetting{ContentType: k.contentType, Pattern: k.pattern, Setting: v.setting})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ContentType != out[j].ContentType {
			return out[i].ContentType < out[j].ContentType
		}
		return out[i].Pattern < out[j].Pattern
	})
	return out
}

// syncPermissions tells the extension the content settings the connected clients hold; done
// (when set) gets its answer (nil on success). It reports false, without calling done, when no
// extension is connected. Call with h.mu held.
func (h *Hub) syncPermissions(done func(errRaw []byte)) bool {
	settings := h.wantedPermissions()
	p := &pending{method: "Browser permissions", done: func(_, errRaw []byte) {
		if errRaw != nil {
			h.log.Warn().RawJSON("error", errRaw).Msg("permissions: the extension could not apply the content settings")
		}
		if done != nil {
			done(errRaw)
		}
	}}
	return h.request(p, func(id int64) []byte {
		return mustJSON(wire.PermissionsRequest{Type: wire.TypeSetPermissions, ID: id, Settings: settings})
	}, h.opts.TabTimeout)
}

// dropPermissions undoes a leaving client's overrides (the extension is told the set the other
// clients still hold). Call with h.mu held.
func (h *Hub) dropPermissions(c *Client) {
	if len(c.perms) == 0 {
		return
	}
	c.perms = nil
	if !h.syncPermissions(nil) {
		h.log.Debug().Str("client", c.name).Msg("permissions: no extension to revert a leaving client's overrides (it clears them when it connects)")
	}
}

// wireErrorMessage is the message of a CDP-shaped error from the extension (its JSON text when
// it has none).
func wireErrorMessage(errRaw []byte) string {
	var e wire.Error
	if json.Unmarshal(errRaw, &e) != nil || e.Message == "" {
		return string(errRaw)
	}
	return e.Message
}
