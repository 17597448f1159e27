package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/skills"
	"github.com/tabrelay/tabrelay/snapshot"
)

// Advice a model can act on, appended to the errors it applies to.
const (
	adviceStale = "The page changed since that snapshot: call snapshot for fresh refs, then retry with them."
	adviceShare = "No shared tab: ask the user to share the tab they want you to use (Alt+Shift+S on it, or the tabrelay " +
		"icon, in the browser's extensions menu until pinned; its badge shows ON), then call tabs."
	adviceTab = "Call tabs to list the shared tabs and switch_tab to choose one."
)

// adviceModel says which variables configure a model.
var adviceModel = fmt.Sprintf("Tasks need a language model: set %s (openai, anthropic, mistral, googleai, ollama…), %s and the "+
	"provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY, MISTRAL_API_KEY, GOOGLE_API_KEY or %s; %s for a compatible endpoint) "+
	"in the environment of the tabrelay server, and restart it. Until then, drive the page yourself with snapshot and the action tools.",
	llm.EnvProvider, llm.EnvModel, llm.EnvAPIKey, llm.EnvBaseURL)

// toolError turns err into an MCP tool error (isError with text) that says what to do.
func toolError(err error) *mcp.CallToolResult {
	msg := err.Error()
	var mp *skills.MissingParamsError
	switch {
	case errors.Is(err, snapshot.ErrUnknownRef), errors.Is(err, snapshot.ErrGone):
		msg += "\n" + adviceStale
	case errors.Is(err, actions.ErrNoTab):
		msg += "\n" + adviceShare + " " + adviceTab
	case errors.Is(err, llm.ErrNotConfigured):
		msg += "\n" + adviceModel
	case errors.Is(err, cdpclient.ErrClosed):
		msg += "\nThe connection to the tabrelay relay is gone: the server may be restarting; retry in a moment."
	case errors.Is(err, context.DeadlineExceeded):
		msg += "\nThe page took too long: call snapshot to see where it is, or wait for a condition first."
	case errors.As(err, &mp):
		msg += "\nPass them in params, e.g. {\"name\":\"" + mp.Skill + "\",\"params\":{\"" + first(mp.MissingParams()) + "\":\"…\"}}."
	case errors.Is(err, skills.ErrNotFound):
		msg += "\nCall skills to list them."
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
