#!/bin/sh
# Stop hook: asks for one more step to run the tests, but only once. When the turn is
# already continuing because of a Stop hook (stop_hook_active is true) it lets it stop,
# so it can never loop.
input=$(cat)
case "$input" in
  *'"stop_hook_active":true'*|*'"stop_hook_active": true'*) exit 0 ;;
esac
echo '{"decision":"block","reason":"Before you stop: run the test suite and report the result."}'
