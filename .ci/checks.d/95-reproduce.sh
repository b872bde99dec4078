# The result of the `reproduce --quick --check` runs that 65-reproduce.sh started in the
# background: wait for them, print their output, and fail CI if either failed (a verdict that
# changed, or a run that errored), as the step did when it ran in the foreground.
reproduce_waited=$(date +%s)
reproduce_rc=0
wait "$reproduce_pid" || reproduce_rc=$?
trap - EXIT
cat "$reproduce_log"
echo "== reproduce --quick --check, both seed bases: done $(( $(date +%s) - reproduce_started )) s after they started, $(( $(date +%s) - reproduce_waited )) s of it waited for here"
if [ "$reproduce_rc" -ne 0 ]; then
  echo "reproduce --quick --check failed (exit $reproduce_rc): see its output above"
  exit "$reproduce_rc"
fi
unset reproduce_pid reproduce_rc reproduce_waited reproduce_log reproduce_started
