"""Every topic and service name of hil_suite, in one place (a contract: README "Topics").

Nodes use these constants and nothing else; remap on the command line or in
config/systems/*.yaml if a lab needs other names.

Every name the suite owns is relative: rcl resolves it in the node's namespace, so
``hil run --namespace /rig_a`` (or ``namespace:=/rig_a`` of the launch file) moves the whole
graph under ``/rig_a`` and two rigs can share one DDS domain (docs/CONTRACTS.md, "Namespaces").
Without a namespace every name resolves to what it always was (``ft_sensor/wrench`` ->
``/ft_sensor/wrench``). Bags, accounting and reports key topics by their name at the root
(``at_root``), whatever namespace the run had (``strip_namespace``).
"""

from types import SimpleNamespace

# --- infrastructure -------------------------------------------------------------------
# absolute by ROS convention (rclpy's TimeSource subscribes '/clock'); under a namespace the
# bring-up plan remaps it for every process of the graph ('/clock:=<ns>/clock'), so two
# simulated-time rigs each keep their own clock
CLOCK = '/clock'                                   # rosgraph_msgs/Clock, owned by the mock hardware in simulation
# relative as robot_state_publisher publishes it: the description moves with the graph
ROBOT_DESCRIPTION = 'robot_description'            # std_msgs/String, transient local
# relative (diagnostic_updater's is '/diagnostics'): under a namespace each rig's supervisor
# and `hil run` read their own graph's statuses only
DIAGNOSTICS = 'diagnostics'                        # diagnostic_msgs/DiagnosticArray, every node's status
# relative as joint_state_broadcaster and robot_state_publisher use it
JOINT_STATES = 'joint_states'                      # sensor_msgs/JointState, from the (mock) hardware
# relative, as nav2 remaps '/tf:=tf': TF moves with the namespace (frame ids do not change)
TF = 'tf'                                          # tf2_msgs/TFMessage: platform pose (FK), joint and leg frames
TF_STATIC = 'tf_static'                            # tf2_msgs/TFMessage, transient local: F/T sensor, fixed joints, mounts

# --- supervisor / HIL modes ------------------------------------------------------------
HIL_MODE = 'hil/mode'                              # std_msgs/String, latched (transient local): current HIL mode
HIL_FRAME = 'hil/frame'                            # std_msgs/Header per high-level frame: stamp = frame time, frame_id = mode
HIL_EVENTS = 'hil/events'                          # diagnostic_msgs/DiagnosticArray: progress events of the motion side
HIL_HEARTBEAT = 'hil/heartbeat'                    # std_msgs/Header: bond-style liveness, frame_id = node name
HIL_START = 'hil/start'                            # std_srvs/Trigger
HIL_STOP = 'hil/stop'                              # std_srvs/Trigger
HIL_RESET = 'hil/reset'                            # std_srvs/Trigger
HIL_ESTOP = 'hil/estop'                            # std_srvs/Trigger
HIL_SHUTDOWN = 'hil/shutdown'                      # std_srvs/Trigger: deactivate + clean up managed nodes in reverse order
HIL_PROCESS_EXIT = 'hil/process_exit'              # diagnostic_msgs/DiagnosticArray from the launcher: one status per node whose
                                                   # process ended (name = node, hardware_id = process, message = how)
HIL_CLOCK_PING = 'hil/clock_ping'                  # sensor_msgs/TimeReference between the parts' launchers (hosts): the
HIL_CLOCK_PONG = 'hil/clock_pong'                  # clock offset and round trip of each host (cli/part_clock.py)

# --- scenario 1: Hexafloat ---------------------------------------------------------------
MOCK_FT_WRENCH = 'mock_ft/wrench'                  # geometry_msgs/WrenchStamped: load profile of the mock sensor (counts-free, N / N m)
FT_WRENCH_RAW = 'ft_sensor/wrench_raw'             # geometry_msgs/WrenchStamped, SI, biased, unfiltered
FT_WRENCH = 'ft_sensor/wrench'                     # geometry_msgs/WrenchStamped, filtered + compensated
FT_BIAS = 'ft_sensor/bias'                         # std_srvs/Trigger: software tare
JOYSTICK_WRENCH = 'joystick/wrench'                # geometry_msgs/WrenchStamped: the operator's force joystick (HMI drag
                                                   # handle or gamepad, or a lab joystick node), added to the simulated
                                                   # sensor's load by ft_sensor, limited in magnitude and rate; frame_id =
                                                   # the sensor frame ('' too) or ft_sensor's base_frame_id
