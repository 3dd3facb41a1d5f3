"""``simulator`` node: runs a ``Simulator`` and talks REP-103/REP-105 ROS.

Parameters (``--ros-args -p name:=value`` or ``--params-file``):

- ``description`` (``bluerov2``): a description file (.yaml, .urdf, .xacro) or a shipped
  config's name; vehicles start at the description's initial pose.
- ``physics_rate`` (Hz, 500), ``publish_rate`` (Hz, 50), ``clock_rate`` (Hz, 200: /clock when
  ``use_sim_time`` is true; ArduSub's loop rate, so that at 1 kHz physics /clock rides on the
  autopilot's events instead of cutting the compiled steps at other instants; like
  ``autopilot_rate`` it is rounded to a whole number of physics steps, 250 Hz at 500 Hz),
  ``real_time_factor`` (1.0; 0 = as fast as possible).
- ``integrator`` (``rk4``): the step, ``rk4`` (Runge-Kutta-Munthe-Kaas, four evaluations of
  the dynamics) or ``semi_implicit_euler`` (one evaluation: about 1.5 times the node's speed
  for the Heavy with the Reach Alpha 5 at 1 kHz; docs/performance.md gives its accuracy).
- ``frame_id`` (``odom``), ``frame_prefix`` (``""``, prepended to every TF frame, for several
  simulator nodes in one graph).
- ``world_frame`` (``map``; ``""``: none): a world frame shared by every simulator node, not
  prefixed; each node publishes the static transform from it to its own ``odom``, placed by
  ``world_offset`` = [x, y, yaw] (m, m, rad, ENU; default [0, 0, 0]), so that vehicles
  simulated in separate nodes appear together in RViz or Foxglove. The depth axis is shared:
  z = 0 is the water surface in every ``odom``.
- ``local_position_frame_id`` and ``local_position_child_frame_id`` (``""``: the world frame
  and the vehicle's base_link, prefix included), as MAVROS's local_position
  ``frame_id`` / ``tf.child_frame_id``: the frames that stamp ``mavros/local_position/*``,
  whose pose is the vehicle's pose in the world frame.
- ``command_timeout`` (s, 0.5): an input older than this is dropped (thrusters to 1500 us,
  joints to zero effort, wrench to zero) with one warning.
- ``publish_joint_wrenches`` (false): also publish every joint's reaction wrench.
- ``ardusub_frame`` (``auto``): the emulated ArduSub that flies each vehicle behind a
  MAVROS-compatible interface (``uvms_sim.ros.mavros_shim``): ``vectored``, ``vectored_6dof``,
  ``bluerov1``, ``auto`` (from the thrusters' motor numbers: 6 -> vectored, 8 ->
  vectored_6dof) or ``none`` (no autopilot: ``thrusters/pwm`` drives the thrusters).
  ``mavros_namespace`` (``mavros``) is where its topics live; ``autopilot_rate`` (Hz, 200)
  is how often the emulated ArduSub runs its loop (its outputs are held in between).
- ``battery_voltage`` (V; 0: the description's): the supply voltage of the thrusters modelled
  from Blue Robotics' T200 tables (preset ``t200``, 10-20 V); ``ros2 param set`` changes it
  while the simulation runs (a value outside 10-20 V is refused; 0 puts the description's back).

Names are checked at start: ``mavros_namespace`` must be a ROS namespace, the frame ids TF frame
ids (no spaces, not starting with "/"; ``frame_id`` not empty), and ``world_frame`` must not be
the odometry frame; a bad one stops the node with one line naming it. While running, only
``battery_voltage`` and the reels' ``tethers.*`` change; every other parameter, and
``use_sim_time``, is refused with the reason. A set of several (``ros2 param load``, an atomic
set) is checked whole before any is applied: all or none.
- ``marker_rate`` (Hz of simulated time, 10; 0: off): how often at most ``markers`` (thrust
  arrows, water surface, seabeds, current) are published for RViz (at the first publish period
  each 1/``marker_rate`` s), and at most 30 times a wall-clock second when the simulation runs
  faster than real time; ``robot_description`` is published once.
- ``sensor_noise`` (true), ``sensor_seed`` (0): the noisy sensors a description declares
  (``vehicles[].sensors``: IMU, pressure, magnetometer, altimeter, DVL) publish on
  ``sensors/<name>`` (``uvms_sim.ros.sensor_topics``), deterministic for a seed; false: exact
  readings on the same topics.
- ``web_view_port`` (0: off; e.g. 9090): the browser view (``uvms_sim.viz.rerun_view``): Rerun's
  web viewer served on this port (its data stream on the next one), at most ``web_view_rate``
  (Hz, 30) frames per simulated second and 5 per wall-clock second; the address is logged at
  start. ``web_view_bind`` (``127.0.0.1``: this machine only) is the address both ports listen
  on (``0.0.0.0``: every network interface, so anyone who reaches this machine sees the
  simulation: docs/views.md); ``web_view_camera`` (``world``) is the 3D view shown first:
  ``world`` (fixed in the world) or ``vehicle`` (fixed to the first vehicle).
- ``ping1d_port``, ``ping360_port`` (0: off; Blue Robotics' defaults are 9090, as BlueOS
  serves its first Ping1D, and 12345, the Ethernet Ping360's), ``ping_bind``
  (``127.0.0.1``): the first vehicle's Ping2 and a Ping360 as Ping protocol devices on UDP
  (``uvms_sim.ros.ping``, ``uvms_sim.hil.ping_devices``) for ping-viewer, BlueOS, the
  ping360_sonar driver or ``bluerobotics-ping``, their echoes from the scene (docs/ping.md);
  the web view's port must then be another one than 9090.
- ``video_port`` (0: off; QGroundControl's default is 5600), ``video_host`` (``127.0.0.1``):
  one camera's images as H.264 over RTP to ``video_host:video_port``, where QGroundControl's
  "UDP h.264 Video Stream" (or BlueOS's, GStreamer's, FFmpeg's) receives it
  (``uvms_sim.viz.video``): the camera ``video_camera`` (``""``: the first one a description
  declares; or ``<name>``, ``<vehicle>/<name>``); its SDP is written to ``video_sdp`` (``""``:
  ``uvms_sim_video_<port>.sdp`` in the temporary directory), logged at start. The default
  host is this machine only; a ground station's address sends the images out on the network.
- ``mount_tilt_servo`` (10), ``lights_servo`` (9), ``mount_tilt_pwm`` ([1100, 1900] us): with
  ArduSub SITL, the servo outputs that drive the cameras' tilt and the lights (ArduSub's
  defaults in SITL and on a Pixhawk; 16 and 13 on a Navigator; 0: none) and the tilt servo's
  PWM at -max_tilt and +max_tilt (``uvms_sim.actuators.camera_mount``: set ArduSub's
  MNT1_PITCH_MIN/MAX to the camera's -max_tilt/+max_tilt in degrees).
- ``sitl_port`` (0: off; ArduPilot's is 9002), ``sitl_bind`` (``127.0.0.1``): be the physics
  of a real ArduSub SITL (``uvms_sim.hil.sitl_json``; with several vehicles with thrusters,
  one SITL instance per vehicle, instance k on ``sitl_port + 10 k`` as ``sim_vehicle.py -I k``
  sends: ``uvms_sim.hil.sitl_multi``): the simulation then steps in lock-step with SITL's
  frames (``SimulationLoop.run_lockstep``: its own pacing, pause/step, command timeouts and
  the emulated ArduSub are off) while the node keeps publishing odometry, TF, the declared
  sensors, markers and the browser view of the same vehicles in SITL's time.
- ``arm_controllers`` (``[joint_state_broadcaster, joint_trajectory_controller,
  gripper_controller]``): for a Reach Alpha 5, the ros2_control controllers that are active
  (``uvms_sim.ros.arm_controllers``: also ``forward_position_controller``,
  ``forward_velocity_controller``, ``forward_effort_controller``); two that claim one joint stop
  the node with an error, as the controller manager refuses them. ``controller_rate`` (Hz of
  simulated time, 100: the controller manager's default ``update_rate``) is how often they
  update (sample the trajectory, set the servos' setpoints, check the tolerances); the
  servos' firmware loops run at every physics step.
- ``tethers.<name>.length`` and ``tethers.<name>.speed`` (m, m/s; one pair per tether of the
  description, its ``length`` and ``reel.speed`` by default): the reel pays out or hauls in to
  that length at that speed, set at start or with ``ros2 param set`` while running
  (``uvms_sim.ros.water_topics``).

Topics (relative: they follow the node's namespace and remaps; with several free vehicles in
one description each vehicle's topics are under ``<vehicle>/``):

- in: ``thrusters/pwm`` (std_msgs/UInt16MultiArray: one PWM per thruster in servo order,
  element k = SERVO k+1; extra trailing channels, as in a servo output log, are ignored),
  ``joint_commands`` (sensor_msgs/JointState by name: ``effort`` sets torques; else
  ``position`` or ``velocity`` set PID targets; a Reach Alpha 5's joints run its firmware
  servos instead, ``uvms_sim.actuators.servo``), ``cmd_wrench`` (geometry_msgs/WrenchStamped
  on base_link, FLU), ``set_pose`` (geometry_msgs/PoseStamped in odom, ENU: teleport,
  velocities zeroed, simulated time running on).
- out: ``odom`` (nav_msgs/Odometry, odom ENU / base_link FLU), ``imu`` (sensor_msgs/Imu,
  specific force), ``pressure`` (sensor_msgs/FluidPressure, absolute, Pa), ``depth``
  (std_msgs/Float64, m down), ``thrusters/thrust`` (std_msgs/Float64MultiArray, N, servo
  order), ``thrusters/current`` (std_msgs/Float64MultiArray, A, servo order: the tables'
  supply current of each T200 at its command), ``joint_states``, ``/tf`` and ``/tf_static``
  (odom -> base_link -> every link; odom_ned, base_link_frd), ``robot_description``
  (std_msgs/String, transient local: the URDF with visuals, links named as the TF frames),
  ``markers`` (visualization_msgs/MarkerArray), ``/clock`` with ``use_sim_time``, and with
  ``publish_joint_wrenches`` ``joint_wrenches/<joint>`` (geometry_msgs/WrenchStamped, the
  force the parent applies to the child link, in the child link's axes); with tethers
  ``tether/<name>/path`` (nav_msgs/Path), ``tether/<name>/tension`` (std_msgs/Float64MultiArray,
  N per segment from the reel) and ``tether/<name>/length`` (std_msgs/Float64, m); with waves
  ``waves/elevation`` (std_msgs/Float64MultiArray, m above the mean surface over each vehicle);
  with cameras in the description ``camera/<name>/image_raw``, ``camera_info`` and ``depth``
  (``uvms_sim.ros.camera_topics``; in: ``camera/<name>/tilt``); with imaging sonars
  ``sensors/<name>`` (marine_acoustic_msgs/ProjectedSonarImage, ``uvms_sim.ros.sonar_topics``).
- a Reach Alpha 5's controllers (``uvms_sim.ros.arm_controllers``):
  ``joint_trajectory_controller/follow_joint_trajectory`` (control_msgs/FollowJointTrajectory),
  ``joint_trajectory_controller/joint_trajectory``, ``joint_trajectory_controller/controller_state``,
  ``joint_trajectory_controller/query_state``, ``forward_<position|velocity|effort>_controller/commands``
  (std_msgs/Float64MultiArray), ``gripper_controller/gripper_cmd``
  (control_msgs/ParallelGripperCommand).
- services: ``reset`` (std_srvs/Trigger: back to the initial state, inputs neutral, simulated
  time running on; objects spawned at run time back where they were spawned), ``pause``
  (std_srvs/SetBool), ``step`` (std_srvs/Trigger: one publish period while paused).
- the standard simulation interfaces (``simulation_interfaces``; ``uvms_sim.ros.entities``), under
  the node's name: ``~/spawn_entity`` (a free object: a ``scene.objects`` entry as YAML in
  ``resource_string``, or a .yaml file as ``uri``, at ``initial_pose``), ``~/delete_entity``,
  ``~/set_entity_state``, ``~/get_entity_state``, ``~/get_entities``, ``~/get_entities_states``,
  ``~/get_entity_info``, ``~/get_simulator_features``; poses in ``odom`` (ENU) or the world
  frame. Each object is on TF as ``<name>`` (FLU, from odom) and ``<name>_frd``, in
  ``robot_description`` and in the views.
"""

