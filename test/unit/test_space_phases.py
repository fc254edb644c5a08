"""The space plant's reaction to supervisor modes."""
from hil_core.space.phases import SpacePhases


def run(ph, mode, stopped=True):
    return ph.update(mode, stopped)


def test_standalone_runs():
    ph = SpacePhases()
    assert run(ph, None) == (True, True, [])
    assert run(ph, None) == (True, False, [])


def test_start_sequence_homed_synchronized_running_then_stop():
    ph = SpacePhases()
    assert run(ph, 'IDLE') == (False, False, [])
    on, reset, ev = run(ph, 'HOMING')
    assert not on and reset and [e[0] for e in ev] == ['homed']
    on, reset, ev = run(ph, 'HOMING')
    assert on and reset and [e[0] for e in ev] == ['synchronized']
    assert run(ph, 'RUNNING') == (True, False, [])
    assert run(ph, 'RETURNING_HOME', stopped=False) == (False, False, [])
    on, _, ev = run(ph, 'RETURNING_HOME', stopped=True)
    assert not on and [e[0] for e in ev] == ['home_reached']
    assert run(ph, 'IDLE') == (False, False, [])


def test_fault_and_unknown_modes_stop():
    ph = SpacePhases()
    run(ph, 'HOMING')
    run(ph, 'HOMING')
    assert run(ph, 'FAULT')[0] is False
    ph = SpacePhases()
    assert run(ph, 'RUNNING')[0] is True          # joined a running system
    assert run(ph, 'bogus')[0] is False
