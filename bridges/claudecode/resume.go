package claudecode

import (
	"math"
	"strings"
)

// PromptCacheTTL is the prompt-cache lifetime, in seconds, behind SessionStart[resume]'s
// prompt_cache_likely_expired: Claude Code 2.1.328 writes the cache with the 5-minute TTL
// when it runs on an API key (its 1-hour TTL is for some subscriptions), and calls the
// cache likely expired from this many seconds since the last response on.
const PromptCacheTTL = 300

// cacheWritePerMTok are Anthropic's list prices, in USD per million tokens, of a
// 5-minute prompt-cache write (1.25 times the input price), by model family, most
// specific prefix first. dsh has no pricing configuration; these are what Claude Code's
// built-in catalogue charges.
var cacheWritePerMTok = []struct {
	prefix string
	usd    float64
}{
	{"claude-opus-4-0", 18.75}, {"claude-opus-4-1", 18.75}, {"claude-opus-4-2", 18.75}, {"claude-opus-4", 6.25},
	{"claude-3-opus", 18.75},
	{"claude-sonnet", 3.75}, {"claude-3-7-sonnet", 3.75}, {"claude-3-5-sonnet", 3.75},
	{"claude-haiku-4", 1.25}, {"claude-3-5-haiku", 1}, {"claude-3-haiku", 0.3},
}

// defaultCacheWritePerMTok is the price Claude Code charges a model its catalogue does
// not know (its default pricing, the current Opus's: $6.25 per million cache-write
// tokens).
const defaultCacheWritePerMTok = 6.25

// CacheWriteUSD is SessionStart[resume]'s estimated_cache_write_usd: the list price of
// writing tokens to the 5-minute prompt cache on model, rounded to 4 decimals as Claude
// Code rounds it.
func CacheWriteUSD(model string, tokens int) float64 {
	price := defaultCacheWritePerMTok
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:] // a provider prefix (e.g. "anthropic/claude-sonnet-4-5")
	}
	for _, p := range cacheWritePerMTok {
		if strings.HasPrefix(m, p.prefix) {
			price = p.usd
			break
		}
	}
	return math.Round(float64(tokens)*price/1e6*1e4) / 1e4
}
