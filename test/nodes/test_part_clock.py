"""The clock exchange between the parts of a run (hil_nodes.cli.part_clock.PartClock), over DDS:
each part gets ``SAMPLES`` answers from the other, and the launcher that shuts the run down waits
until both have theirs even when the other part's client came late. Both parts share this
machine's clock, so every offset is within half its round trip (hil_core.supervision.clock_offset)."""
import time

from hil_nodes.cli.part_clock import SAMPLES, PartClock
from hil_nodes.cli.run_client import RunClient


def test_the_launcher_that_ends_the_run_waits_until_both_parts_have_their_samples(ros):
    chain_client = RunClient(ros.domain_id)
    hw_client = None
    try:
        chain = PartClock(chain_client.node, 'chain', ['hardware'])
        end = time.monotonic() + 0.5
        while time.monotonic() < end:          # nobody answers yet: the other part is not up
            chain_client.spin_once(0.05)
        assert chain.samples == {'hardware': []} and not chain.done
        hw_client = RunClient(ros.domain_id)
        hardware = PartClock(hw_client.node, 'hardware', ['chain'])

        def spin_both(timeout):
            chain_client.spin_once(timeout / 2)
            hw_client.spin_once(timeout / 2)

        chain.wait_done(spin_both, 20.0)
        assert chain.done and hardware.done       # not only its own: the other part stopped pinging
        for clock, other in ((chain, 'hardware'), (hardware, 'chain')):
            assert len(clock.samples[other]) == SAMPLES
            est = clock.estimates()[other]
            assert est.samples == SAMPLES and 0 < est.rtt_s and abs(est.offset_s) <= est.rtt_s / 2
            assert clock.summary().startswith(f'{other}: offset ') and f'(median of {SAMPLES};' in clock.summary()
    finally:
        chain_client.close()
        if hw_client is not None:
            hw_client.close()


def test_a_part_never_heard_from_in_a_long_enough_run_is_not_waited_for(ros, monkeypatch):
    """A bring-up that failed waiting for the other part (it never started): at the shutdown
    the launcher does not wait for its samples once the run was at least the wait's limit long;
    in a shorter run it still waits, as a part discovered late may yet answer."""
    from hil_nodes.cli import part_clock
    client = RunClient(ros.domain_id)
    try:
        now = [1000.0]
        monkeypatch.setattr(part_clock.time, 'monotonic', lambda: now[0])
        chain = PartClock(client.node, 'chain', ['hardware', 'model'])
        spins = []

        def spin(timeout):
            spins.append(timeout)
            now[0] += timeout
        now[0] += 2.0                      # a run of 2 s: shorter than the 3 s limit
        chain.wait_done(spin, 3.0)
        assert sum(spins) >= 3.0 - 1e-9 and not chain.done     # it waited its limit
        spins.clear()
        chain.wait_done(spin, 3.0)         # the run is 5 s old now: nobody to wait for
        assert spins == [] and not chain.done
    finally:
        client.close()
