package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/snapshot/snapshottest"
)

// permissionQuery is what a page of the origin sees: navigator.permissions.query for the
// permissions the scenario changes, and one it never names (Chrome's grantPermissions rejects
// all others).
const permissionQuery = `Promise.all(['geolocation', 'notifications', 'camera'].map((name) =>
  navigator.permissions.query({ name }).then((s) => name + '=' + s.state))).then((a) => a.join(' '))`

// TestPermissionsLikeChrome: Browser.grantPermissions, setPermission and resetPermissions
// change what a page of the origin (served by a local HTTP server) reads in
// navigator.permissions.query, on Chrome's own endpoint and on tabrelay (through the extension's
// content settings) alike; a client's overrides end with its connection; browser-use's start-up
// call (clipboardReadWrite and notifications for every origin) succeeds.
func TestPermissionsLikeChrome(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	page := e.site.URL("/other.html?permissions")
	origin := originOf(t, page)

	chrome, err := snapshottest.Launch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer chrome.Close()
	chromeTab, err := chrome.NewTab(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	waitLoaded(t, ctx, chrome.WSURL, nil, chromeTab, page)
	t.Log("Chrome's endpoint")
	want := permissionScenario(t, ctx, chrome.WSURL, nil, chromeTab, origin)

	tab := e.share(t, page)
	auth := http.Header{"Authorization": {"Bearer " + e.token()}}
	waitLoaded(t, ctx, e.cdpURL(), auth, tab.TargetID, page)
	t.Log("tabrelay")
	got := permissionScenario(t, ctx, e.cdpURL(), auth, tab.TargetID, origin)

	t.Logf("tabrelay and Chrome:\n    %s", strings.Join(got, "\n    "))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tabrelay and Chrome differ\n  tabrelay:\n    %s\n  chrome:\n    %s", strings.Join(got, "\n    "), strings.Join(want, "\n    "))
	}

	// tabrelay only: a permission without a content setting is refused, naming it; one client's
	// override ends with it while another client's stays
	c := dialPlain(t, ctx, e.cdpURL(), auth)
	defer c.Close()
	err = c.Call(ctx, "", "Browser.grantPermissions", map[string]any{"permissions": []string{"geolocation", "midi"}, "origin": origin}, nil)
	var ce *cdpclient.Error
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, `"midi"`) || !strings.Contains(ce.Message, "content setting") {
		t.Errorf("grantPermissions midi: %v, want a refusal naming midi and why", err)
	}
	obs := dialPlain(t, ctx, e.cdpURL(), auth)
	defer obs.Close()
	sid := attachPage(t, ctx, obs, tab.TargetID)
	before := evalString(t, ctx, obs, sid, permissionQuery)
	if err := c.Call(ctx, "", "Browser.setPermission", map[string]any{"permission": map[string]any{"name": "geolocation"}, "setting": "granted", "origin": origin}, nil); err != nil {
		t.Fatal(err)
	}
	other := dialPlain(t, ctx, e.cdpURL(), auth)
	if err := other.Call(ctx, "", "Browser.setPermission", map[string]any{"permission": map[string]any{"name": "geolocation"}, "setting": "denied", "origin": origin}, nil); err != nil {
		t.Fatal(err)
	}
	if q := evalString(t, ctx, obs, sid, permissionQuery); !strings.Contains(q, "geolocation=denied") {
		t.Errorf("the later client's denial: %s", q)
	}
	other.Close()
	waitPermissions(t, ctx, obs, sid, func(q string) bool { return strings.Contains(q, "geolocation=granted") }, "the first client's grant back after the second left")
	c.Close()
	waitPermissions(t, ctx, obs, sid, func(q string) bool { return q == before }, "the page's permissions as before once both left: "+before)
}

