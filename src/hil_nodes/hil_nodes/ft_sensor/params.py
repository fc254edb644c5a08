"""The ft_sensor node's parameters: its Param table (the only place they are declared; the
generated page docs/parameters/ft_sensor.md and the config files are checked against it) and
the one mapping from the validated values to the signal chain's ``ChainConfig``."""
from __future__ import annotations

from hil_core.ft.joystick import JoystickLimits
from hil_core.ft.signal_chain import MINI45_RANGE, ChainConfig
from hil_nodes import topics
from hil_nodes.framework.param_table import ConfigFields, Param
from hil_nodes.ft_sensor.sources import SOURCES

PARAMS = (
    Param('source', str, 'mock', 'input: netft (ATI Net F/T UDP), sim (simulated sensor in-process), '
          'mock (hil_sim.mock_ft.node topic, 1.6 kHz over DDS), replay (bag/CSV)', choices=tuple(SOURCES)),
    Param('sim_load_file', str, '', 'sim: load scenario YAML (seed, components, sensor_dropout)'),
    Param('seed', int, 0, 'sim: seed of noise and random pushes when the load file gives none'),
    Param('sensor_ip', str, '192.168.1.1', 'Net F/T address', check=lambda v: None if v else 'must not be empty'),
    Param('sensor_port', int, 49152, 'Net F/T RDT UDP port', range=(1, 65535)),
    Param('counts_per_force', float, 1e6, 'RDT counts per N (sensor calibration)', range=(1e-6, 1e12)),
    Param('counts_per_torque', float, 1e6, 'RDT counts per N m (sensor calibration)', range=(1e-6, 1e12)),
    Param('frame_id', str, 'ft_sensor', 'frame_id of the published wrenches (output_frame sensor)'),
    Param('output_frame', str, 'sensor', 'sensor: sensor axes; base: rotated into base axes by the TCP '
          'orientation (what the admittance node takes, wrench_frame control)', choices=('sensor', 'base')),
    Param('base_frame_id', str, 'hexapod_base', 'frame_id of the published wrenches (output_frame base)'),
    Param('sample_rate', float, 1600.0, 'input sample rate (Hz): filter design, replay grid, Net F/T rate',
          range=(10.0, 7000.0)),
    Param('publish_rate', float, 400.0, 'output rate (Hz); in lockstep stamps that are multiples of '
          '1/publish_rate are published', range=(1.0, 7000.0)),
    Param('filter_cutoff_hz', float, 40.0, 'Butterworth cut-off (Hz), seed 000: 40 Hz ~ 6 ms delay',
          range=(0.1, 3500.0)),
    Param('filter_order', int, 2, 'Butterworth order', range=(1, 8)),
    Param('notch_hz', float, 0.0, 'mains notch frequency (Hz), 0 = off (50 Hz drives noise)', range=(0.0, 3500.0)),
    Param('notch_q', float, 30.0, 'notch quality factor', range=(0.5, 1000.0)),
    Param('bias_samples', int, 200, 'samples averaged by the software bias (tare)', range=(1, 100000)),
    Param('hardware_bias', bool, False, 'netft: the bias service sends 0x0042 to the box instead of a software tare'),
    Param('payload_mass', float, 0.0, 'payload mass for gravity compensation (kg)', range=(0.0, 1e4)),
    Param('payload_cog', 'float[]', [0.0, 0.0, 0.0], 'payload centre of gravity in the sensor frame (m)', length=3,
          range=(-10.0, 10.0)),
    Param('gravity', 'float[]', [0.0, 0.0, -9.81], 'gravity in the base frame (m/s^2)', length=3, range=(-20.0, 20.0)),
    Param('use_tcp_pose', bool, False, 'orientation for gravity compensation from the TCP pose topic '
          '(identity = home orientation until the first pose)'),
    Param('sensing_range', 'float[]', list(MINI45_RANGE), 'saturation limits |Fx..Tz| (N, N m), ATI mini45',
          length=6, range=(1e-6, 1e9)),
    Param('spike_factor', float, 10.0, 'reject jumps > factor x running jump scale (0 = off)', range=(0.0, 1e6)),
    Param('spike_floor', 'float[]', [5.0, 0.5], 'smallest jump scale (N, N m)', length=2, range=(1e-9, 1e6)),
    Param('spike_max_run', int, 16, 'a jump lasting this many samples is a real step', range=(1, 100000)),
    Param('stale_timeout', float, 0.05, 'stop publishing after this long without a valid sample (s)',
          range=(1e-4, 60.0)),
    Param('receive_timeout', float, 0.1, 'netft: silence before "sensor silent" (s)', range=(0.001, 60.0)),
    Param('reconnect_backoff_max', float, 2.0, 'netft: longest wait between stream re-requests (s)',
          range=(0.01, 600.0)),
    Param('replay_file', str, '', 'replay: rosbag2 directory or .csv (t, Fx, Fy, Fz, Tx, Ty, Tz)'),
    Param('replay_topic', str, topics.ROOT.FT_WRENCH_RAW, 'replay: WrenchStamped topic as named in the bag '
          '(a bag of a run under a namespace: /<ns>/ft_sensor/wrench_raw)'),
    Param('replay_loop', bool, False, 'replay: start over at the end instead of going stale'),
    Param('publish_raw_all', bool, False, 'publish every valid raw sample, not only those on the publish grid'),
    # the force joystick (hil_core.ft.joystick, topics.JOYSTICK_WRENCH): the operator's wrench, limited,
    # added to the sensor's load before the signal chain, as a push on a joystick mounted on the sensor
    Param('joystick_force_max', float, 50.0, 'joystick: largest force magnitude added to the load (N; 0 = '
          'no force)', range=(0.0, 1e4)),
    Param('joystick_torque_max', float, 5.0, 'joystick: largest torque magnitude added to the load (N m; 0 = '
          'no torque)', range=(0.0, 1e3)),
    Param('joystick_force_rate', float, 200.0, 'joystick: fastest change of the applied force vector (N/s)',
          range=(1e-3, 1e6)),
    Param('joystick_torque_rate', float, 20.0, 'joystick: fastest change of the applied torque vector (N m/s)',
          range=(1e-3, 1e5)),
    Param('joystick_timeout', float, 0.5, 'joystick: no input for this long (sample time, s) releases it: '
          'the wrench ramps to zero at the rate limits', range=(1e-3, 60.0)),
    Param('joystick_in_hardware', bool, False, 'joystick: also add it to a real sensor (source netft); '
          'false: ignored with a warning there'),
    # the common status_period with this node's default: its figures (rate_hz, silence) cover one period
    Param('status_period', float, 1.0, 'wall s between summary statuses (rate_hz and "no input" cover one '
          'period) and "ft_sensor: cycle" statuses', range=(0.01, 60.0)),
)

