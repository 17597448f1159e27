package relay

import (
	"html/template"
	"net/http"

	"github.com/labstack/echo/v4"
)

// ReadmeURL is where the set-up steps are written down (the README's install section).
const ReadmeURL = "https://github.com/tabrelay/tabrelay#install-the-extension-once"

// homePage is what GET / answers: what this server is, whether the extension is connected and
// where the set-up steps are. It carries nothing secret, neither the secret nor any tab.
var homePage = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tabrelay</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}code{background:#eee;padding:0 .2em}</style>
</head><body>
<h1>tabrelay {{.Version}}</h1>
<p>This is a tabrelay server: it shares the browser tabs you choose, through the tabrelay
extension, with Chrome DevTools Protocol clients (Playwright, Puppeteer, chromedp…) and with its
own agent. Discovery is at <code>/json/version</code>; every other endpoint needs the secret
(<code>tabrelay token</code> prints it).</p>
{{if .Connected}}<p id="status"><strong>The extension is connected.</strong> Click its icon on a tab to share that tab.</p>
{{else}}<p id="status"><strong>The extension is not connected.</strong> Install it (<code>tabrelay extension</code> writes it out for
<em>Load unpacked</em>) and pair it with the link the server printed when it started.</p>
{{end}}<p>Set-up steps: <a href="{{.Readme}}">the README's install section</a>.</p>
</body></html>
`))

func (s *Server) home(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	return homePage.Execute(c.Response(), map[string]any{
		"Version": Version, "Connected": s.hub.ExtensionConnected(), "Readme": ReadmeURL,
	})
}
