"""Every topic and service name of hil_suite, in one place (a contract: README "Topics").

Nodes use these constants and nothing else; remap on the command line or in
config/systems/*.yaml if a lab needs other names.
"""

# --- infrastructure -------------------------------------------------------------------
CLOCK = '/clock'                                   # rosgraph_msgs/Clock, owned by the mock hardware in simulation
ROBOT_DESCRIPTION = '/robot_description'           # std_msgs/String, transient local
DIAGNOSTICS = '/diagnostics'                       # diagnostic_msgs/DiagnosticArray, every node's status
JOINT_STATES = '/joint_states'                     # sensor_msgs/JointState, from the (mock) hardware
TF = '/tf'                                         # tf2_msgs/TFMessage: platform pose (FK), joint and leg frames
TF_STATIC = '/tf_static'                           # tf2_msgs/TFMessage, transient local: F/T sensor, fixed joints, mounts

# --- supervisor / HIL modes ------------------------------------------------------------
HIL_MODE = '/hil/mode'                             # std_msgs/String, latched (transient local): current HIL mode
HIL_FRAME = '/hil/frame'                           # std_msgs/Header per high-level frame: stamp = frame time, frame_id = mode
HIL_EVENTS = '/hil/events'                         # diagnostic_msgs/DiagnosticArray: progress events of the motion side
HIL_HEARTBEAT = '/hil/heartbeat'                   # std_msgs/Header: bond-style liveness, frame_id = node name
HIL_START = '/hil/start'                           # std_srvs/Trigger
HIL_STOP = '/hil/stop'                             # std_srvs/Trigger
HIL_RESET = '/hil/reset'                           # std_srvs/Trigger
HIL_ESTOP = '/hil/estop'                           # std_srvs/Trigger
HIL_SHUTDOWN = '/hil/shutdown'                     # std_srvs/Trigger: deactivate + clean up managed nodes in reverse order
HIL_PROCESS_EXIT = '/hil/process_exit'             # diagnostic_msgs/DiagnosticArray from the launcher: one status per node whose
                                                   # process ended (name = node, hardware_id = process, message = how)
HIL_CLOCK_PING = '/hil/clock_ping'                 # sensor_msgs/TimeReference between the parts' launchers (hosts): the
HIL_CLOCK_PONG = '/hil/clock_pong'                 # clock offset and round trip of each host (cli/part_clock.py)

# --- scenario 1: Hexafloat ---------------------------------------------------------------
MOCK_FT_WRENCH = '/mock_ft/wrench'                 # geometry_msgs/WrenchStamped: load profile of the mock sensor (counts-free, N / N m)
FT_WRENCH_RAW = '/ft_sensor/wrench_raw'            # geometry_msgs/WrenchStamped, SI, biased, unfiltered
FT_WRENCH = '/ft_sensor/wrench'                    # geometry_msgs/WrenchStamped, filtered + compensated
FT_BIAS = '/ft_sensor/bias'                        # std_srvs/Trigger: software tare
JOYSTICK_WRENCH = '/joystick/wrench'               # geometry_msgs/WrenchStamped: the operator's force joystick (HMI drag
                                                   # handle or gamepad, or a lab joystick node), added to the simulated
                                                   # sensor's load by ft_sensor, limited in magnitude and rate; frame_id =
                                                   # the sensor frame ('' too) or ft_sensor's base_frame_id
ADMITTANCE_REFERENCE = '/admittance/reference'     # geometry_msgs/PoseStamped
ADMITTANCE_TWIST = '/admittance/twist'             # geometry_msgs/TwistStamped
ADMITTANCE_ACCEL = '/admittance/accel'             # geometry_msgs/AccelStamped
ADMITTANCE_RESET = '/admittance/reset'             # std_srvs/Trigger
PLANNER_SAFE_REFERENCE = '/planner/safe_reference' # geometry_msgs/PoseStamped
PLANNER_SAFE_TWIST = '/planner/safe_twist'         # geometry_msgs/TwistStamped
PLANNER_EVENTS = '/planner/events'                 # diagnostic_msgs/DiagnosticArray
PLANNER_MARKERS = '/planner/workspace_markers'     # visualization_msgs/MarkerArray
HEXAPOD_JOINT_TRAJECTORY = '/hexapod_controller/joint_trajectory'  # trajectory_msgs/JointTrajectory (ros2_control JTC)
KINEMATICS_TCP_POSE = '/kinematics/tcp_pose'       # geometry_msgs/PoseStamped, estimated by forward kinematics
KINEMATICS_MARKERS = '/kinematics/markers'         # visualization_msgs/MarkerArray: legs and platform
KINEMATICS_FK_REQUEST = '/kinematics/forward/request'    # sensor_msgs/JointState: FK query, header.stamp = correlation id
KINEMATICS_FK_RESPONSE = '/kinematics/forward/response'  # geometry_msgs/PoseStamped, request's stamp; frame_id 'error: ...' + NaN if none
KINEMATICS_IK_REQUEST = '/kinematics/inverse/request'    # geometry_msgs/PoseStamped: IK query, header.stamp = correlation id
KINEMATICS_IK_RESPONSE = '/kinematics/inverse/response'  # sensor_msgs/JointState, request's stamp; frame_id 'error: ...' + NaN if none

# --- scenario 2: space manipulator on the iiwa -------------------------------------------
IIWA_JOINT_TRAJECTORY = '/joint_trajectory_controller/joint_trajectory'  # trajectory_msgs/JointTrajectory (ros2_control JTC; /lbr/... in hardware mode)
SPACE_SATELLITE_ODOM = '/space_plant/satellite_odom'  # nav_msgs/Odometry
SPACE_EE_POSE = '/space_plant/ee_pose'               # geometry_msgs/PoseStamped, inertial frame
SPACE_EE_SETPOINT = '/space_plant/ee_setpoint'       # geometry_msgs/PoseStamped
SPACE_ERRORS = '/space_plant/errors'                 # std_msgs/Float64MultiArray
SPACE_MARKERS = '/space_plant/markers'               # visualization_msgs/MarkerArray

# --- scenario 3: 5-axis hybrid robot -------------------------------------------------------
HYBRID_EFFORT_COMMANDS = '/effort_controller/commands'  # std_msgs/Float64MultiArray
HYBRID_REFERENCE = '/hybrid_controller/reference'       # sensor_msgs/JointState (desired joints)


def controller_command_topic(controller: str, trajectory: bool) -> str:
    """A ros2_control controller's command topic (its ``~/joint_trajectory`` or ``~/commands``),
    e.g. ``/hexapod_controller/joint_trajectory`` = HEXAPOD_JOINT_TRAJECTORY."""
    return f'/{controller.strip("/")}/' + ('joint_trajectory' if trajectory else 'commands')


def lifecycle_service(node_name: str, service: str) -> str:
    """Standard lifecycle service of a node, e.g. ``/planner/change_state``."""
    return f'/{node_name.strip("/")}/{service}'

# Topics every node (or several nodes) publishes, from any process: heard over DDS even inside
# the one-process container (hil_nodes.runtime.intra_process serves only single-producer streams: a
# subscription it serves has no DDS reader and would not hear a producer in another process).
SHARED_TOPICS = frozenset({DIAGNOSTICS, HIL_HEARTBEAT, HIL_EVENTS, HIL_PROCESS_EXIT})
