package builtin

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"github.com/dshkit/dsh/runtime/tools"
)

// GeminiUpdateTopic is Gemini CLI's update_topic.
const GeminiUpdateTopic = "update_topic"

type geminiTopicInput struct {
	Title           string `json:"title"`
	Summary         string `json:"summary"`
	StrategicIntent string `json:"strategic_intent"`
}

// geminiTopic is the session's topic and intent as update_topic last set them (the
// engine's TopicState); one per set of definitions, so one per session.
type geminiTopic struct {
	mu            sync.Mutex
	title, intent string
}

var newlinesRE = regexp.MustCompile(`[\r\n]+`)

func geminiUpdateTopic(Options) tools.Definition {
	st := &geminiTopic{}
	return tools.Definition{
		Name:   GeminiUpdateTopic,
		Output: &tools.Output{Render: renderText(renderGeminiResult)},
		Run: runWith(func(_ context.Context, in geminiTopicInput) (geminiResult, error) {
			return st.update(in), nil
		}),
	}
}

// update is update_topic: a title other than the current one starts a new topic ("Current
// topic: …", its summary and intent); otherwise the call states the intent. Titles and
// intents are kept trimmed, their line breaks as spaces; "..." stands for what is unset.
func (st *geminiTopic) update(in geminiTopicInput) geminiResult {
	st.mu.Lock()
	defer st.mu.Unlock()
	title := strings.TrimSpace(newlinesRE.ReplaceAllString(strings.TrimSpace(in.Title), " "))
	intent := strings.TrimSpace(newlinesRE.ReplaceAllString(strings.TrimSpace(in.StrategicIntent), " "))
	isNew := title != "" && title != st.title
	if title != "" {
		st.title = title
	}
	if intent != "" {
		st.intent = intent
	}
	topic := or(st.title, "...")
	current := or(in.StrategicIntent, or(st.intent, "..."))
	if !isNew {
		return geminiResult{LLMContent: "Strategic Intent: " + current, ReturnDisplay: "> [!STRATEGY]\n> **Intent:** " + current}
	}
	summary := or(in.Summary, "...")
	llm := "Current topic: \"" + topic + "\"\nTopic summary: " + summary
	display := "## \U0001F4C2 Topic: **" + topic + "**\n\n**Summary:**\n" + summary
	if t := strings.TrimSpace(in.StrategicIntent); t != "" {
		llm += "\n\nStrategic Intent: " + t
		display += "\n\n> [!STRATEGY]\n> **Intent:** " + t
	}
	return geminiResult{LLMContent: llm, ReturnDisplay: display}
}

// or is s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
