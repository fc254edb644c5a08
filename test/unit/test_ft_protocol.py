"""ATI Net F/T RDT protocol: byte-exact packets, parsing, loss/reorder counting."""

import numpy as np
import pytest

from hil_core.ft import netft_protocol as rdt


def test_requests_are_byte_exact():
    # uint16 0x1234 | uint16 command | uint32 sample_count, big-endian
    assert rdt.pack_request(rdt.CMD_START_REALTIME, 0) == bytes([0x12, 0x34, 0x00, 0x02, 0, 0, 0, 0])
    assert rdt.pack_request(rdt.CMD_STOP) == bytes([0x12, 0x34, 0x00, 0x00, 0, 0, 0, 0])
    assert rdt.pack_request(rdt.CMD_SET_SOFTWARE_BIAS) == bytes([0x12, 0x34, 0x00, 0x42, 0, 0, 0, 0])
    assert rdt.pack_request(2, 0x01020304) == bytes([0x12, 0x34, 0x00, 0x02, 0x01, 0x02, 0x03, 0x04])
    assert rdt.unpack_request(bytes.fromhex('1234000200000010')) == (2, 16)
    with pytest.raises(ValueError):
        rdt.pack_request(0x10000)
    with pytest.raises(rdt.ProtocolError):
        rdt.unpack_request(bytes.fromhex('4321000200000000'))
    with pytest.raises(rdt.ProtocolError):
        rdt.unpack_request(b'\x12\x34\x00\x02')


def test_parse_recorded_style_record():
    # A record as it comes off the wire: seq 0x0000ABCD, ft_seq 7, status 0, Fx = 1e6 counts (1 N),
    # Fy = -2e6, Fz = 0x7fffffff, Tx = -1, Ty = 256, Tz = -2**31.
    wire = bytes.fromhex('0000abcd' '00000007' '00000000' '000f4240' 'ffe17b80'
                         '7fffffff' 'ffffffff' '00000100' '80000000')
    rec = rdt.parse_record(wire)
    assert rec.rdt_sequence == 0xABCD and rec.ft_sequence == 7 and rec.status == 0
    assert rec.counts == (1_000_000, -2_000_000, 2 ** 31 - 1, -1, 256, -2 ** 31)
    assert rdt.pack_record(0xABCD, 7, 0, rec.counts) == wire
    seq, ft, status, counts = rdt.parse_records([wire, wire])
    assert seq.tolist() == [0xABCD] * 2 and counts[1].tolist() == list(rec.counts)


@pytest.mark.parametrize('size', [0, 35, 37, 8, 72])
def test_wrong_length_is_a_protocol_error(size):
    with pytest.raises(rdt.ProtocolError, match='36 bytes'):
        rdt.parse_record(b'\x00' * size)


def test_sequence_gaps_reorder_duplicates_and_wrap():
    tr = rdt.SequenceTracker()
    start = 2 ** 32 - 3                      # crosses the 32-bit wrap
    seqs = [(start + k) & 0xFFFFFFFF for k in range(12)]
    order = [seqs[0], seqs[1], seqs[3], seqs[2],          # swap: 1 reordered, 0 lost
             seqs[4], seqs[7],                            # gap of 2 (5, 6 lost)
             seqs[5],                                     # 5 arrives late: recovered
             seqs[7],                                     # duplicate
             seqs[8], seqs[11]]                           # gap of 2 (9, 10 lost)
    accepted = [tr.update(s) for s in order]
    assert accepted == [True, True, True, False, True, True, False, False, True, True]
    assert tr.lost == 1 + 2                 # 6, 9, 10 never arrived
    assert tr.out_of_order == 2 and tr.duplicates == 1 and tr.resyncs == 0


def test_counter_restart_resynchronises():
    """A new numbering is confirmed by three records in a row (one alone is a stray)."""
    tr = rdt.SequenceTracker(window=100)
    for s in range(5000, 5010):
        tr.update(s)
    assert [tr.update(s) for s in (0, 1, 2)] == [False, False, True]
    assert tr.resyncs == 1 and tr.lost == 0 and tr.strays == 0
    assert tr.update(3) and tr.lost == 0


def test_random_drops_and_swaps_counted_exactly():
    rng = np.random.default_rng(1)
    n = 20000
    seqs = list(range(100, 100 + n))
    keep = [s for s in seqs if rng.random() > 0.01]
    for i in range(1, len(keep) - 1, 97):     # some adjacent swaps
        keep[i], keep[i + 1] = keep[i + 1], keep[i]
    tr = rdt.SequenceTracker()
    for s in keep:
        tr.update(s)
    dropped = n - len(set(keep))
    # a swap at the very end of the stream cannot be told from a loss yet; none here
    assert tr.lost == dropped
    assert tr.out_of_order == len(range(1, len(keep) - 1, 97))


def test_restart_keeps_totals():
    tr = rdt.SequenceTracker()
    for s in (1, 2, 5):
        tr.update(s)
    tr.restart()
    assert tr.update(1) and tr.lost == 2 and tr.duplicates == 0   # a new stream may start anywhere
    assert tr.update(3) and tr.lost == 3