from __future__ import annotations

import argparse
import difflib
import ipaddress
import logging
import os
import signal
import sys
import tempfile
import threading
from dataclasses import dataclass
from functools import partial

import numpy as np
import rclpy
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped, WrenchStamped
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.clock import ROSClock
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.time import Time as RclpyTime
from rclpy.utilities import remove_ros_args
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool, Trigger
from tf2_msgs.msg import TFMessage
from transforms3d.quaternions import axangle2quat, qmult, rotate_vector

from .. import __version__, frames
from ..actuators.joints import JointMotors
from ..actuators.servo import JointServos, alpha5_specs, hold_loaded
from ..dynamics.compiled import compiled as kernels_compiled
from ..dynamics.rnea import rnea
from ..log import Throttle
from ..log import logger as core_logger
from ..loop import Cadence, SimulationLoop, steps_per
from ..model import ConfigError, load
from ..model.configs import resolve
from ..model.kinematics import placements
from ..sensors import current_accelerations
from ..sensors.estimator import Estimator
from ..sensors.suite import SensorSuite
from ..simulator import Simulator
from ..spatial import Array
from ..viz.web_front import ServeError
from . import messages
from .message_kernels import tf_numbers
from .message_kernels import warm_up as warm_up_messages
from .messages import wanted
from .parameters import PARAMETERS, check_frames, check_parameter
from .scene import Scene
from .sensor_topics import SensorTopics
from .serialized import Serialized
from .vehicle_io import VehicleIO
from .water_topics import WaterTopics, tether_parameter