JOY = 'joy'                                        # sensor_msgs/Joy: a lab gamepad (the joy package) -> joy_wrench
ADMITTANCE_REFERENCE = 'admittance/reference'      # geometry_msgs/PoseStamped
ADMITTANCE_TWIST = 'admittance/twist'              # geometry_msgs/TwistStamped
ADMITTANCE_ACCEL = 'admittance/accel'              # geometry_msgs/AccelStamped
ADMITTANCE_RESET = 'admittance/reset'              # std_srvs/Trigger
PLANNER_SAFE_REFERENCE = 'planner/safe_reference'  # geometry_msgs/PoseStamped
PLANNER_SAFE_TWIST = 'planner/safe_twist'          # geometry_msgs/TwistStamped
PLANNER_EVENTS = 'planner/events'                  # diagnostic_msgs/DiagnosticArray
PLANNER_MARKERS = 'planner/workspace_markers'      # visualization_msgs/MarkerArray
HEXAPOD_JOINT_TRAJECTORY = 'hexapod_controller/joint_trajectory'   # trajectory_msgs/JointTrajectory (ros2_control JTC)
KINEMATICS_TCP_POSE = 'kinematics/tcp_pose'        # geometry_msgs/PoseStamped, estimated by forward kinematics
KINEMATICS_MARKERS = 'kinematics/markers'          # visualization_msgs/MarkerArray: legs and platform
KINEMATICS_FK_REQUEST = 'kinematics/forward/request'     # sensor_msgs/JointState: FK query, header.stamp = correlation id
KINEMATICS_FK_RESPONSE = 'kinematics/forward/response'   # geometry_msgs/PoseStamped, request's stamp; frame_id 'error: ...' + NaN if none
KINEMATICS_IK_REQUEST = 'kinematics/inverse/request'     # geometry_msgs/PoseStamped: IK query, header.stamp = correlation id
KINEMATICS_IK_RESPONSE = 'kinematics/inverse/response'   # sensor_msgs/JointState, request's stamp; frame_id 'error: ...' + NaN if none

# --- scenario 2: space manipulator on the iiwa -------------------------------------------
IIWA_JOINT_TRAJECTORY = 'joint_trajectory_controller/joint_trajectory'   # trajectory_msgs/JointTrajectory (ros2_control JTC; /lbr/... in hardware mode)
SPACE_SATELLITE_ODOM = 'space_plant/satellite_odom'   # nav_msgs/Odometry
SPACE_EE_POSE = 'space_plant/ee_pose'                # geometry_msgs/PoseStamped, inertial frame
SPACE_EE_SETPOINT = 'space_plant/ee_setpoint'        # geometry_msgs/PoseStamped
SPACE_ERRORS = 'space_plant/errors'                  # std_msgs/Float64MultiArray
SPACE_MARKERS = 'space_plant/markers'                # visualization_msgs/MarkerArray

# --- scenario 3: 5-axis hybrid robot -------------------------------------------------------
HYBRID_EFFORT_COMMANDS = 'effort_controller/commands'   # std_msgs/Float64MultiArray
HYBRID_REFERENCE = 'hybrid_controller/reference'        # sensor_msgs/JointState (desired joints)