// permissionScenario runs the permission calls on the endpoint at wsURL and reports what the
// page of targetID reads after each.
func permissionScenario(t *testing.T, ctx context.Context, wsURL string, header http.Header, targetID, origin string) []string {
	t.Helper()
	obs := dialPlain(t, ctx, wsURL, header)
	defer obs.Close()
	sid := attachPage(t, ctx, obs, targetID)
	query := func() string { return evalString(t, ctx, obs, sid, permissionQuery) }
	before := query()
	out := []string{"before: " + before}

	c := dialPlain(t, ctx, wsURL, header)
	call := func(what, method string, params map[string]any) {
		out = append(out, what+": "+cdpOutcome(c.Call(ctx, "", method, params, nil))+": "+query())
	}
	call("grant geolocation, notifications", "Browser.grantPermissions", map[string]any{"permissions": []string{"geolocation", "notifications"}, "origin": origin})
	call("set geolocation denied", "Browser.setPermission", map[string]any{"permission": map[string]any{"name": "geolocation"}, "setting": "denied", "origin": origin})
	call("set camera granted", "Browser.setPermission", map[string]any{"permission": map[string]any{"name": "camera"}, "setting": "granted", "origin": origin})
	call("reset", "Browser.resetPermissions", map[string]any{})
	// browser-use's start-up call: every origin
	call("browser-use's grant", "Browser.grantPermissions", map[string]any{"permissions": []string{"clipboardReadWrite", "notifications"}})
	c.Close()
	waitPermissions(t, ctx, obs, sid, func(q string) bool { return q == before }, "the page's permissions as before once the client left: "+before)
	out = append(out, "client gone: "+query())
	return out
}

// originOf is the origin (scheme://host:port) of the page at pageURL, as the permission calls
// name it.
func originOf(t *testing.T, pageURL string) string {
	t.Helper()
	u, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Scheme + "://" + u.Host
}

