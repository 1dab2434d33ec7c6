package builtin

import "testing"

// TestUpdateTopic: the gemini/tools/topic differential case's calls and what Gemini CLI
// 0.61.0 answered them.
func TestUpdateTopic(t *testing.T) {
	st := &geminiTopic{}
	for _, c := range []struct {
		in        geminiTopicInput
		llm, disp string
	}{
		{geminiTopicInput{Title: "Setup", Summary: "Getting started.", StrategicIntent: "Look around."},
			"Current topic: \"Setup\"\nTopic summary: Getting started.\n\nStrategic Intent: Look around.",
			"## \U0001F4C2 Topic: **Setup**\n\n**Summary:**\nGetting started.\n\n> [!STRATEGY]\n> **Intent:** Look around."},
		{geminiTopicInput{StrategicIntent: "Read the files."}, "Strategic Intent: Read the files.", "> [!STRATEGY]\n> **Intent:** Read the files."},
		{geminiTopicInput{Title: " Setup ", StrategicIntent: " Next\nstep "}, "Strategic Intent:  Next\nstep ", "> [!STRATEGY]\n> **Intent:**  Next\nstep "},
		{geminiTopicInput{Title: "Build"}, "Current topic: \"Build\"\nTopic summary: ...", "## \U0001F4C2 Topic: **Build**\n\n**Summary:**\n..."},
	} {
		r := st.update(c.in)
		if r.LLMContent != c.llm || r.ReturnDisplay != c.disp {
			t.Errorf("%+v = %q, %q\nwant %q, %q", c.in, r.LLMContent, r.ReturnDisplay, c.llm, c.disp)
		}
	}
	if st.title != "Build" || st.intent != "Next step" {
		t.Errorf("state %q %q", st.title, st.intent)
	}
}