@dataclass(frozen=True)
class TfLayout:
    """The /tf message's tables (``SimulatorNode._tf_buffers``), kept as one object so that a
    publish reads all of one model's: the model's coordinates and bodies they index, the rows'
    origins and quaternions, the vehicles whose tree quaternion is not the identity
    (``general``) and the moving joints neither revolute nor prismatic (``other``, row and
    body), both done in Python, ``message_kernels.tf_numbers``' tables, and its output."""

    nq: int
    nbodies: int
    p: np.ndarray
    quat: np.ndarray
    general: list[int]
    other: list[tuple[int, int]]
    tables: tuple
    values: np.ndarray


def stamp_parts(t: float) -> tuple[int, int]:
    """``(sec, nanosec)`` of simulated time t (s), rounded to the nanosecond: every stamp, the
    controllers' clock and /clock split it so."""
    return divmod(round(t * 1e9), 1_000_000_000)


MARKER_WALL_RATE = 30.0  # Hz: markers at most this often in wall-clock time, however fast the simulation runs


class RosLogHandler(logging.Handler):
    """Forwards the physics core's log records (logger ``uvms_sim``) to a node's ROS logger."""

    def __init__(self, node: Node) -> None:
        super().__init__(logging.WARNING)
        self.node = node

    def emit(self, record: logging.LogRecord) -> None:
        log = self.node.get_logger()
        (log.error if record.levelno >= logging.ERROR else log.warning)(record.getMessage())


