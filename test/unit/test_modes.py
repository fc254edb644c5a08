"""HIL mode machine (seed 000 section 5): every request and event in every mode.

The expected tables below are written out by hand from the issue's flow, independently of
``hil_core.supervision.modes``' own tables, so a wrong entry there fails here.
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.supervision.modes import Event, HilMode, ModeMachine, Request

M = HilMode
ALL_MODES = list(HilMode)

# (request, mode) -> target mode; anything not listed must be refused (ESTOP handled apart).
EXPECTED_REQUESTS = {
    (Request.START, M.IDLE): M.HOMING,
    (Request.STOP, M.HOMING): M.RETURNING_HOME,
    (Request.STOP, M.SYNCHRONIZING): M.RETURNING_HOME,
    (Request.STOP, M.RUNNING): M.RETURNING_HOME,
    (Request.RESET, M.FAULT): M.IDLE,
}
EXPECTED_EVENTS = {
    (Event.HOMED, M.HOMING): M.SYNCHRONIZING,
    (Event.SYNCHRONIZED, M.SYNCHRONIZING): M.RUNNING,
    (Event.SAFETY_TAKEOVER, M.SYNCHRONIZING): M.SAFETY_RECOVERY,
    (Event.SAFETY_TAKEOVER, M.RUNNING): M.SAFETY_RECOVERY,
    (Event.BACK_INSIDE, M.SAFETY_RECOVERY): M.RETURNING_HOME,
    (Event.HOME_REACHED, M.RETURNING_HOME): M.IDLE,
}


def machine_in(mode: HilMode) -> ModeMachine:
    m = ModeMachine(mode)
    if mode is M.FAULT:
        m.fault_reason = 'earlier fault'
    return m


@pytest.mark.parametrize('mode', ALL_MODES)
@pytest.mark.parametrize('request_', [Request.START, Request.STOP, Request.RESET])
def test_every_request_in_every_mode(mode, request_):
    m = machine_in(mode)
    t = m.request(request_)
    target = EXPECTED_REQUESTS.get((request_, mode))
    if target is None:
        assert not t.accepted and not t.changed
        assert m.mode is mode and t.mode is mode
        assert f'{request_.value} refused in mode {mode.value}' in t.reason
    else:
        assert t.accepted and t.changed
        assert m.mode is target and t.mode is target and t.previous is mode


@pytest.mark.parametrize('mode', ALL_MODES)
@pytest.mark.parametrize('event', [e for e in Event if e is not Event.FAULT])
def test_every_event_in_every_mode(mode, event):
    m = machine_in(mode)
    t = m.event(event)
    target = EXPECTED_EVENTS.get((event, mode))
    if target is None:
        assert not t.accepted and m.mode is mode
        assert 'ignored' in t.reason
    else:
        assert t.accepted and m.mode is target


@pytest.mark.parametrize('mode', ALL_MODES)
@pytest.mark.parametrize('how', ['estop', 'event', 'fault'])
def test_fault_reachable_from_every_mode(mode, how):
    m = machine_in(mode)
    count = m.fault_count
    if how == 'estop':
        t = m.request(Request.ESTOP)
    elif how == 'event':
        t = m.event(Event.FAULT, 'planner: hard limit crossed')
    else:
        t = m.fault('node x dead')
    assert t.accepted and m.mode is M.FAULT
    if mode is M.FAULT:
        # Already in FAULT: the first cause stays, no new entry is counted.
        assert not t.changed and m.fault_reason == 'earlier fault' and m.fault_count == count
        assert 'already in FAULT' in t.reason
    else:
        assert t.changed and m.fault_count == count + 1 and m.fault_reason == t.reason


def test_refusal_reasons_say_what_to_do():
    assert 'reset first' in machine_in(M.FAULT).request(Request.START).reason
    assert 'nothing to stop' in machine_in(M.IDLE).request(Request.STOP).reason
    assert 'already returning home' in machine_in(M.RETURNING_HOME).request(Request.STOP).reason
    assert 'returning home' in machine_in(M.SAFETY_RECOVERY).request(Request.STOP).reason
    assert 'allowed in: IDLE' in machine_in(M.RUNNING).request(Request.START).reason
    assert 'allowed in: FAULT' in machine_in(M.RUNNING).request(Request.RESET).reason


def test_reset_refused_while_fault_present_then_accepted():
    m = ModeMachine()
    m.fault('heartbeat of mock_hexapod lost')
    t = m.request(Request.RESET, blocking_fault='mock_hexapod dead')
    assert not t.accepted and m.mode is M.FAULT
    assert 'fault still present' in t.reason and 'mock_hexapod dead' in t.reason
    t = m.request(Request.RESET)
    assert t.accepted and m.mode is M.IDLE and m.fault_reason == ''


def test_blocking_fault_does_not_matter_outside_fault():
    # A dead node outside FAULT is the supervisor's business (it faults); reset is then
    # refused because the mode is not FAULT, with that reason.
    t = machine_in(M.RUNNING).request(Request.RESET, blocking_fault='x dead')
    assert not t.accepted and 'refused in mode RUNNING' in t.reason


def test_full_cycle_with_recovery():
    m = ModeMachine()
    seq = [m.request(Request.START), m.event(Event.HOMED), m.event(Event.SYNCHRONIZED),
           m.event(Event.SAFETY_TAKEOVER), m.event(Event.BACK_INSIDE), m.event(Event.HOME_REACHED)]
    assert all(t.accepted for t in seq)
    assert [t.mode for t in seq] == [M.HOMING, M.SYNCHRONIZING, M.RUNNING, M.SAFETY_RECOVERY,
                                     M.RETURNING_HOME, M.IDLE]


def test_unknown_inputs_raise():
    m = ModeMachine()
    with pytest.raises(ValueError):
        m.request('launch')
    with pytest.raises(ValueError):
        m.event('teleported')
    assert m.mode is M.IDLE


def test_allowed_sets():
    m = ModeMachine()
    assert m.allowed(Request.ESTOP) == frozenset(HilMode)
    assert m.allowed(Request.START) == {M.IDLE}
    assert m.allowed(Request.STOP) == {M.HOMING, M.SYNCHRONIZING, M.RUNNING}


_inputs = st.one_of(
    st.tuples(st.just('request'), st.sampled_from(list(Request)), st.sampled_from(['', 'x dead'])),
    st.tuples(st.just('event'), st.sampled_from(list(Event)), st.just('')))


@settings(max_examples=300, deadline=None)
@given(st.lists(_inputs, max_size=40))
def test_properties_over_random_input_sequences(inputs):
    """FAULT is left only by an unblocked reset (to IDLE); estop/fault always end in FAULT;
    fault_count counts the entries into FAULT; the mode is always a valid HilMode."""
    m = ModeMachine()
    entries = 0
    for kind, value, blocking in inputs:
        before = m.mode
        t = m.request(value, blocking) if kind == 'request' else m.event(value, 'r')
        assert isinstance(m.mode, HilMode) and t.mode is m.mode and t.previous is before
        if value in (Request.ESTOP, Event.FAULT):
            assert m.mode is M.FAULT
        if before is M.FAULT and m.mode is not M.FAULT:
            assert value is Request.RESET and not blocking and m.mode is M.IDLE
        if before is not M.FAULT and m.mode is M.FAULT:
            entries += 1
        if not t.accepted:
            assert m.mode is before
    assert m.fault_count == entries


def test_a_cause_confirmed_after_the_fault_is_added_and_the_first_stays_first():
    """A process death reported after the FAULT it caused (the drives' watchdog saw the missing
    command first) is added to the reason once; outside FAULT nothing is added."""
    m = ModeMachine(HilMode.RUNNING)
    assert not m.add_cause('node timebase is dead')
    m.fault('mock_hexapod: watchdog: no command for frame 0.6025 s')
    assert m.add_cause('node timebase is dead: its process timebase was killed by SIGKILL')
    assert not m.add_cause('node timebase is dead: its process timebase was killed by SIGKILL')
    assert m.fault_reason == ('mock_hexapod: watchdog: no command for frame 0.6025 s; then confirmed: '
                              'node timebase is dead: its process timebase was killed by SIGKILL')
    assert m.mode is HilMode.FAULT and m.fault_count == 1
