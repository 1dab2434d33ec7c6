package provider

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// The stream benchmarks put dsh's providers beside the SDKs' own decoding of the same
// recorded response, served from memory (no sockets, so that only decoding is measured):
// BenchmarkStream/<provider>/sdk iterates the SDK's stream of events, .../dsh the
// provider's chunks. Each reports ns/chunk and allocs/chunk (b.ReportMetric); dsh's cost
// per chunk over the SDK's is the difference, and the ratio of the two ns/op is the cost
// of a whole response. BenchmarkFirstChunk measures the time to the first chunk the same
// way.

// memTransport answers every request with body.
type memTransport struct {
	body  []byte
	ctype string
}

func (t memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {t.ctype}}, Body: io.NopCloser(bytes.NewReader(t.body)), Request: r}, nil
}

// benchChunks is the number of text deltas of a benchmark response.
const benchChunks = 1000

type benchCase struct {
	name string
	body string
	// sdk iterates the SDK's own stream of the body; it returns the events seen.
	sdk func(ctx context.Context, c *http.Client) int
	// dsh builds the provider on c.
	dsh func(c *http.Client) llm.Model
}

func benchCases(n int) []benchCase {
	words := func(f func(string) [2]string) [][2]string {
		out := make([][2]string, n)
		for i := range out {
			out[i] = f("word ")
		}
		return out
	}
	anthropicBody := anthropicSSE("end_turn", append(append([][2]string{{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`}},
		words(func(s string) [2]string {
			return [2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + s + `"}}`}
		})...), [2]string{"content_block_stop", `{"type":"content_block_stop","index":0}`})...)
	chatBody := sse(append(words(func(s string) [2]string { return [2]string{"", chatDelta(s)} }),
		[2]string{"", `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`}, [2]string{"", usageEvent}, [2]string{"", "[DONE]"})...)
	respBody := sse(append(words(respTextDelta), respCompleted)...)
	gemBody := sse(append(words(func(s string) [2]string { return gemText(s, "") }), gemUsage)...)
	return []benchCase{
		{"anthropic", anthropicBody,
			func(ctx context.Context, c *http.Client) int {
				client := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithAPIKey("k"), aoption.WithBaseURL("http://mem"), aoption.WithHTTPClient(c), aoption.WithMaxRetries(0))
				s := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: "m", MaxTokens: 100, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
				defer s.Close()
				n := 0
				for s.Next() {
					_ = s.Current()
					n++
				}
				return n
			},
			func(c *http.Client) llm.Model {
				m, _ := NewAnthropic(AnthropicConfig{BaseURL: "http://mem", APIKey: "k", Model: "m", HTTPClient: c})
				return m
			}},
		{"openai-chat", chatBody,
			func(ctx context.Context, c *http.Client) int {
				client := openai.NewClient(option.WithAPIKey("k"), option.WithBaseURL("http://mem/v1"), option.WithHTTPClient(c), option.WithMaxRetries(0))
				s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
				defer s.Close()
				n := 0
				for s.Next() {
					_ = s.Current()
					n++
				}
				return n
			},
			func(c *http.Client) llm.Model {
				m, _ := NewOpenAIChat(OpenAIChatConfig{BaseURL: "http://mem/v1", APIKey: "k", Model: "m", HTTPClient: c})
				return m
			}},
		{"openai", respBody,
			func(ctx context.Context, c *http.Client) int {
				client := openai.NewClient(option.WithAPIKey("k"), option.WithBaseURL("http://mem/v1"), option.WithHTTPClient(c), option.WithMaxRetries(0))
				s := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
				defer s.Close()
				n := 0
				for s.Next() {
					_ = s.Current()
					n++
				}
				return n
			},
			func(c *http.Client) llm.Model {
				m, _ := NewOpenAIResponses(OpenAIResponsesConfig{BaseURL: "http://mem/v1", APIKey: "k", Model: "m", HTTPClient: c})
				return m
			}},
		{"gemini", gemBody,
			func(ctx context.Context, c *http.Client) int {
				client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPClient: c, HTTPOptions: genai.HTTPOptions{BaseURL: "http://mem"}})
				if err != nil {
					panic(err)
				}
				n := 0
				for _, err := range client.Models.GenerateContentStream(ctx, "m", genai.Text("hi"), nil) {
					if err != nil {
						panic(err)
					}
					n++
				}
				return n
			},
			func(c *http.Client) llm.Model {
				m, _ := NewGemini(GeminiConfig{BaseURL: "http://mem", APIKey: "k", Model: "m", HTTPClient: c})
				return m
			}},
	}
}

