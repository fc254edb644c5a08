"""Force/torque sensor signal path (seed 000, sections 3 and 5): the ATI Net F/T RDT protocol,
the streaming signal chain (counts -> SI, bias, payload gravity compensation, Butterworth
low-pass, mains notch, decimation, validity checks) and replay of recorded load histories."""