class SimulatorNode(Node):
    """ROS face of a ``Simulator`` (see module doc)."""

    def __init__(self, **kwargs) -> None:
        # every override is declared as given, so that the names not in PARAMETERS can be found
        # through the public API (and refused by name) before they are undeclared again; rclpy
        # cannot declare an empty name, which only the Python API lets through
        given = kwargs.pop("parameter_overrides", None) or []
        named = [p for p in given if p.name]
        super().__init__(
            "simulator",
            parameter_overrides=named,
            automatically_declare_parameters_from_overrides=True,
            **kwargs,
        )
        if len(named) < len(given):
            self.get_logger().warning("unknown parameter '' ignored")
        self.log_handler = RosLogHandler(self)  # the core's warnings (log.Throttle) into the ROS log
        core_logger.addHandler(self.log_handler)
        get = self._declare_parameters().__getitem__
        self.description_path = resolve(get("description"))
        self.system = load(self.description_path)
        self.rates = {
            k: float(get(k)) for k in ("physics_rate", "publish_rate", "clock_rate", "autopilot_rate")
        }
        if not kernels_compiled():
            self.get_logger().info(
                "compiling the physics kernels: the first start after an install or an update takes about "
                "a minute on 2 cores before the first odometry ('uvms-sim kernels' does it ahead of time)"
            )
        self.sim = Simulator.from_system(self.system, get("integrator"))
        self.motors = self._joint_actuators()
        self.sim.joint_motors = self.motors
        self.dt = 1.0 / float(get("physics_rate"))
        # the loop owns simulated time, pacing, timeouts and step grouping; this node converts
        # messages into inputs (under loop.lock) and publishes from the loop's hooks
        self.loop = SimulationLoop(
            self.sim,
            self.dt,
            publish_every=steps_per(float(get("publish_rate")), self.dt),
            clock_every=steps_per(float(get("clock_rate")), self.dt),
            autopilot_every=steps_per(float(get("autopilot_rate")), self.dt),
            controller_every=steps_per(float(get("controller_rate")), self.dt),
            real_time_factor=float(get("real_time_factor")),
            timeout=float(get("command_timeout")),
        )
        self.lock = self.loop.lock
        self.frame_id = get("frame_prefix") + get("frame_id")
        self.world_frame = get("world_frame")
        x, y, yaw = get("world_offset")
        # odom in the world frame (ENU): its origin, and its rotation about z
        self.world_offset = np.array([x, y, 0.0]), axangle2quat([0.0, 0.0, 1.0], yaw)
        self.sim_time = bool(get("use_sim_time"))
        self._stamp: tuple[float, Time] = (float("nan"), Time())  # stamp_at's last (NaN: none yet)
        self.throttle = Throttle(1.0, self.get_logger())
        self.apply_voltage(float(get("battery_voltage")))
        self.add_on_set_parameters_callback(self.on_parameters)
        self.sitl = None
        if int(get("sitl_port")) > 0:
            from ..hil.sitl_multi import sitl_backend

            self.sitl = sitl_backend(self.sim, bind=get("sitl_bind"), port=int(get("sitl_port")))
            self.sitl.max_step = self.dt
        vehicle_frames = self._frames()
        many = len(vehicle_frames) > 1
        self.vehicles = [VehicleIO(self, vf, f"{vf.name}/" if many else "") for vf in vehicle_frames]
        self.roots = [io.frames.root for io in self.vehicles]
        self._interfaces(bool(get("publish_joint_wrenches")))
        from .entities import Entities

        self.entities = Entities(self)
        self.water = WaterTopics(self, self.sim, self.frame_id, [io.frames.root for io in self.vehicles])
        self.water.declare(self._reel_overrides)
        self.joint_deadline = self.loop.deadline(self.joints_expired)
        self.recoveries = 0
        self.failed: Exception | None = None
        self.state_cadence = Cadence(0.2)  # mavros/state at 5 Hz (at most: once per publish period)
        self.loop.on_autopilot = [io.shim.update for io in self.vehicles if io.shim is not None]
        self.arm = None
        if isinstance(self.motors, JointServos):  # control_msgs only for an arm's controllers
            from .arm_controllers import ArmControllers

            self.arm = ArmControllers(
                self, self.motors, self.lock, self.controller_time, get("arm_controllers"), self.sim_time
            )
            self.loop.on_controllers.append(self.arm.update)
        self.loop.on_clock = self.clock_tick if self.sim_time else None
        self.loop.on_publish = self.publish_tick
        self.loop.on_failure = self.recover
        self.sensor_topics: SensorTopics | None = None
        self.estimators: dict[str, Estimator] = {}
        if any(v.sensors for v in self.system.vehicles):
            self._sensors(int(get("sensor_seed")), bool(get("sensor_noise")), get("frame_prefix"))
        self.sonars = None
        if any(s.type == "imaging_sonar" for v in self.system.vehicles for s in v.sensors):
            from .sonar_topics import SonarTopics

            self.sonars = SonarTopics(
                self, self.sim, self.system, self.lock, get("frame_prefix"), self.tf_names,
                bool(get("sensor_noise")), int(get("sensor_seed")),
            )  # fmt: skip
        self.publish_static()
        self._views(get)
        self.cameras = None
        if any(s.type == "camera" for v in self.system.vehicles for s in v.sensors):
            from .camera_topics import CameraTopics

            self.cameras = CameraTopics(
                self, self.sim, self.system, self.lock, get("frame_prefix"), self.tf_names,
                bool(get("sensor_noise")), int(get("sensor_seed")), video=self._video_parameters(get),
                mount=(int(get("mount_tilt_servo")), int(get("lights_servo")), tuple(get("mount_tilt_pwm"))),
                servo_outputs=self.sitl.servo_outputs if self.sitl is not None else self._emulated_servos,
            )  # fmt: skip
        elif self._video_parameters(get) is not None:
            raise ValueError("parameter video_port: the description declares no camera to stream")
        from .ping import ping_servers

        self.ping_servers = ping_servers(
            self.sim, self.system, self.lock, (int(get("ping1d_port")), int(get("ping360_port"))),
            get("ping_bind"), bool(get("sensor_noise")), int(get("sensor_seed")),
        )  # fmt: skip
        # Physics runs in its own thread so that subscriptions are served however fast it
        # steps (a zero-period timer would starve them); ROS callbacks only set inputs.
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run_physics, name="uvms_sim_physics", daemon=True)
        self.thread.start()

    def _emulated_servos(self, vehicle: int) -> tuple[int, ...] | None:
        """The servo PWMs of the emulated ArduSub that drives the description's vehicle
        ``vehicle`` (``mavros_shim``), None when none does."""
        from .mavros_shim import drives

        v = self.system.vehicles[vehicle]
        for io in self.vehicles:
            if io.shim is not None and drives(self.sim.model, v, io.frames.root):
                return io.shim.servo_outputs()
        return None

    def _video_parameters(self, get) -> dict | None:
        """The video stream's parameters (``video_*``) checked, or None when it is off;
        ValueError in one line for a port this node listens on itself (on loopback) or an SDP
        path in no directory."""
        port = int(get("video_port"))
        if not port:
            return None
        host = get("video_host")
        web = int(get("web_view_port"))
        own = {"sitl_port": int(get("sitl_port")), "ping1d_port": int(get("ping1d_port")),
               "ping360_port": int(get("ping360_port")), "web_view_port": web,
               "web_view_port + 1 (the browser view's data)": web + 1 if web else 0}  # fmt: skip
        if ipaddress.ip_address(host).is_loopback:
            for name, taken in own.items():
                if taken == port:
                    raise ValueError(
                        f"parameter video_port: {port} is this node's own {name}: the video would go into it"
                    )
        path = get("video_sdp") or os.path.join(tempfile.gettempdir(), f"uvms_sim_video_{port}.sdp")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise ValueError(f"parameter video_sdp: {path!r} is in no directory ({folder!r} does not exist)")
        return {"camera": get("video_camera"), "host": host, "port": port, "sdp": path}

    def _frames(self) -> list[messages.VehicleFrames]:
        """The TF names of the simulator's bodies now (``tf_names``, ``tree_quats``), the frames
        of its free objects (``object_frames``); returns the free vehicles' frames."""
        system = self.sim.system
        assert system is not None
        self.tf_names, free = messages.tf_names(system, self.get_parameter("frame_prefix").value)
        self.tree_quats = messages.tree_quaternions(self.sim.model)
        objects = {v.name for v in system.vehicles if v.kind == "object"}
        self.object_frames = [vf for vf in free if vf.name in objects]
        return [vf for vf in free if vf.name not in objects]

    def model_changed(self) -> None:
        """After an object was added or removed (``Simulator.add_object``, ``remove_object``; the
        loop lock held): the TF names and messages, ``robot_description``, the markers, the
        browser view and the static transforms follow the simulator's new model (the vehicles'
        bodies keep their indices: objects come after them)."""
        self._frames()
        self._tf_buffers()
        system = self.sim.system
        assert system is not None
        self.scene.rebuild(system)
        if self.view is not None:
            self.view.rebuild(system)
        self.publish_static()

    def _tf_buffers(self) -> None:
        """The joints TF carries (the vehicles' and objects' roots aside) and the /tf message of
        them all, serialized once (``serialized.Serialized``: only poses and stamps change): the
        vehicles', the moving joints', the objects'; with the tables of
        ``message_kernels.tf_numbers`` (``TfLayout``), all built before any is kept."""
        model = self.sim.model
        moving = [i for i, j in enumerate(model.joints) if model.parents[i] >= 0 and j.type != "fixed"]
        pairs = [(self.frame_id, io.frames.flu) for io in self.vehicles]
        pairs += [(self.tf_names[model.parents[i]], self.tf_names[i]) for i in moving]
        pairs += [(self.frame_id, vf.flu) for vf in self.object_frames]
        message = TFMessage(transforms=[TransformStamped() for _ in pairs])
        for t, (parent, child) in zip(message.transforms, pairs, strict=True):
            t.header.frame_id, t.child_frame_id = parent, child
        fields = [f"translation.{a}" for a in "xyz"] + [f"rotation.{a}" for a in "xyzw"]
        wire = Serialized(
            message,
            [f"transforms[{k}].transform.{f}" for k in range(len(pairs)) for f in fields],
            [f"transforms[{k}].header.stamp" for k in range(len(pairs))],
        )
        p, quat = np.zeros((len(pairs), 3)), np.zeros((len(pairs), 4))  # origins, [w x y z]
        # the moving joints' rows: the revolute ones in one product (``revolute_rows``), a
        # prismatic one's rotation (its tree's, constant) set here once, the others one at a
        # time (``TfLayout.other``)
        first = len(self.vehicles)
        kind = {k: model.joints[i].type for k, i in enumerate(moving)}
        revolute = [(k, i) for k, i in enumerate(moving) if kind[k] in ("revolute", "continuous")]
        for k, i in enumerate(moving):
            if kind[k] == "prismatic":
                quat[first + k] = self.tree_quats[i]
        other = [
            (first + k, i)
            for k, i in enumerate(moving)
            if kind[k] not in ("revolute", "continuous", "prismatic")
        ]
        # the free roots whose attitude is their joint's quaternion alone (a tree quaternion of
        # identity: every object, and the vehicles as described), the vehicles' origins (the
        # forward pass's), the objects' (q's), the moving joints' origins
        roots = [io.frames.root for io in self.vehicles]
        identity = [k for k, i in enumerate(roots) if np.array_equal(self.tree_quats[i], (1, 0, 0, 0))]
        after = first + len(moving)  # the objects' rows
        objects = [(after + k, model.q_slice(vf.root).start) for k, vf in enumerate(self.object_frames)]
        free = [(k, model.q_slice(roots[k]).start) for k in identity] + objects

        def table(entries: list, width: int) -> np.ndarray:
            return np.array(entries, dtype=np.int64).reshape(-1, width)

        n = len(revolute)
        tables = (
            table(free, 2),
            table(list(enumerate(roots)), 2),
            table(objects, 2),
            table([(first + k, i) for k, i in enumerate(moving)], 2),
            (
                np.array([first + k for k, _ in revolute], dtype=np.int64),
                np.array([model.idx_q[i] for _, i in revolute], dtype=np.int64),
                np.array([model.joints[i].axis for _, i in revolute], dtype=float).reshape(-1, 3),
                np.array([self.tree_quats[i] for _, i in revolute], dtype=float).reshape(-1, 4),
                np.zeros(n),
                np.zeros((n, 4)),
            ),
        )
        general = [k for k in range(len(roots)) if k not in identity]
        self.moving_joints, self.tf_wire = moving, wire
        self.tf = TfLayout(model.nq, model.nbodies, p, quat, general, other, tables, np.zeros(7 * len(pairs)))

    def _joint_actuators(self) -> JointMotors | JointServos | None:
        """The 1-DOF joints' actuators: a Reach Alpha 5's firmware servos
        (``actuators.servo``) when every such joint is an Alpha 5 axis, holding the initial pose
        with its static load taken up; else PID motors (``actuators.joints``); None without."""
        model, q0 = self.sim.model, self.system.initial_q
        if not any(j.nv == 1 for j in model.joints):
            return None
        specs = alpha5_specs(model)
        if specs is None:
            return JointMotors(model, q=q0)
        servos = JointServos(model, specs, q=q0)
        self._preload(servos, q0)
        return servos

    def _preload(self, servos: JointServos, q: np.ndarray) -> None:
        """The servos hold ``q`` carrying its static load (RNEA at rest)."""
        hold_loaded(servos, self.sim.model, self.sim.env, q)

    def _views(self, get) -> None:
        """What viewers see: the RViz markers (``scene``, at ``marker_rate``) and the browser
        view (``web_view_port``: Rerun's web viewer)."""
        self.scene = Scene(self, self.system, get("frame_prefix"), self.frame_id)
        marker_rate = float(get("marker_rate"))
        self.marker_cadence = Cadence(1.0 / marker_rate, 1.0 / MARKER_WALL_RATE) if marker_rate else None
        self.view = None
        from ..viz.rerun_view import RerunView, check_camera
        from ..viz.web_front import check_bind

        check_bind(get("web_view_bind")), check_camera(get("web_view_camera"))  # also when off
        if int(get("web_view_port")):
            self.view = RerunView(
                self.system,
                web_port=int(get("web_view_port")),
                rate=float(get("web_view_rate")),
                bind=get("web_view_bind"),
                camera=get("web_view_camera"),
            )

    def _interfaces(self, joint_wrenches: bool) -> None:
        """The node's own publishers, subscription and services (the vehicles' are VehicleIO's)."""
        model = self.sim.model
        self.tf_pub = self.create_publisher(TFMessage, "/tf", 10)
        self._tf_buffers()
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.tf_static_pub = self.create_publisher(TFMessage, "/tf_static", latched)
        self.clock_pub = self.create_publisher(Clock, "/clock", 10) if self.sim_time else None
        self.clock_wire = Serialized(Clock(), (), ("clock",))  # only the time changes
        if self.sim_time:
            self._own_clock()
        self.joint_pub = self.create_publisher(JointState, "joint_states", 10)
        self.create_subscription(JointState, "joint_commands", self.on_joint_commands, 10)
        self.wrench_pubs = {}
        if joint_wrenches:
            for i, b in enumerate(model.bodies):
                if model.parents[i] >= 0:
                    self.wrench_pubs[i] = self.create_publisher(
                        WrenchStamped, f"joint_wrenches/{b.joint_name}", 10
                    )
        self.create_service(Trigger, "reset", self.on_reset)
        self.create_service(SetBool, "pause", self.on_pause)
        self.create_service(Trigger, "step", self.on_step)

    def _declare_parameters(self) -> dict:
        """Declare PARAMETERS, warn about unknown names, and return the checked values."""
        # the overrides: what is declared now, but for the parameters every rclpy node declares
        given = set(self.list_parameters([], 0).names) - {"use_sim_time", "start_type_description_service"}
        dynamic = ParameterDescriptor(dynamic_typing=True)  # typed by check_parameter instead
        for name, default in PARAMETERS.items():
            if name in given:  # declared with the override's type: declared again, typed later
                self.undeclare_parameter(name)
            self.declare_parameter(name, default, dynamic)
        # a misspelt name in a params file or on the command line would otherwise be ignored
        # silently; it is named, and undeclared (as is rclpy's qos_overrides, which this node
        # does not take)
        # the reels' parameters (tethers.<name>.length/speed) are declared once the description,
        # which names the tethers, is loaded (WaterTopics.declare)
        self._reel_overrides = {
            n: self.get_parameter(n).value for n in given if tether_parameter(n) is not None
        }
        for name in sorted(given - PARAMETERS.keys() - self._reel_overrides.keys()):
            if not name.startswith("qos_overrides"):
                hint = difflib.get_close_matches(name, list(PARAMETERS), n=1)
                also = f" (did you mean {hint[0]!r}?)" if hint else ""
                self.get_logger().warning(f"unknown parameter {name!r} ignored{also}")
            self.undeclare_parameter(name)
        for name in self._reel_overrides:
            self.undeclare_parameter(name)
        values = {name: check_parameter(name, self.get_parameter(name).value) for name in PARAMETERS}
        values["use_sim_time"] = self.get_parameter("use_sim_time").value
        check_frames(values)
        return values

    def _sensors(self, seed: int, noise: bool, prefix: str) -> None:
        """The sensor suite, its topics and sample hook; the emulated ArduSub of a vehicle with
        sensors reports what they tell it (an estimator)."""
        suite = SensorSuite(self.system, self.dt, seed=seed, noise=noise)
        self.sensor_topics = SensorTopics(self, self.system, suite, prefix, self.tf_names)
        self.loop.sensor_every = suite.every
        self.loop.on_sensor = self.sensor_tick
        for io in self.vehicles:
            if io.shim is not None:
                mine = [s for s in suite.sensors if s.vehicle == io.frames.name]
                if mine:
                    io.estimator = Estimator(mine, self.sim.env.density, self.sim.env.gravity)
                    self.estimators[io.frames.name] = io.estimator

    # -- helpers ------------------------------------------------------------------------------
    def warn(self, key: str, message: str) -> None:
        """One warning per key per second, with a count of those held back (``log.Throttle``;
        rclpy's own throttle keys on the call site, not on what went wrong)."""
        self.throttle.warn(key, message)

    def _own_clock(self) -> None:
        """This node is the source of /clock: its own ROS clock is set where /clock is published
        instead of through rclpy's /clock subscription, whose callback would otherwise run in
        the executor thread for every /clock message (thousands a second when running faster
        than real time) and take the GIL from the physics thread. rclpy's time source, which
        made that subscription, finds it gone (destroying it again is a no-op)."""
        for sub in list(self.subscriptions):
            if sub.topic_name == "/clock":
                self.destroy_subscription(sub)

    def controller_time(self) -> float:
        """The controllers' clock (s): the node's ROS time, as a controller manager's (with
        ``use_sim_time``, the stamp's seconds and nanoseconds summed as from ``stamp``)."""
        if self.sim_time:
            sec, nanosec = stamp_parts(self.sim.state.t)
            return sec + 1e-9 * nanosec
        stamp = self.stamp()
        return stamp.sec + 1e-9 * stamp.nanosec

    def stamp(self) -> Time:
        return self.stamp_at(self.sim.state.t)

    def stamp_at(self, t: float) -> Time:
        """The stamp of simulated time ``t``: itself with ``use_sim_time``, else the wall clock."""
        if self.sim_time:
            cached = self._stamp  # (t, its stamp): a publish period asks for the same one often
            if cached[0] == t:
                return cached[1]
            sec, nanosec = stamp_parts(t)
            stamp = Time(sec=sec, nanosec=nanosec)
            self._stamp = (t, stamp)  # one assignment: another thread sees the old pair or the new
            return stamp
        return self.get_clock().now().to_msg()

    def summary(self) -> str:
        """One line saying what runs: description, vehicles, DOF, frames, rates and time."""
        vehicles = []
        mavros = self.get_parameter("mavros_namespace").value
        for io in self.vehicles:
            if self.sitl is not None:
                driver = f"ArduSub SITL on {self.get_parameter('sitl_bind').value}:{self.sitl.port}"
            elif io.shim is not None:
                driver = f"emulated ArduSub {io.shim.autopilot.frame} on {io.ns}{mavros}/"
            else:
                driver = f"{io.ns}thrusters/pwm" if io.thrusters else "no thrusters"
            vehicles.append(f"{io.frames.name} ({len(io.thrusters)} thrusters, {driver})")
        r = self.rates
        world = f"{self.world_frame} -> " if self.world_frame else ""
        view = f"; browser view at {self.view.page}{self.view.exposure}" if self.view is not None else ""
        cameras = getattr(self, "cameras", None)
        if cameras is not None and cameras.video is not None and cameras.video_camera is not None:
            video = cameras.video
            where = "" if ipaddress.ip_address(video.host).is_loopback else " (out on the network)"
            camera = cameras.video_camera["name"]
            view += f"; video of camera {camera} to {video.host}:{video.port}{where}, SDP {video.sdp_path}"
        clock_hz = 1.0 / (self.loop.clock_every * self.dt)  # the rate rounded to whole physics steps
        clock = f"simulated time (/clock at {clock_hz:g} Hz)" if self.sim_time else "wall-clock time"
        rtf = self.loop.real_time_factor
        pace = "as fast as possible" if rtf == 0 else f"real-time factor {rtf:g}"
        return (
            f"{self.system.name} from {self.description_path}: {len(self.vehicles)} vehicle(s): "
            f"{', '.join(vehicles)}; {self.sim.model.nv} DOF; TF {world}{self.frame_id} -> "
            f"{', '.join(io.frames.flu for io in self.vehicles)}; physics {r['physics_rate']:g} Hz "
            f"({self.sim.method}), publish {r['publish_rate']:g} Hz; {clock}, {pace}{view}"
        )

    @property
    def initial_q(self) -> np.ndarray:
        """The initial configuration of the bodies the simulator has now: the description's,
        with each object added at run time where it was spawned."""
        system = self.sim.system
        assert system is not None
        return system.initial_q

    def world_pose(self, pose: Array) -> Array:
        """A pose in ``odom`` (``x y z``, then ``x y z w``: ``messages.POSE_FIELDS``'s order)
        expressed in the world frame (``world_offset``); unchanged without a world frame or
        when the two coincide (``world_offset`` zero, as by default)."""
        offset, quat = self.world_offset
        if not self.world_frame or (not offset.any() and quat[0] == 1.0):
            return pose
        out = np.empty(7)
        out[:3] = offset + rotate_vector(pose[:3], quat)
        w = frames.canonical(qmult(quat, [pose[6], pose[3], pose[4], pose[5]]))  # w >= 0, as odom's
        out[3:6], out[6] = w[1:], w[0]
        return out

    def destroy_node(self) -> None:
        core_logger.removeHandler(self.log_handler)
        arm = getattr(self, "arm", None)
        if arm is not None:
            arm.destroy()
        if hasattr(self, "thread"):
            self.stop_event.set()
            if self.thread.is_alive() and threading.current_thread() is not self.thread:
                self.thread.join(timeout=5.0)
        for views in (getattr(self, "cameras", None), getattr(self, "sonars", None)):
            if views is not None:
                views.close()
        for server in getattr(self, "ping_servers", []):
            server.close()
        view = getattr(self, "view", None)
        if view is not None:  # its ports close with the node
            self.view = None
            view.close()
        super().destroy_node()

    def apply_voltage(self, volts: float) -> None:
        """The thrusters' supply voltage (0: keep the description's); ValueError outside the
        T200 tables' 10-20 V or for a system whose thrusters have no voltage model."""
        bank = self.sim.thrusters
        if not hasattr(self, "description_kinds"):
            self.description_kinds = list(bank.kinds) if bank is not None else []
        if volts == 0.0:  # back to the description's
            if bank is not None:
                with self.lock:
                    bank.kinds = list(self.description_kinds)
            return
        if bank is None or np.all(np.isnan(bank.voltage)):
            raise ValueError("battery_voltage needs thrusters modelled from the T200 tables (preset t200)")
        with self.lock:
            bank.set_voltage(volts)

    def on_parameters(self, params) -> SetParametersResult:
        """Run-time changes: ``battery_voltage`` (0: the description's again) and the reels'
        ``tethers.*`` are applied; the others take effect at start only and are refused while
        running, ``use_sim_time`` too (the clock of every stamp would change under the
        subscribers). A set of several is checked whole before any is applied (all or none)."""
        if not hasattr(self, "thread"):  # declaring at start: checked by _declare_parameters
            return SetParametersResult(successful=True)
        voltage = None
        tethers = []
        for p in params:
            if tether_parameter(p.name) is not None:
                tethers.append(p)
            elif p.name == "battery_voltage":
                try:
                    voltage = check_parameter(p.name, p.value)
                except (TypeError, ValueError) as exc:
                    return SetParametersResult(successful=False, reason=str(exc))
            elif p.name == "use_sim_time":
                return SetParametersResult(
                    successful=False,
                    reason="use_sim_time is read at start only (the node's clock and /clock are chosen then)",
                )
            elif p.name in PARAMETERS:
                return SetParametersResult(successful=False, reason=f"{p.name} is read at start only")
        for p in tethers:
            reason = self.water.check_parameter(p.name, p.value)
            if reason is not None:
                return SetParametersResult(successful=False, reason=reason)
        try:  # the last check: the bank changes all its thrusters or none
            if voltage is not None:
                self.apply_voltage(voltage)
        except (TypeError, ValueError) as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        for p in tethers:
            self.water.on_parameter(p.name, p.value)
        return SetParametersResult(successful=True)

    # -- inputs ---------------------------------------------------------------------------------
    def on_joint_commands(self, msg: JointState) -> None:
        if self.motors is None:
            self.warn("joints", "joint_commands ignored: this system has no 1-DOF joints")
            return
        for field in ("effort", "position", "velocity"):
            values = list(getattr(msg, field))
            if not values:
                continue
            if len(values) != len(msg.name):
                self.warn("joints", f"joint_commands: {len(msg.name)} names but {len(values)} {field} values")
                return
            targets = {n: float(x) for n, x in zip(msg.name, values, strict=True) if n in self.motors.names}
            unknown = [n for n in msg.name if n not in self.motors.names]
            if unknown:
                self.warn("joints-unknown", f"joint_commands: no joints named {unknown}")
            try:
                with self.lock:
                    self.motors.command(field, targets)
                    self.joint_deadline.touch(self.sim.state.t)
            except ValueError as exc:
                self.warn("joints", f"joint_commands rejected: {exc}")
            return

    def on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self.restart_vehicles()
        response.success, response.message = True, "reset to the description's initial state"
        return response

    def restart_vehicles(self) -> None:
        """Every vehicle back to the description's initial state with the inputs neutral
        (wrenches and efforts zero, thrusters at 1500 us and stopped). Simulated time runs on:
        /clock never goes back (TF listeners and timeouts rely on it), and the real-time pacing
        is taken again from here."""
        with self.lock:
            t = self.sim.state.t
            initial_q = self.initial_q
            self.sim.reset(initial_q)
            self.sim.state.t = t
            self.sim.f_ext[:] = 0.0
            self.sim.tau[:] = 0.0
            if self.sim.thrusters is not None:
                self.sim.thrusters.set_pwm(np.full(len(self.sim.thrusters), 1500.0))
                self.sim.thrusters.n[:] = 0.0
            if isinstance(self.motors, JointServos):
                self._preload(self.motors, initial_q)
                arm = getattr(self, "arm", None)
                if arm is not None:
                    arm.reset()
            elif self.motors is not None:
                self.motors.command("effort", dict.fromkeys(self.motors.names, 0.0))
            for estimator in self.estimators.values():  # aligned again, as after a reboot
                estimator.started = False
            self.loop.restart_pacing()

    def on_pause(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        self.loop.pause(request.data)
        response.success, response.message = True, "paused" if request.data else "running"
        return response

    def on_step(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        if not self.loop.request_step():
            response.success, response.message = False, "step works while paused"
            return response
        response.success, response.message = True, f"stepping {self.loop.publish_every * self.dt:.4f} s"
        return response

    # -- the loop -------------------------------------------------------------------------------
    def run_physics(self) -> None:
        """The physics thread: ``SimulationLoop.run``, or ``run_lockstep`` with SITL's frames;
        first the message kernels and ``frames.attitude`` loaded here (``message_kernels.warm_up``),
        not in the main thread, where a Ctrl-C would land in the finalisers of a load."""
        try:
            warm_up_messages()
            if self.sitl is None:
                self.loop.run(self.stop_event, self.context.ok)
            else:
                self.loop.run_lockstep(partial(self.sitl.serve_once, 0.05), self.stop_event, self.context.ok)
        except Exception as exc:  # a dead physics thread must say why, and end the process
            if not self.context.ok():  # shutting down under a publish: not a failure
                return
            self.get_logger().fatal(f"physics stopped: {type(exc).__name__}: {exc}")
            self.failed = exc
            rclpy.try_shutdown(context=self.context)
            raise
        finally:
            if self.sitl is not None:
                self.sitl.close()

    def recover(self, exc: Exception) -> None:
        """The state stopped being finite (an absurd wrench or effort, a stiff link): put every
        vehicle back to the description's initial state with the inputs neutral (wrenches and
        efforts zero, thrusters at 1500 us and stopped), simulated time running on, and say so
        (throttled). Nothing non-finite is published."""
        self.recoveries += 1
        self.warn("recover", f"physics reset to the initial state: {exc}")
        self.restart_vehicles()

    def joints_expired(self) -> None:
        """No joint_commands for command_timeout: zero effort, or the servos hold where the
        joints are (loop lock held)."""
        if isinstance(self.motors, JointServos):
            self.motors.hold(self.sim.state.q)
            self.get_logger().warning(
                f"no joint_commands for {self.loop.timeout} s: joints hold their positions"
            )
        elif self.motors is not None:
            self.motors.command("effort", dict.fromkeys(self.motors.names, 0.0))
            self.get_logger().warning(f"no joint_commands for {self.loop.timeout} s: joints to zero effort")

    def publish_tick(self) -> None:
        """The loop's publish hook: the state and the working water (tethers, waves), then
        mavros/state, the markers and the browser view when their cadences (``loop.Cadence``)
        say so."""
        try:
            self.publish_state()
            self.water.publish(self.stamp())
            sim = self.sim
            t = sim.state.t
            # markers only for a reader (RViz, a recorder): a scene frame of 10 objects and a
            # wave mesh cost more than the rest of a publish period
            marker = (
                self.marker_cadence is not None and self.marker_cadence.due(t) and wanted(self.scene.markers)
            )
            view = self.view if self.view is not None and self.view.cadence.due(t) else None
            if marker or view is not None:  # one frame of the scene for both
                thrust = None if sim.thrusters is None else sim.thrusters.thrust
                frame = self.scene.frame(sim.state.q, thrust)
                # the wave surface around the first vehicle (a fixed arm has none: the origin)
                centre = frame.p[self.vehicles[0].frames.root] if self.vehicles else np.zeros(3)
                self.water.view(frame, centre)
                if view is not None:
                    view.log(t, frame)
                if marker:
                    self.scene.publish(self.stamp(), t, frame)
            if self.state_cadence.due(t):
                for io in self.vehicles:
                    if io.shim is not None:
                        io.shim.publish_state()
        except Exception:  # the context is shutting down under us
            if self.context.ok():
                raise

    def sensor_tick(self, step: int) -> None:
        """The loop's sensor hook: the noisy sensors that are due, on their topics."""
        if self.sensor_topics is None:
            return
        try:
            readings = self.sensor_topics.suite.sample(self.sim, step)
            self.sensor_topics.publish(readings, self.stamp_at)
            surface = self.sim.env.surface or 0.0
            for r in readings:
                estimator = self.estimators.get(r.sensor.vehicle)
                if estimator is not None:
                    estimator.reading(r, surface)
        except Exception:  # the context is shutting down under us
            if self.context.ok():
                raise

    def clock_tick(self) -> None:
        """The loop's clock hook: /clock and this node's own clock."""
        try:
            self.publish_clock()
        except Exception:  # the context is shutting down under us
            if self.context.ok():
                raise

    def publish_clock(self) -> None:
        if self.clock_pub is None:
            return
        sec, nanosec = stamp_parts(self.sim.state.t)
        self.clock_pub.publish(self.clock_wire.fill((), sec, nanosec))
        clock = self.get_clock()
        if isinstance(clock, ROSClock):  # this node's own time follows the /clock it publishes
            ns = sec * 1_000_000_000 + nanosec  # (an int: rclpy's seconds go through a float)
            clock.set_ros_time_override(RclpyTime(nanoseconds=ns, clock_type=clock.clock_type))

    def publish_static(self) -> None:
        """odom -> odom_ned, base_link -> base_link_frd, and the fixed joints."""
        stamp = self.stamp()
        prefix = self.get_parameter("frame_prefix").value
        out = [messages.transform(stamp, self.frame_id, prefix + "odom_ned", frames.NED_TO_ENU, np.zeros(3))]
        if self.world_frame:
            offset, quat = self.world_offset
            out.append(messages.transform(stamp, self.world_frame, self.frame_id, None, offset, quat))
        for io in self.vehicles:
            out.append(
                messages.transform(stamp, io.frames.flu, io.frames.frd, frames.FLU_TO_FRD, np.zeros(3))
            )
        model = self.sim.model
        skip = {io.frames.skip_body for io in self.vehicles}
        for vf in self.object_frames:
            out.append(messages.transform(stamp, vf.flu, vf.frd, frames.FLU_TO_FRD, np.zeros(3)))
        data = model.create_data()
        placements(model, data, self.initial_q)
        for i, j in enumerate(model.joints):
            if model.parents[i] >= 0 and j.type == "fixed" and i not in skip:
                out.append(
                    messages.transform(
                        stamp, self.tf_names[model.parents[i]], self.tf_names[i], data.E[i].T, data.r[i]
                    )
                )
        if self.sensor_topics is not None:
            out += self.sensor_topics.static_transforms(stamp)
        if self.sonars is not None:
            out += self.sonars.static_transforms(stamp)
        self.tf_static_pub.publish(TFMessage(transforms=out))

    def publish_state(self) -> None:
        sim, model = self.sim, self.sim.model
        stamp = self.stamp()
        qdd, acc = current_accelerations(sim, self.roots)  # the vehicles' IMU topics read their roots'
        data = sim.data
        for io in self.vehicles:
            io.publish(stamp, acc)
        if wanted(self.tf_pub):
            self.publish_tf(stamp)
        if self.motors is not None and wanted(self.joint_pub):
            q, v = sim.state.q[self.motors.iq], sim.state.v[self.motors.iv]
            self.joint_pub.publish(messages.joint_state(stamp, self.motors.names, q, v, self.motors.effort))
        if self.wrench_pubs:
            rnea(model, data, sim.state.q, sim.state.v, qdd, sim.env, sim.external, sim.state.t)
            for i, pub in self.wrench_pubs.items():
                w = WrenchStamped()
                w.header.stamp = stamp
                w.header.frame_id = self.tf_names[i]
                messages.vector_msg(w.wrench.force, data.f[i][:3])
                messages.vector_msg(w.wrench.torque, data.f[i][3:])
                pub.publish(w)

    def publish_tf(self, stamp) -> None:
        """/tf: the vehicles' roots in the odometry frame, the moving joints, the free objects
        (into the serialized message, ``_tf_buffers``)."""
        model, data, q = self.sim.model, self.sim.data, self.sim.state.q
        tf = self.tf
        if (tf.nq, tf.nbodies) != (len(q), len(data.p_world)):  # the kernel reads unchecked
            raise RuntimeError(
                f"/tf tables of {tf.nq} coordinates and {tf.nbodies} bodies, state of {len(q)}"
            )
        p, quat = tf.p, tf.quat
        for k in tf.general:
            root = self.vehicles[k].frames.root
            quat[k] = frames.quat_ned_frd_to_enu_flu(
                messages.joint_quaternion(model, root, q, self.tree_quats[root])
            )
        for row, i in tf.other:
            quat[row] = messages.joint_quaternion(model, i, q, self.tree_quats[i])
        values = tf.values
        tf_numbers(q, data.p_world, data.r, frames.TO_ENU_FLU, frames.NED_TO_ENU, *tf.tables, p, quat, values)
        self.tf_pub.publish(self.tf_wire.fill(values, stamp.sec, stamp.nanosec))


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """The command line without its ROS arguments: ``-h``/``--help`` prints the parameters,
    topics and services and exits; anything else is an error (exit 2)."""
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(
        prog="simulator",
        description="uvms_sim simulator node: " + doc.splitlines()[0].split(": ", 1)[-1],
        epilog="usage with ROS arguments: simulator --ros-args -p name:=value | --params-file FILE "
        "| -r __ns:=/rov1\n\n" + doc[doc.find("Parameters") :],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    try:
        own = remove_ros_args(argv)[1:]
    except RuntimeError as exc:  # rcl's RCLInvalidROSArgsError: a malformed --ros-args or params file
        print(f"simulator: error: {str(exc).split(', at /')[0]}", file=sys.stderr)  # not rcl's sources
        raise SystemExit(2) from None
    return parser.parse_args(own)


def main(args: list[str] | None = None) -> None:
    argv = list(args if args is not None else sys.argv)
    parse_arguments(argv)
    node: SimulatorNode | None = None
    code = 0
    try:
        rclpy.init(args=argv)
        try:
            node = SimulatorNode()
        except Exception as exc:
            if not rclpy.ok():  # Ctrl-C while starting: the context was shut down under it
                code = 130
            elif isinstance(
                exc, ConfigError | ValueError | ServeError
            ):  # a bad description, parameter or port
                print(f"simulator: error: {exc}", file=sys.stderr)
                code = 2
            else:
                raise
        else:
            node.get_logger().info(node.summary())
            # spin in short waits rather than one blocking spin: a shutdown (Ctrl-C, SIGTERM)
            # is noticed within 0.2 s even when the executor's wait set misses its wake-up
            executor = SingleThreadedExecutor()
            executor.add_node(node)
            while rclpy.ok() and node.thread.is_alive():
                executor.spin_once(timeout_sec=0.2)
    except (KeyboardInterrupt, ExternalShutdownException):  # Ctrl-C, or SIGTERM from a launcher
        code = code if node is not None else 130  # interrupted while starting
    finally:
        # a second Ctrl-C while shutting down must not end in a traceback
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if node is not None:
            node.destroy_node()
            if node.failed is not None:  # the physics thread died: a launcher's respawn can act on it
                code = 1
        rclpy.try_shutdown()
    if code:
        sys.exit(code)


if __name__ == "__main__":
    main()
