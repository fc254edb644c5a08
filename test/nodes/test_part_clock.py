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
