#!/bin/sh
# PostToolUse for Write and Edit: tells the model which file changed and what to do next,
# as additionalContext (added after the tool result).
input=$(cat)
file=$(printf '%s' "$input" | sed -n 's/.*"file_path"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
[ -n "$file" ] || exit 0
cat <<JSON
{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"$file was modified: run the formatter and the tests that cover it before moving on."}}
JSON
