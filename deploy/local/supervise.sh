#!/usr/bin/env bash
# Runs one server of the local control plane so that it never outlives the process that started it.
#
# The parent keeps this script's stdin open as a pipe and never writes to it. When the parent goes
# away for any reason (a clean stop, Ctrl-C, a crashed test, even SIGKILL), the pipe closes, `read`
# sees end-of-file, and the server gets SIGTERM, then SIGKILL if it lingers. A SIGTERM or SIGINT
# sent to this script is passed on to the server.
#
# Usage: supervise.sh COMMAND [ARG ...]
set -u
# Background jobs get /dev/null as stdin, so the watchdog reads the parent's pipe through fd 3.
exec 3<&0
"$@" </dev/null 3<&- &
child=$!
{
  while read -r _ <&3; do :; done
  kill -TERM "$child" 2>/dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$child" 2>/dev/null || exit 0; sleep 1; done
  kill -KILL "$child" 2>/dev/null
} &
watchdog=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT
rc=0
while kill -0 "$child" 2>/dev/null; do
  wait "$child"
  rc=$?
done
kill "$watchdog" 2>/dev/null
exit "$rc"
