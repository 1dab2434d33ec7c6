package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/generated/wire/gemini"
)

// ReadStdin reads a Gemini CLI hook input for dsh hooks run: the common fields, the
// tool_response of a tool result (llmContent the text the model reads, returnDisplay the
// value, error a failure), and the model call of an event at agent/request or
// agent/response (llm_request, llm_response), the inverse of the hook views the bridge
// sends (LLMRequest, LLMResponse, Messages).
func ReadStdin(event string, data []byte) (dialect.Input, error) {
	in, err := dialect.ReadInput(data)
	if err != nil {
		return in, err
	}
	var x struct {
		ToolResponse *struct {
			LLMContent    json.RawMessage `json:"llmContent"`
			ReturnDisplay json.RawMessage `json:"returnDisplay"`
			Error         json.RawMessage `json:"error"`
		} `json:"tool_response"`
		LLMRequest *struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			Config struct {
				Temperature     *float64 `json:"temperature"`
				MaxOutputTokens *int     `json:"maxOutputTokens"`
			} `json:"config"`
		} `json:"llm_request"`
		LLMResponse *struct {
			Text       *string `json:"text"`
			Candidates []struct {
				Content struct {
					Parts []string `json:"parts"`
				} `json:"content"`
				FinishReason *string `json:"finishReason"`
			} `json:"candidates"`
		} `json:"llm_response"`
	}
	if err := json.Unmarshal(data, &x); err != nil {
		return in, fmt.Errorf("the %s input: %v", event, err)
	}
	in.Error = nil // Gemini CLI has no top-level error: a failure is tool_response.error
	if r := x.ToolResponse; r != nil {
		in.ToolText = textOf(r.LLMContent)
		in.ToolResponse = r.ReturnDisplay
		if len(in.ToolResponse) == 0 || string(in.ToolResponse) == "null" {
			in.ToolResponse = r.LLMContent
		}
		if len(r.Error) > 0 && string(r.Error) != "null" {
			var e struct {
				Message string `json:"message"`
			}
			msg := string(r.Error)
			if json.Unmarshal(r.Error, &e) == nil && e.Message != "" {
				msg = e.Message
			}
			in.Error = &msg
		}
	}
	ev, _ := hookmap.Gemini.Lookup(event)
	model := ev.Point == dsh.RequestEventName || ev.Point == dsh.ResponseEventName
	if r := x.LLMRequest; r != nil {
		req := dsh.ModelRequest{Config: dsh.LLMCallConfig{Provider: "gemini", Model: r.Model,
			Temperature: r.Config.Temperature, MaxTokens: r.Config.MaxOutputTokens}}
		msgs := make([]gemini.LLMMessage, len(r.Messages))
		for i, m := range r.Messages {
			msgs[i] = gemini.LLMMessage{Role: m.Role, Content: m.Content}
		}
		req.Messages = Messages(nil, msgs)
		in.Request = &req
	} else if model {
		return in, fmt.Errorf("the %s input has no llm_request: %s needs the model request", event, ev.Point)
	}
	if r := x.LLMResponse; r != nil {
		resp := dsh.ModelResponse{Content: []dsh.ContentBlock{}, Finish: dsh.FinishReasonStop}
		if len(r.Candidates) > 0 {
			c := r.Candidates[0]
			for _, p := range c.Content.Parts {
				resp.Content = append(resp.Content, dsh.TextBlock{Text: p})
			}
			if c.FinishReason != nil && *c.FinishReason == "MAX_TOKENS" {
				resp.Finish = dsh.FinishReasonMaxTokens
			}
		} else if r.Text != nil {
			resp.Content = append(resp.Content, dsh.TextBlock{Text: *r.Text})
		}
		in.Response = &resp
	} else if ev.Point == dsh.ResponseEventName {
		return in, fmt.Errorf("the %s input has no llm_response: %s needs the model response", event, ev.Point)
	}
	return in, nil
}

// textOf is a JSON value's text: the string it holds, the texts of the parts it lists
// joined, else its JSON.
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var texts []string
		for _, p := range parts {
			if p.Text != nil {
				texts = append(texts, *p.Text)
			}
		}
		if len(texts) == len(parts) {
			return strings.Join(texts, "")
		}
	}
	return string(raw)
}
