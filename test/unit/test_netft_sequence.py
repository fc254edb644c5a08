"""RDT sequence numbers of the Net F/T input: modulo 2**32, stray records and numbering resets are
reported and never counted as losses; losses, late records and duplicates are counted exactly.

Facts from ATI (Net F/T manual section 10.1, as quoted in drivers): ``rdt_sequence`` is the
position of the record within one output stream, starts at 1 with every request and rolls
over to 0 after 2**32 - 1; ``ft_sequence`` counts internal samples from power-up."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.ft import netft_protocol as rdt

M = 2 ** 32


def feed(tr, seqs, now=None):
    return [tr.update(s, now) for s in seqs]


def test_stray_numbers_are_reported_not_lost():
    """The attack the fault hardening tried: random numbers inside a stream added 4.6e11 to lost_packets."""
    rng = np.random.default_rng(7)
    stream = list(range(1, 2001))
    strays = [int(v) for v in rng.integers(0, M, 40)]
    order, at = [], sorted(rng.choice(np.arange(10, 1990), 40, replace=False))
    for k, s in enumerate(stream):
        order.append(s)
        if k in at:
            order.append(strays[at.index(k)])
    tr = rdt.SequenceTracker()
    accepted = feed(tr, order)
    assert tr.lost == 0 and tr.strays == 40 and tr.resets == 0
    assert sum(accepted) == 2000                     # every real record, no stray
    assert [s for s, a in zip(order, accepted) if a] == stream


def test_strays_and_losses_counted_separately():
    tr = rdt.SequenceTracker()
    feed(tr, [1, 2, 3, 0x9ABCDEF0, 6, 7, 0x13572468, 0x13572469, 8])   # 4, 5 lost; two strays in a row
    assert tr.lost == 2 and tr.strays == 3 and tr.resets == 0 and tr.last == 8


def test_a_new_numbering_is_a_reset_not_a_loss():
    """The box starts again at 1 (a re-request, a reboot): reported once, no loss, and the new
    stream is processed after ``confirm`` records in a row."""
    tr = rdt.SequenceTracker(confirm=3)
    feed(tr, range(1, 501))
    accepted = feed(tr, range(1, 301))
    assert tr.resets == 1 and tr.lost == 0 and tr.strays == 0 and tr.duplicates == 0
    assert accepted[:2] == [False, False] and all(accepted[2:])
    # ... also forward, far away (a box with another counter), and across the 2**32 wrap
    feed(tr, [(M - 2 + k) % M for k in range(10)])
    assert tr.resets == 2 and tr.lost == 0 and tr.last == 7


def test_duplicated_records_are_not_a_reset():
    tr = rdt.SequenceTracker(confirm=3)
    accepted = feed(tr, [1, 2, 3, 4, 5, 4, 5, 6, 7, 7, 8])
    assert tr.duplicates == 3 and tr.resets == 0 and tr.lost == 0 and tr.strays == 0
    assert [s for s, a in zip([1, 2, 3, 4, 5, 4, 5, 6, 7, 7, 8], accepted) if a] == [1, 2, 3, 4, 5, 6, 7, 8]


def test_gaps_wrap_late_records_and_positions():
    tr = rdt.SequenceTracker()
    start = M - 3                                     # crosses the 32-bit wrap
    seqs = [(start + k) % M for k in range(12)]
    order = [seqs[0], seqs[1], seqs[3], seqs[2], seqs[4], seqs[7], seqs[5], seqs[7], seqs[8], seqs[11]]
    accepted = feed(tr, order)
    assert accepted == [True, True, True, False, True, True, False, False, True, True]
    assert tr.lost == 3 and tr.out_of_order == 2 and tr.duplicates == 1 and tr.strays == 0
    assert tr.position == 11                          # continuous record index: 0 .. 11


def test_a_long_outage_is_a_loss_when_time_says_it_is_plausible():
    """With arrival times, a forward gap is plausible up to what the box can send meanwhile
    (7 kHz at most): a 1.5 s outage at 7 kHz is 10500 lost records, not a stray."""
    tr = rdt.SequenceTracker(max_rate=7000.0)
    feed(tr, range(1, 101), now=0.0)
    assert tr.update(10600, 1.5) and tr.lost == 10499 and tr.strays == 0
    # the same jump 1 ms after the last record cannot be real
    assert not tr.update(10600 + 10499, 1.501) and tr.strays == 1 and tr.lost == 10499


def test_restart_keeps_totals_and_forgets_the_stream():
    tr = rdt.SequenceTracker()
    feed(tr, (1, 2, 5))
    tr.restart()
    assert tr.update(1) and tr.lost == 2 and tr.duplicates == 0 and tr.resets == 0
    assert tr.update(3) and tr.lost == 3


def test_stragglers_of_the_old_stream_after_a_restart():
    """Records of the old stream still in flight after a re-request, then the new one at 1."""
    tr = rdt.SequenceTracker(confirm=3)
    feed(tr, range(1, 400))
    tr.restart()
    feed(tr, [400, 401])                              # in flight
    feed(tr, range(1, 50))
    assert tr.resets == 1 and tr.lost == 0 and tr.last == 49


@settings(max_examples=150, deadline=None)
@given(n=st.integers(50, 600), start=st.integers(0, M - 1), seed=st.integers(0, 2 ** 31),
       p_drop=st.floats(0, 0.2), p_stray=st.floats(0, 0.1), p_dup=st.floats(0, 0.05), p_swap=st.floats(0, 0.1))
def test_property_counts_are_exact(n, start, seed, p_drop, p_stray, p_dup, p_swap):
    """Any mix of drops, adjacent swaps, single duplicates and strays (numbers far from the
    stream): lost = dropped records, strays = strays, every delivered record processed once,
    in order, never a reset."""
    rng = np.random.default_rng(seed)
    seqs = [(start + k) % M for k in range(n)]
    kept = [s for k, s in enumerate(seqs) if k in (0, n - 1) or rng.random() >= p_drop]
    for i in range(1, len(kept) - 2):
        if rng.random() < p_swap:
            kept[i], kept[i + 1] = kept[i + 1], kept[i]
    wire, strays, dups = [], 0, 0
    for i, s in enumerate(kept):
        wire.append(s)
        if 0 < i < len(kept) - 1 and rng.random() < p_dup:
            wire.append(s)
            dups += 1
        if rng.random() < p_stray:
            wire.append(int((s + M // 2 + rng.integers(-M // 4, M // 4)) % M))
            strays += 1
    tr = rdt.SequenceTracker()
    accepted = feed(tr, wire)
    assert tr.lost == n - len(kept) and tr.strays == strays and tr.resets == 0
    processed = [s for s, a in zip(wire, accepted) if a]
    assert len(processed) + tr.out_of_order == len(kept) and len(set(processed)) == len(processed)
    assert tr.duplicates == dups + 0 and tr.position == n - 1


def test_implausible_raw_counts():
    """Counts are signed int32 on the wire: 0xFFFFFFFF is -1 count (about 0 N), a plausible
    value on one axis but not as the whole record (a bus read of all ones); the int32 rails
    are what a saturated or clipped value becomes. Both are refused before any scaling."""
    counts = np.array([[1_000_000, -2_000_000, 15_000_000, 200_000, -100_000, 50_000],
                       [-1, -1, -1, -1, -1, -1],
                       [-1, 3, 15_000_000, 0, 0, 0],
                       [2 ** 31 - 1, 0, 15_000_000, 0, 0, 0],
                       [0, 0, -2 ** 31, 0, 0, 0],
                       [0, 0, 0, 0, 0, 0]])
    assert rdt.implausible_counts(counts).tolist() == [False, True, False, True, True, False]
    wire = rdt.pack_record(1, 1, 0, [-1] * 6)
    assert wire[12:] == b'\xff' * 24                              # 0xFFFFFFFF on every axis
    assert rdt.implausible_counts(rdt.parse_records([wire])[3]).tolist() == [True]
