"""hil run's FAULT line (hil_nodes.cli.run_summary.hear_the_fault_status): the supervisor's mode
and its status are two topics, heard in either order; the line must give the status that says
FAULT and why, not the status before it."""
from hil_nodes.cli.run_summary import fault_reason, hear_the_fault_status


class _Client:
    """The supervisor's statuses as RunClient keeps them, the FAULT status heard on the
    ``arrives_after``-th spin (the mode topic already said FAULT)."""

    def __init__(self, arrives_after: int | None):
        self.diag = {'supervisor': {'mode': 'IDLE', 'fault_reason': ''}}
        self.diag_messages = {'supervisor': 'bringing up: waiting for mock_hexapod (part hardware)'}
        self.arrives_after = arrives_after
        self.spins = 0

    def value(self, node, key, default=''):
        return self.diag.get(node, {}).get(key, default)

    def spin_once(self, timeout=0.05):
        self.spins += 1
        if self.spins == self.arrives_after:
            self.diag['supervisor'] = {'mode': 'FAULT', 'fault_reason': 'bring-up failed: waited 3 s'}
            self.diag_messages['supervisor'] = 'FAULT: bring-up failed: waited 3 s'


def test_a_fault_status_heard_after_the_mode_is_waited_for():
    client = _Client(arrives_after=3)
    assert fault_reason(client).startswith('bringing up')       # what the line said before
    hear_the_fault_status(client)
    assert client.spins == 3 and fault_reason(client) == 'bring-up failed: waited 3 s'


def test_a_status_already_heard_costs_no_spin():
    client = _Client(arrives_after=None)
    client.diag['supervisor'] = {'mode': 'FAULT', 'fault_reason': 'x'}
    hear_the_fault_status(client)
    assert client.spins == 0


def test_a_silent_supervisor_is_waited_for_a_bounded_time():
    client = _Client(arrives_after=None)
    hear_the_fault_status(client, timeout=0.1)      # returns: the line then says what it has
    assert client.spins > 0 and fault_reason(client).startswith('bringing up')