// drainModel iterates one call of m and returns the chunks seen (failing on an error).
func drainModel(b *testing.B, m llm.Model) int {
	n := 0
	for c, err := range m.Stream(context.Background(), llm.Request{Config: simpleReq().Config, Messages: simpleReq().Messages}) {
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := c.(dsh.ChunkFinish); ok {
			continue
		}
		n++
	}
	return n
}

func BenchmarkStream(b *testing.B) {
	for _, bc := range benchCases(benchChunks) {
		client := &http.Client{Transport: memTransport{body: []byte(bc.body), ctype: "text/event-stream"}}
		b.Run(bc.name+"/sdk", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = bc.sdk(context.Background(), client)
			}
			perChunk(b, n)
		})
		b.Run(bc.name+"/dsh", func(b *testing.B) {
			b.ReportAllocs()
			m := bc.dsh(client)
			n := 0
			for b.Loop() {
				n = drainModel(b, m)
			}
			if n != benchChunks {
				b.Fatalf("%d chunks, want %d", n, benchChunks)
			}
			perChunk(b, n)
		})
	}
}

// perChunk reports the time and allocations of one op divided by the chunks of it.
func perChunk(b *testing.B, chunks int) {
	b.Helper()
	if chunks == 0 {
		b.Fatal("no chunks")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(chunks), "ns/chunk")
}

// BenchmarkFirstChunk measures the time from the call to its first chunk, for the SDK's
// stream and for dsh's provider, on a one-chunk response.
func BenchmarkFirstChunk(b *testing.B) {
	for _, bc := range benchCases(1) {
		client := &http.Client{Transport: memTransport{body: []byte(bc.body), ctype: "text/event-stream"}}
		b.Run(bc.name+"/sdk", func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				bc.sdk(context.Background(), client)
				total += time.Since(start)
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/first")
		})
		b.Run(bc.name+"/dsh", func(b *testing.B) {
			m := bc.dsh(client)
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				for range m.Stream(context.Background(), simpleReq()) {
					total += time.Since(start)
					break
				}
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/first")
		})
	}
}

// BenchmarkChunkOverhead measures dsh's own work per streamed chunk: the events are
// decoded by the SDK once, outside the timer, and each op folds one of them into the
// chunk the loop gets (the provider's fold and the call's emit, to a consumer that keeps
// nothing). This is dsh's cost per chunk over the SDK's decode.
func BenchmarkChunkOverhead(b *testing.B) {
	noop := func(dsh.AssistantChunk, error) bool { return true }
	newC := func() *call { return newCall(context.Background(), "bench", time.Minute, Limits{}, noop) }
	b.Run("anthropic", func(b *testing.B) {
		var ev anthropic.MessageStreamEventUnion
		if err := ev.UnmarshalJSON([]byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word "}}`)); err != nil {
			b.Fatal(err)
		}
		c := newC()
		defer c.cancel()
		st := anthropicState{blocks: map[int64]*anthropicBlock{0: {kind: "text"}}}
		b.ReportAllocs()
		for b.Loop() {
			st.apply(c, ev)
		}
	})
	b.Run("openai-chat", func(b *testing.B) {
		var chunk openai.ChatCompletionChunk
		if err := chunk.UnmarshalJSON([]byte(chatDelta("word "))); err != nil {
			b.Fatal(err)
		}
		c := newC()
		defer c.cancel()
		m := &OpenAIChat{}
		st := chatState{tools: map[int]*toolAcc{}, lastIndex: -1}
		b.ReportAllocs()
		for b.Loop() {
			m.apply(c, &st, chunk)
		}
	})
	b.Run("openai", func(b *testing.B) {
		var ev responses.ResponseStreamEventUnion
		if err := ev.UnmarshalJSON([]byte(respTextDelta("word ")[1])); err != nil {
			b.Fatal(err)
		}
		c := newC()
		defer c.cancel()
		st := responsesState{streamed: map[string]bool{}}
		b.ReportAllocs()
		for b.Loop() {
			st.apply(c, ev)
		}
	})
	b.Run("gemini", func(b *testing.B) {
		resp := &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "word "}}}}}}
		c := newC()
		defer c.cancel()
		var st geminiState
		b.ReportAllocs()
		for b.Loop() {
			st.apply(c, resp)
		}
	})
}
