#!/bin/sh
# PreToolUse guard for Bash: refuses recursive forced deletion (rm -rf, rm -fr, rm -Rf,
# rm -r -f). A sketch, not a sandbox: it reads the command with sed, not a JSON parser.
# Exit 2 blocks the call; stderr is the reason the model sees.
input=$(cat)
command=$(printf '%s' "$input" | sed -n 's/.*"command"[[:space:]]*:[[:space:]]*"\(\([^"\\]\|\\.\)*\)".*/\1/p')
if printf '%s\n' "$command" | grep -Eq '(^|[;&|[:space:]])rm[[:space:]]+(-[a-zA-Z]*[rR][a-zA-Z]*f|-[a-zA-Z]*f[a-zA-Z]*[rR]|-[rR][[:space:]]+-f|-f[[:space:]]+-[rR])'; then
  echo "Blocked: '$command' deletes recursively and without confirmation. Remove specific files instead." >&2
  exit 2
fi
exit 0
