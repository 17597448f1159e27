package actions

import (
	"encoding/json"
	"maps"
	"reflect"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
)

// TestTypedParamsMatchTheirMaps: the cdproto parameter structs the actions, the browser
// launcher, the recorder and the relay send encode as the hand-written maps they replaced did.
// The only differences are fields the map set to the protocol's own default, which the
// struct leaves out (dropped), and one the struct adds with its default value (added): none
// changes what Chrome does. A cdproto update that turns an optional field into a required one
// (sent as a zero value) fails here.
func TestTypedParamsMatchTheirMaps(t *testing.T) {
	tests := []struct {
		name    string
		typed   any
		before  map[string]any
		dropped []string       // keys the map sent with the protocol's default value
		added   map[string]any // keys the struct sends with the protocol's default value
	}{
		{"Runtime.callFunctionOn", &runtime.CallFunctionOnParams{ObjectID: "o1", FunctionDeclaration: "f", Arguments: []*runtime.CallArgument{{Value: []byte(`1.5`)}, {Value: []byte(`null`)}, {Value: []byte(`false`)}}, ReturnByValue: new(true), AwaitPromise: new(true)},
			map[string]any{"objectId": "o1", "functionDeclaration": "f", "arguments": []map[string]any{{"value": 1.5}, {"value": nil}, {"value": false}}, "returnByValue": true, "awaitPromise": true}, nil, nil},
		{"Runtime.evaluate (settle)", &runtime.EvaluateParams{Expression: "x", AwaitPromise: new(true)},
			map[string]any{"expression": "x", "awaitPromise": true}, nil, nil},
		{"Runtime.evaluate (probe)", &runtime.EvaluateParams{Expression: "x", ContextID: 7, ReturnByValue: new(true), AwaitPromise: new(true)},
			map[string]any{"expression": "x", "contextId": 7, "returnByValue": true, "awaitPromise": true}, nil, nil},
		{"Runtime.evaluate (user gesture)", &runtime.EvaluateParams{Expression: "x", ReturnByValue: new(true), AwaitPromise: new(true), UserGesture: new(true)},
			map[string]any{"expression": "x", "returnByValue": true, "awaitPromise": true, "userGesture": true}, nil, nil},
		{"Runtime.evaluate (recorder, no context)", &runtime.EvaluateParams{Expression: "x", ContextID: runtime.ExecutionContextID(0)},
			map[string]any{"expression": "x"}, nil, nil},
		{"Target.getTargetInfo", &target.GetTargetInfoParams{TargetID: "T1"}, map[string]any{"targetId": "T1"}, nil, nil},
		{"DOM.getFrameOwner", &dom.GetFrameOwnerParams{FrameID: "F1"}, map[string]any{"frameId": "F1"}, nil, nil},
		{"DOM.resolveNode", &dom.ResolveNodeParams{BackendNodeID: 42}, map[string]any{"backendNodeId": 42}, nil, nil},
		{"DOM.scrollIntoViewIfNeeded (node)", &dom.ScrollIntoViewIfNeededParams{BackendNodeID: 42}, map[string]any{"backendNodeId": 42}, nil, nil},
		{"DOM.scrollIntoViewIfNeeded (object)", &dom.ScrollIntoViewIfNeededParams{ObjectID: "o2"}, map[string]any{"objectId": "o2"}, nil, nil},
		{"DOM.focus", &dom.FocusParams{BackendNodeID: 42}, map[string]any{"backendNodeId": 42}, nil, nil},
		{"DOM.setFileInputFiles", &dom.SetFileInputFilesParams{Files: []string{"/tmp/a.txt"}, BackendNodeID: 42}, map[string]any{"files": []string{"/tmp/a.txt"}, "backendNodeId": 42}, nil, nil},
		{"DOM.describeNode (relay)", &dom.DescribeNodeParams{BackendNodeID: 3, Depth: new(int64(-1)), Pierce: new(false)}, map[string]any{"backendNodeId": 3, "depth": -1, "pierce": false}, nil, nil},
		{"DOM.pushNodesByBackendIdsToFrontend", &dom.PushNodesByBackendIDsToFrontendParams{BackendNodeIDs: []cdp.BackendNodeID{3, 4}}, map[string]any{"backendNodeIds": []int{3, 4}}, nil, nil},
		{"Input.dispatchMouseEvent (move)", &input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: 0, Y: 12.5},
			map[string]any{"type": "mouseMoved", "x": 0, "y": 12.5, "modifiers": 0}, []string{"modifiers"}, nil},
		{"Input.dispatchMouseEvent (drag move)", &input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: 3, Y: 4, Modifiers: 8, Button: input.MouseButtonLeft, Buttons: 1},
			map[string]any{"type": "mouseMoved", "x": 3, "y": 4, "modifiers": 8, "button": "left", "buttons": 1}, nil, nil},
		{"Input.dispatchMouseEvent (press)", &input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMousePressed, X: 3, Y: 4, Button: input.MouseButtonRight, ClickCount: 2},
			map[string]any{"type": "mousePressed", "x": 3, "y": 4, "modifiers": 0, "button": "right", "clickCount": 2}, []string{"modifiers"}, nil},
		{"Input.dispatchKeyEvent (char key)", &input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: "a", Code: "KeyA", WindowsVirtualKeyCode: 65, NativeVirtualKeyCode: 65, Text: "a", UnmodifiedText: "a"},
			map[string]any{"type": "keyDown", "key": "a", "code": "KeyA", "windowsVirtualKeyCode": 65, "nativeVirtualKeyCode": 65, "modifiers": 0, "text": "a", "unmodifiedText": "a"}, []string{"modifiers"}, nil},
		{"Input.dispatchKeyEvent (arrow)", &input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeRawKeyDown, Key: "ArrowDown", Code: "ArrowDown", WindowsVirtualKeyCode: 40, NativeVirtualKeyCode: 40, Modifiers: 2, IsKeypad: new(false)},
			map[string]any{"type": "rawKeyDown", "key": "ArrowDown", "code": "ArrowDown", "windowsVirtualKeyCode": 40, "nativeVirtualKeyCode": 40, "modifiers": 2, "isKeypad": false}, nil, nil},
		{"Input.dispatchKeyEvent (no key code)", &input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: "é"},
			map[string]any{"type": "keyUp", "key": "é", "code": "", "windowsVirtualKeyCode": 0, "nativeVirtualKeyCode": 0, "modifiers": 0}, []string{"code", "windowsVirtualKeyCode", "nativeVirtualKeyCode", "modifiers"}, nil},
		{"Input.insertText", &input.InsertTextParams{Text: "hi"}, map[string]any{"text": "hi"}, nil, nil},
		{"Emulation.setDeviceMetricsOverride", &emulation.SetDeviceMetricsOverrideParams{Width: 800, Height: 600},
			map[string]any{"width": 800, "height": 600, "deviceScaleFactor": 0, "mobile": false}, nil, nil},
		{"Page.navigate", &page.NavigateParams{URL: "https://example.com/"}, map[string]any{"url": "https://example.com/"}, nil, nil},
		{"Page.navigateToHistoryEntry", &page.NavigateToHistoryEntryParams{EntryID: 0}, map[string]any{"entryId": 0}, nil, nil},
		{"Page.handleJavaScriptDialog (dismiss)", &page.HandleJavaScriptDialogParams{Accept: false}, map[string]any{"accept": false}, nil, nil},
		{"Page.handleJavaScriptDialog (prompt)", &page.HandleJavaScriptDialogParams{Accept: true, PromptText: "Ann"}, map[string]any{"accept": true, "promptText": "Ann"}, nil, nil},
		{"Page.captureScreenshot (element)", &page.CaptureScreenshotParams{Format: "jpeg", Quality: new(int64(80)), Clip: &page.Viewport{X: 0, Y: 10, Width: 5, Height: 6, Scale: 1}},
			map[string]any{"format": "jpeg", "quality": 80, "clip": map[string]any{"x": 0, "y": 10, "width": 5, "height": 6, "scale": 1}}, nil, nil},
		{"Page.captureScreenshot (full page)", &page.CaptureScreenshotParams{Format: "png", CaptureBeyondViewport: new(true), Clip: &page.Viewport{Width: 5, Height: 6, Scale: 1}},
			map[string]any{"format": "png", "captureBeyondViewport": true, "clip": map[string]any{"x": 0, "y": 0, "width": 5, "height": 6, "scale": 1}}, nil, nil},
		{"Page.printToPDF", &page.PrintToPDFParams{PrintBackground: new(true)}, map[string]any{"printBackground": true}, nil, nil},
		{"Page.createIsolatedWorld", &page.CreateIsolatedWorldParams{FrameID: "F1", WorldName: "w"}, map[string]any{"frameId": "F1", "worldName": "w"}, nil, nil},
		{"Page.addScriptToEvaluateOnNewDocument", &page.AddScriptToEvaluateOnNewDocumentParams{Source: "s"}, map[string]any{"source": "s"}, nil, nil},
		{"Page.removeScriptToEvaluateOnNewDocument", &page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: "1"}, map[string]any{"identifier": "1"}, nil, nil},
		{"Runtime.addBinding", &runtime.AddBindingParams{Name: "b"}, map[string]any{"name": "b"}, nil, nil},
		{"Runtime.releaseObject", &runtime.ReleaseObjectParams{ObjectID: "o"}, map[string]any{"objectId": "o"}, nil, nil},
		{"Accessibility.getPartialAXTree", &accessibility.GetPartialAXTreeParams{ObjectID: "o", FetchRelatives: new(false)}, map[string]any{"objectId": "o", "fetchRelatives": false}, nil, nil},
		{"Target.createTarget (tab)", &target.CreateTargetParams{URL: "about:blank", ForTab: new(true), NewWindow: new(false)}, map[string]any{"url": "about:blank", "forTab": true, "newWindow": false}, nil, nil},
		{"Target.createTarget (background)", &target.CreateTargetParams{URL: "x", Background: new(true)}, map[string]any{"url": "x", "background": true}, nil, nil},
		{"Target.attachToTarget", &target.AttachToTargetParams{TargetID: "T", Flatten: new(true)}, map[string]any{"targetId": "T", "flatten": true}, nil, nil},
		{"Target.setAutoAttach", &target.SetAutoAttachParams{AutoAttach: true, Flatten: new(true)}, map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}, nil, nil},
		{"Target.getTargets (everything)", &target.GetTargetsParams{Filter: target.Filter{{}}}, map[string]any{"filter": []any{map[string]any{}}}, nil,
			map[string]any{"filter": []any{map[string]any{"exclude": false}}}},
	}
	for _, tc := range tests {
		got, want := asJSONMap(t, tc.typed), asJSONMap(t, tc.before)
		for _, k := range tc.dropped {
			delete(want, k)
		}
		maps.Copy(want, asJSONMap(t, tc.added))
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("%s: the typed params encode as\n%s\nthe map sent\n%s", tc.name, g, w)
		}
	}
}

// asJSONMap encodes v and decodes it as a JSON object.
func asJSONMap(t *testing.T, v any) map[string]any {
	t.Helper()
	m := map[string]any{}
	if v == nil {
		return m
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