# the chain's names for the filter parameters are its own (cutoff_hz, order); the node's say
# which filter they set
CHAIN_CONFIG = ConfigFields(
    ChainConfig, renamed={'cutoff_hz': 'filter_cutoff_hz', 'order': 'filter_order'},
    # a Net F/T box streams at its own clock: every n-th sample, not the stamps on a grid
    derived={'decimation': lambda p: 'count' if p.source == 'netft' else 'grid'},
    fixed=frozenset({'spike_window'}))

# sources whose load is a real sensor's: the joystick is added there only with joystick_in_hardware
HARDWARE_SOURCES = frozenset({'netft'})


JOYSTICK_LIMITS = ConfigFields(JoystickLimits, renamed={f: f'joystick_{f}' for f in (
    'force_max', 'torque_max', 'force_rate', 'torque_rate', 'timeout')})


def joystick_limits(p) -> JoystickLimits:
    """The joystick's limits for the validated values ``p``."""
    return JOYSTICK_LIMITS.build(p)


def joystick_allowed(p) -> bool:
    """The joystick is added to simulated or recorded loads; to a real sensor only when allowed."""
    return p.source not in HARDWARE_SOURCES or p.joystick_in_hardware


def chain_config(p) -> ChainConfig:
    """The signal chain's configuration for the validated values ``p`` (ValueError if refused)."""
    return CHAIN_CONFIG.build(p)
