"""`make test`'s file order on two workers (test/scheduling.py): the long files first, longest
first, then the stock order (most tests first), with every test sent exactly once."""
import pathlib
from types import SimpleNamespace

from conftest import LONG_FILES
from scheduling import LongestFirstFileScheduling

ROOT = pathlib.Path(__file__).resolve().parents[2]

COLLECTION = (['a/test_many.py::t%d' % i for i in range(6)]
              + ['a/test_some.py::t%d' % i for i in range(3)]
              + ['b/test_long.py::only', 'b/test_longer.py::one', 'b/test_longer.py::two'])


class Worker:
    """What the scheduler uses of xdist's WorkerController: an id and the tests it is sent."""

    def __init__(self, name):
        self.gateway = SimpleNamespace(id=name)
        self.sent = []
        self.shutting_down = False

    def send_runtest_some(self, indexes):
        self.sent.extend(COLLECTION[i] for i in indexes)

    def shutdown(self):
        self.shutting_down = True


def _schedule(long_files):
    config = SimpleNamespace(getvalue=lambda name: {'tx': ['popen', 'popen']}[name])    # two workers
    sched = LongestFirstFileScheduling(config, None, long_files)
    workers = [Worker('gw0'), Worker('gw1')]
    for w in workers:
        sched.add_node(w)
        sched.add_node_collection(w, list(COLLECTION))
    sched.schedule()
    return sched, workers


def _files(worker):
    return list(dict.fromkeys(nodeid.split('::')[0] for nodeid in worker.sent))


def test_the_long_files_go_first_longest_first():
    sched, (w0, w1) = _schedule({'b/test_long.py': 60.0, 'b/test_longer.py': 90.0, 'x/test_gone.py': 500.0})
    # each worker's first file: the two long ones, the longer to the first worker
    assert _files(w0)[0] == 'b/test_longer.py' and _files(w1)[0] == 'b/test_long.py'
    # then the stock order (most tests first) for the rest; a long file not collected is skipped
    assert [f for f in _files(w0) + _files(w1) if not f.startswith('b/')] == ['a/test_many.py', 'a/test_some.py']
    sent = w0.sent + w1.sent
    assert sorted(sent) == sorted(COLLECTION) and not sched.workqueue


def test_without_long_files_it_is_the_stock_order():
    _, (w0, w1) = _schedule({})
    assert _files(w0)[0] == 'a/test_many.py' and _files(w1)[0] == 'a/test_some.py'


def test_every_long_file_exists():
    """A renamed or removed file would silently drop out of the order."""
    assert [f for f in LONG_FILES if not (ROOT / f).is_file()] == []
