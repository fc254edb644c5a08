"""The order in which `make test`'s two workers take the test files (`--dist loadfile`).

pytest-xdist queues the files with the most tests first (xdist/scheduler/loadscope.py,
``schedule``), so a long file with one or two tests (a whole run in the browser, a run over three
emulated hosts) came last, and one worker ran it alone while the other had nothing left. Here the
files known to be long go first, longest first, and the many short ones fill in behind them.
"""
from __future__ import annotations

from xdist.scheduler import LoadFileScheduling


class LongestFirstFileScheduling(LoadFileScheduling):
    """``--dist loadfile`` with ``long_files`` (path from the rootdir -> seconds) queued first.

    It fills xdist's work queue (an ordered dict of file -> its tests) with the long files before
    the stock ``schedule`` builds it: the stock code then re-assigns those keys, which keeps their
    place, and appends every other file in its own order. Any other use of the scheduler is the
    stock one."""

    def __init__(self, config, log, long_files: dict[str, float]):
        super().__init__(config, log)
        self._long_files = dict(long_files)

    def schedule(self) -> None:
        if self.collection is None and self.collection_is_completed and self.registered_collections:
            nodeids = next(iter(self.registered_collections.values()))
            files: dict[str, dict[str, bool]] = {}
            for nodeid in nodeids:
                files.setdefault(self._split_scope(nodeid), {})[nodeid] = False
            for path in sorted(self._long_files, key=lambda f: -self._long_files[f]):
                if path in files:
                    self.workqueue[path] = files[path]
        super().schedule()