// dialPlain opens a browser-level connection.
func dialPlain(t *testing.T, ctx context.Context, wsURL string, header http.Header) *cdpclient.Client {
	t.Helper()
	c, err := cdpclient.Dial(ctx, wsURL, header)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitPermissions waits until the page's permissions satisfy ok.
func waitPermissions(t *testing.T, ctx context.Context, c *cdpclient.Client, sid string, ok func(string) bool, what string) {
	t.Helper()
	for {
		q := evalString(t, ctx, c, sid, permissionQuery)
		if ok(q) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: still %s", what, q)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestPermissionsClearedWhenRelayGoes: the content settings a client's grantPermissions made
// are gone from the user's profile once the relay is gone (stopped or crashed: the extension
// clears them when it loses the relay, as no client can reach the browser any more).
func TestPermissionsClearedWhenRelayGoes(t *testing.T) {
	e := private(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	page := e.site.URL("/other.html?permissions-relay-gone")
	origin := originOf(t, page)
	setting := func() string {
		var s string
		if err := e.b.ServiceWorkerEval(ctx, "chrome.contentSettings.location.get({ primaryUrl: "+strconv.Quote(page)+" }).then((d) => d.setting)", &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := setting()
	c := e.dialCDP(t, ctx)
	if err := c.Call(ctx, "", "Browser.grantPermissions", map[string]any{"permissions": []string{"geolocation"}, "origin": origin}, nil); err != nil {
		t.Fatal(err)
	}
	if got := setting(); got != "allow" {
		t.Fatalf("location for %s after grantPermissions = %q, want allow", page, got)
	}
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the content setting back as before ("+before+")", func() (bool, string) {
		s := setting()
		return s == before, s
	})
}

// geoLog records in a page every state its geolocation permission goes through (the
// PermissionStatus change events), from the state it has now; geoStates reads the record.
const (
	geoLog    = `navigator.permissions.query({ name: 'geolocation' }).then((s) => { window.geoStatus = s; window.geoLog = [s.state]; s.onchange = () => window.geoLog.push(s.state); return true; })`
	geoStates = `window.geoLog.join(' ')`
)

// TestPermissionsAcrossExtensionRestart: the extension's service worker is stopped as the
// browser stops an idle MV3 worker, which runs none of its code (its content settings stay, and
// the page still reads them) and starts again on its next event.
//
// With the client that granted a permission still connected, the restarted worker clears its
// content settings and the relay applies the client's set again once the extension says hello:
// the page sees the grant go (prompt) and come back (granted).
//
// With the client gone before the worker starts again (here the relay is stopped while the
// worker is down, so nothing can ask the extension to revert), the worker clears them when it
// starts: the page reads prompt again.
func TestPermissionsAcrossExtensionRestart(t *testing.T) {
	e := private(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	page := e.site.URL("/other.html?permissions-extension-restart")
	origin := originOf(t, page)
	// the page is read over the harness's own control channel: it is not shared, and no client
	// of the relay needs it
	tab, err := e.b.NewTab(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	query := func() string {
		var q string
		if err := e.b.PageEval(ctx, tab, permissionQuery, &q); err != nil {
			t.Fatal(err)
		}
		return q
	}
	waitQuery := func(what string, ok func(string) bool) string {
		t.Helper()
		var q string
		eventually(t, 20*time.Second, what, func() (bool, string) {
			q = query()
			return ok(q), q
		})
		return q
	}
	before := query()
	if !strings.Contains(before, "geolocation=prompt") {
		t.Fatalf("a fresh profile's page reads %s, want geolocation=prompt", before)
	}
	c := e.dialCDP(t, ctx)
	grant := func() {
		t.Helper()
		if err := c.Call(ctx, "", "Browser.grantPermissions", map[string]any{"permissions": []string{"geolocation"}, "origin": origin}, nil); err != nil {
			t.Fatal(err)
		}
		waitQuery("the grant reaches the page", func(q string) bool { return strings.Contains(q, "geolocation=granted") })
	}

	t.Log("the client stays connected across the restart")
	grant()
	var ok bool
	if err := e.b.PageEval(ctx, tab, geoLog, &ok); err != nil {
		t.Fatal(err)
	}
	stopServiceWorker(t, ctx, e)
	if q := query(); !strings.Contains(q, "geolocation=granted") {
		t.Fatalf("the page reads %s with the worker stopped: its content settings went with it, the restart proves nothing", q)
	}
	// Status wakes the stopped worker (it opens the extension's options page); a new worker,
	// connected again
	if err := e.b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	var states string
	eventually(t, 20*time.Second, "the page sees the grant cleared by the restarted worker and applied again by the relay", func() (bool, string) {
		if err := e.b.PageEval(ctx, tab, geoStates, &states); err != nil {
			t.Fatal(err)
		}
		return strings.HasPrefix(states, "granted ") && strings.Contains(states, " prompt") && strings.HasSuffix(states, " granted"), states
	})
	t.Logf("the page's geolocation permission went through: %s", states)
	// the client's connection survived the restart: its reset reaches the page
	if err := c.Call(ctx, "", "Browser.resetPermissions", map[string]any{}, nil); err != nil {
		t.Fatalf("the client that stayed connected across the restart: %v", err)
	}
	waitQuery("the client's reset reaches the page after the restart", func(q string) bool { return q == before })

	t.Log("the client is gone (with the relay) before the worker starts again")
	grant()
	release := stopServiceWorkerHolding(t, ctx, e)
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if id, err := e.b.ServiceWorkerTargetID(ctx); err != nil || id != "" {
		t.Fatalf("a worker runs (%q, %v) before the test starts it: it could have cleared the settings on losing the relay", id, err)
	}
	if q := query(); !strings.Contains(q, "geolocation=granted") {
		t.Fatalf("the page reads %s with the worker stopped and the relay gone: nothing was left to clear", q)
	}
	release()
	// reading the worker starts it (the harness opens the extension's options page); its module
	// has run once it exposes its helpers
	var status string
	eventually(t, 20*time.Second, "the worker starts again", func() (bool, string) {
		err := e.b.ServiceWorkerEval(ctx, `globalThis.tabrelay?.statusReport().text ?? ''`, &status)
		return err == nil && status != "", fmt.Sprint(err)
	})
	t.Logf("the restarted worker, with no relay: %s", status)
	waitQuery("the restarted worker cleared the grant nobody holds any more: "+before, func(q string) bool { return q == before })
}
