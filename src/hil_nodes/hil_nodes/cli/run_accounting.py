"""The message accounting of a recorded `hil run` (was every message produced, delivered and
recorded?): per recorded topic, expected count (designed rate x the stream's span), published
(the producer's own count), recorded and the largest gap, with the flags that make a run not
clean (skipped, lost, missing, gap).

Inputs: the recorder's ``accounting.yaml`` in the bag, the run's effective parameters (designed
rates) and the producers' last statuses (``published.<topic>`` and ``skipped`` counters of their
``<node>: cycle`` status, as the `hil` command received them).
"""
from __future__ import annotations

import pathlib


from hil_core.accounting import account, clean, summary_lines, topic_counts
from hil_nodes.recorder.bag import read_accounting
from hil_nodes.report.rates import PRODUCERS, expected_rates


def _int(text) -> int | None:
    try:
        return int(float(text))
    except (TypeError, ValueError):
        return None


def run_accounting(bag: pathlib.Path, parameters: dict, statuses: dict[str, dict[str, str]]):
    """(rows, lines) for a bag, or (None, [reason]) when the recorder left no accounting."""
    path = pathlib.Path(bag) / 'accounting.yaml'
    if not path.exists():
        return None, ['no accounting.yaml in the bag (recorder killed before its first checkpoint?)']
    counts = topic_counts(read_accounting(bag))      # topics by their names at the root
    published, skipped = {}, {}
    for topic, node in PRODUCERS.items():
        values = statuses.get(node, {})
        n = _int(values.get(f'published.{topic}'))
        # a producer's count is taken from its last periodic status: fewer than were recorded
        # means that status predates the end of the stream, so it cannot judge anything
        if n is not None and (topic not in counts or n >= counts[topic].written):
            published[topic] = n
        s = _int(values.get('skipped'))
        if s:
            skipped[topic] = s
    # each stream is judged over its own span: streams start and stop with their modes
    durations = {t: c.last_s - c.first_s for t, c in counts.items()
                 if c.first_s is not None and c.last_s is not None}
    rows = account(counts, max(durations.values(), default=0.0), rates=expected_rates(parameters),
                   published=published, skipped_cycles=skipped, durations=durations)
    return rows, summary_lines(rows)


def accounting_summary(rows) -> dict[str, str]:
    """Summary lines: ``messages: clean`` or what was not, and one ``msgs <topic>`` line each."""
    if rows is None:
        return {'messages': 'NOT accounted (no recorder accounting)'}
    out = {'messages': 'clean: every recorded stream complete' if clean(rows) else
           'NOT clean: ' + ', '.join(f'{r.topic} {"/".join(r.flags)}' for r in rows if r.flags)}
    for line in summary_lines(rows):
        topic, _, rest = line.partition(': ')
        out[f'msgs {topic}'] = rest
    return out