# --- the operator's view (docs/hmi.md): the view throttle's copies of the 400 Hz streams the HMI
# draws, the newest message of each at the HMI's view rate (hil_nodes.view_throttle), same types.
# In the one-process container the throttle takes the streams from the intra-process bus, so no
# reader outside the process is left on a full-rate stream; `hil run --hmi` remaps the HMI's
# reading of each stream to its copy here.
HMI_JOINT_STATES = 'hmi/joint_states'                        # sensor_msgs/JointState
HMI_TF = 'hmi/tf'                                            # tf2_msgs/TFMessage: the newest transform of every child frame
HMI_FT_WRENCH = 'hmi/ft_sensor/wrench'                       # geometry_msgs/WrenchStamped
HMI_PLANNER_SAFE_REFERENCE = 'hmi/planner/safe_reference'    # geometry_msgs/PoseStamped
HMI_KINEMATICS_TCP_POSE = 'hmi/kinematics/tcp_pose'          # geometry_msgs/PoseStamped
HMI_SPACE_EE_POSE = 'hmi/space_plant/ee_pose'                # geometry_msgs/PoseStamped
# full-rate stream -> its throttled copy (space_plant/ee_setpoint is not one: the operator's own
# command, a few messages a run, read as it is)
VIEW_STREAMS = {JOINT_STATES: HMI_JOINT_STATES, TF: HMI_TF, FT_WRENCH: HMI_FT_WRENCH,
                PLANNER_SAFE_REFERENCE: HMI_PLANNER_SAFE_REFERENCE, KINEMATICS_TCP_POSE: HMI_KINEMATICS_TCP_POSE,
                SPACE_EE_POSE: HMI_SPACE_EE_POSE}


def controller_command_topic(controller: str, trajectory: bool) -> str:
    """A ros2_control controller's command topic (its ``~/joint_trajectory`` or ``~/commands``),
    relative as the controller's own name is, e.g. ``hexapod_controller/joint_trajectory`` =
    HEXAPOD_JOINT_TRAJECTORY."""
    return f'{controller.strip("/")}/' + ('joint_trajectory' if trajectory else 'commands')


def node_service(node_name: str, service: str) -> str:
    """A standard service of a node of the graph (``~/<service>``: parameters, lifecycle), relative
    (the graph's nodes share one namespace), e.g. ``reference_source/set_parameters``."""
    return f'{node_name.strip("/")}/{service}'


def lifecycle_service(node_name: str, service: str) -> str:
    """Standard lifecycle service of a node of the graph, e.g. ``planner/change_state``."""
    return node_service(node_name, service)


# Topics every node (or several nodes) publishes, from any process: heard over DDS even inside
# the one-process container (hil_nodes.runtime.intra_process serves only single-producer streams: a
# subscription it serves has no DDS reader and would not hear a producer in another process).
SHARED_TOPICS = frozenset({DIAGNOSTICS, HIL_HEARTBEAT, HIL_EVENTS, HIL_PROCESS_EXIT})


# --- names under a namespace (pure: no rclpy; rcl's expansion of a plain name) -----------------

def namespace(ns: str | None) -> str:
    """A namespace as rcl holds it, without the root's slash: '' (the root) or '/a/b'."""
    parts = [p for p in str(ns or '').split('/') if p]
    return '/' + '/'.join(parts) if parts else ''


def resolve(name: str, ns: str = '') -> str:
    """``name`` resolved in namespace ``ns`` as rcl expands a plain name (no ``~``, no
    substitution, no remapping): an absolute name stays, a relative one goes under ``ns``."""
    return name if name.startswith('/') else f'{namespace(ns)}/{name}'


def at_root(name: str) -> str:
    """The name a topic has at the root namespace, e.g. '/ft_sensor/wrench' for FT_WRENCH: the
    key of a topic in bags, accounting and reports, whatever namespace the run had."""
    return resolve(name, '')


def strip_namespace(resolved: str, ns: str) -> str:
    """The inverse of ``resolve`` for a recorded name: '/rig_a/ft_sensor/wrench' in '/rig_a' ->
    '/ft_sensor/wrench' (the clock remapped under the namespace too); a name outside the
    namespace is returned as it is."""
    prefix = namespace(ns)
    if prefix and resolved.startswith(prefix + '/'):
        return resolved[len(prefix):]
    return resolved


# Every name above at the root ('/ft_sensor/wrench' for FT_WRENCH): how bags, accounting and
# reports key topics (read through hil_nodes.recorder.bag, which strips a run's namespace).
ROOT = SimpleNamespace(**{k: at_root(v) for k, v in dict(globals()).items() if k.isupper() and isinstance(v, str)})
