"""F/T signal chain and Net F/T transport figures (seed 000: 1.6 kHz sampling, 40 Hz filter).

Prints ``name: value unit`` lines:
* per-sample cost of the chain (validity, gravity compensation, bias, 2nd-order Butterworth at
  40 Hz, decimation) as the lockstep node runs it (one sample per call), p50/p99;
* per-block cost for a 2.5 ms frame (4 samples) and for a 64-sample Net F/T burst, and the
  filter's step alone;
  each for the numpy oracle (``ft_numpy_*``: SignalChainNumpy) and the compiled chain
  (``ft_chain_*``: SignalChain, ft.signal_chain_kernel), and the compiled chain's first
  construction in a fresh process (numba cache load, or compilation without a cache);
* the analytic filter delay (mean group delay 0-7 Hz);
* the sustained UDP rate from the hil_sim Net F/T device to the RDT client on this machine:
  the highest tried rate with no record lost in 1 s, with the chain run on every burst.
"""
from __future__ import annotations

import time

import numpy as np

from hil_core.ft.filters import StreamFilter, design_sos
from hil_core.ft.netft_client import NetFTClient
from hil_core.ft.signal_chain import ChainConfig, SignalChain, SignalChainNumpy, counts_to_si
from hil_core.ft.load_profiles import LoadProfile
from hil_sim.netft_device.node import NetFTDevice

DT_NS = 625_000


def _pct(samples_ns):
    a = np.asarray(samples_ns) / 1e3
    return np.percentile(a, 50), np.percentile(a, 99)


def chain_costs():
    cfg = ChainConfig(payload_mass=1.2, payload_cog=(0.0, 0.0, 0.05), notch_hz=0.0)
    x = LoadProfile([{'type': 'pushes', 'rate': 2.0}, {'type': 'noise', 'std': 0.1},
                     {'type': 'mains', 'amplitude': 0.3}], seed=1).sample(np.arange(20000) / 1600.0)
    R = np.eye(3)
    t0 = time.perf_counter()
    SignalChain(cfg)
    yield 'ft_chain_compiled_first_construction', (time.perf_counter() - t0) * 1e3, 'ms'
    clock = time.perf_counter_ns
    for prefix, cls in (('ft_numpy', SignalChainNumpy), ('ft_chain', SignalChain)):
        chain = cls(cfg)
        per = np.empty(len(x))
        for i in range(len(x)):
            t0 = clock()
            chain.process(np.array([(i + 1) * DT_NS]), x[i], R=R)
            per[i] = clock() - t0
        yield f'{prefix}_per_sample_p50', _pct(per[100:])[0], 'us'
        yield f'{prefix}_per_sample_p99', _pct(per[100:])[1], 'us'
        for size in (4, 64):
            chain = cls(cfg)
            blocks = np.empty(len(x) // size)
            for b in range(len(blocks)):
                sl = slice(b * size, (b + 1) * size)
                t0 = clock()
                chain.process(np.arange(sl.start + 1, sl.stop + 1) * DT_NS, x[sl], R=R)
                blocks[b] = clock() - t0
            p50, p99 = _pct(blocks[10:])
            yield f'{prefix}_block{size}_p50', p50, 'us'
            yield f'{prefix}_block{size}_p99', p99, 'us'
            yield f'{prefix}_block{size}_per_sample_p50', p50 / size, 'us'
    filt = StreamFilter(design_sos(2, 40.0, 1600.0))
    filt.reset()
    step = np.empty(5000)
    for i in range(5000):
        t0 = clock()
        filt.step(x[i])
        step[i] = clock() - t0
    yield 'ft_filter_step_p50', _pct(step)[0], 'us'
    yield 'ft_filter_delay_0_7hz', 1e3 * SignalChain(ChainConfig()).delay_estimate(), 'ms'


def udp_rate(rate, seconds=1.0):
    """(received, lost, achieved rate) for a ``seconds`` stream at ``rate``, chain on every burst."""
    n = int(rate * seconds)
    prof = LoadProfile([{'type': 'noise', 'std': 0.1}], seed=2)
    with NetFTDevice(rate=rate, profile=prof, max_rate=1e6) as dev:
        client = NetFTClient(*dev.address, timeout=0.3)
        chain = SignalChain(ChainConfig(sample_rate=max(rate, 1600.0), publish_rate=400.0, decimation='count'))
        client.start(sample_count=n)
        got, t_end = 0, time.monotonic() + seconds * 3 + 2
        t_first = t_last = None
        while time.monotonic() < t_end and got + client.tracker.lost < n:
            b = client.receive()
            if len(b):
                t_last = time.monotonic()
                t_first = t_first or t_last
                got += len(b)
                keep = b.accepted
                stamps = (b.rdt_sequence[keep] + 1) * 1000
                chain.process(stamps, counts_to_si(b.counts[keep], 1e6, 1e6))
            elif not dev.streaming:
                break
        lost = n - got
        client.close()
    achieved = got / (t_last - t_first) if t_last and t_last > t_first else 0.0
    return got, lost, achieved


def main():
    for name, value, unit in chain_costs():
        print(f'{name}: {value:.2f} {unit}', flush=True)
    best = 0.0
    for rate in (1600.0, 7000.0, 14000.0, 28000.0, 56000.0):
        got, lost, achieved = udp_rate(rate)
        print(f'ft_udp_{int(rate)}hz_lost: {lost} records', flush=True)
        print(f'ft_udp_{int(rate)}hz_achieved: {achieved:.0f} Hz', flush=True)
        if lost > 0:
            break
        best = max(best, achieved)
    # records per second actually carried without loss (device, client and chain in one process)
    print(f'ft_udp_sustained_lossless: {best:.0f} Hz', flush=True)


if __name__ == '__main__':
    main()
