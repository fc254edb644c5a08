"""hil run's ``realtime_held`` line (hil_nodes.cli.run_summary.realtime_held), from the supervisor's
status: a verdict when the health judge judged, NO with its reason when it did not hold, and
'not judged' when the run ended (or stopped for another reason, the drives' watchdog) within its
first health window: an OK that saw no full window is no evidence that real time held."""
import pytest

from hil_nodes.cli.run_summary import realtime_held


class _Client:
    def __init__(self, **supervisor):
        self.diag = {'supervisor': {k: str(v) for k, v in supervisor.items()}} if supervisor else {}

    def value(self, node, key, default=''):
        return self.diag.get(node, {}).get(key, default)


@pytest.mark.parametrize('status, line', [
    (dict(realtime_held=True, health_judged=True, health_warnings=0), 'yes'),
    (dict(realtime_held=True, health_judged=True, health_warnings=2), 'yes, with 2 warning(s)'),
    (dict(realtime_held=False, health_judged=True, realtime_reason='real time not held: 11% of admittance cycles late'),
     'NO: real time not held: 11% of admittance cycles late'),
    (dict(realtime_held=True, health_judged=False, health_warnings=0),
     'not judged (the run ended or stopped within its first health window, health_min_span)'),
    (dict(realtime_held=True, health_warnings=0), 'yes'),      # a supervisor without the key: as before
    ({}, 'unknown (no health report)'),
])
def test_the_line_says_what_the_judge_saw(status, line):
    assert realtime_held(_Client(**status)) == line
