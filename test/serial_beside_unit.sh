#!/usr/bin/env bash
# `make test`'s second step: the files judged on the wall clock (-m serial; test/conftest.py
# SERIAL_FILES) in the foreground, one test at a time, and beside them, at the lowest CPU
# priority (nice 19), the unit tests (test/unit: pure hil_core, no DDS, no clock, no process of
# their own). The serial files keep about one core busy (3:10 of CPU in 3:29 here, 2026-11-29), so
# the other was idle while they ran; at nice 19 the unit tests take what the serial files leave
# (CFS gives a nice-0 task 68 times the weight and the core at its wake-up), and they no longer
# take a worker of the first step. Both outputs are printed, the unit tests' after the serial
# files'; the step fails when either fails.
# usage: test/serial_beside_unit.sh PYTHON
set -u
py="${1:?usage: $0 PYTHON}"
log="$(mktemp /tmp/hil_unit_tests_XXXXXX)"
nice -n 19 "$py" -m pytest -n 0 --durations=8 test/unit > "$log" 2>&1 &
unit=$!
trap 'kill "$unit" 2>/dev/null; rm -f "$log"' EXIT
"$py" -m pytest -n 0 --durations=8 -m serial
serial_rc=$?
wait "$unit"
unit_rc=$?
trap 'rm -f "$log"' EXIT      # (its pid is free again: never signal it now)
echo "== the unit tests (test/unit), run beside the serial files at nice 19:"
cat "$log"
exit $(( serial_rc != 0 || unit_rc != 0 ))
