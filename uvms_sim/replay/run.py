"""Drive the model with a bag's thruster commands (Nielsen et al. 2018 section 4.2: the simulator run on the
PWM logged in the experiment) and write what it predicts next to what was recorded.

Commands are held between messages (zero-order hold); servo channel n drives the thruster
whose motor number is n. A bag with the pilot's RC override instead of the applied PWM is
flown through the emulated ArduSub (``actuators.ardusub.ArduSubEmulator``, the frame inferred
from the motor numbers, updated at ``autopilot_rate`` from the simulated state), with arming
and mode from the bag's mavros State messages (armed, MANUAL if there are none). The state is
sampled at the measured odometry's stamps (or every 0.1 s) and returned in the same ENU/FLU
layout as ``bag.BagContents.odometry``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..frames import (
    body_frd_flu,
    position_enu_to_ned,
    position_ned_to_enu,
    quat_enu_flu_to_ned_frd,
    quat_ned_frd_to_enu_flu,
)
from ..log import logger
from ..loop import Cadence
from ..model.system import System
from ..simulator import Simulator
from .bag import BagContents, odometry_message, typestore, write_bag

MAX_GAP = 60.0  # s without a sample: the replay jumps over it instead of simulating it


def command_grid(t_cmd: np.ndarray, period: float = 0.1) -> np.ndarray:
    """Sample times for a bag without odometry: every ``period`` from the first command, but
    not across a gap of more than ``MAX_GAP`` between commands (the replay jumps those)."""
    t_cmd = np.unique(np.asarray(t_cmd, dtype=float))
    if not len(t_cmd):
        return np.zeros(1)
    ends = np.r_[np.minimum(t_cmd[1:], t_cmd[:-1] + MAX_GAP), t_cmd[-1] + period]
    return np.unique(np.concatenate([np.arange(a, b, period) for a, b in zip(t_cmd, ends, strict=True)]))


def odometry_row(q: np.ndarray, v: np.ndarray) -> list[float]:
    """ENU/FLU odometry row of a free joint's ``q = [p NED; quat]`` and ``v = [u..r]``."""
    pos, quat = position_ned_to_enu(q[:3]), quat_ned_frd_to_enu_flu(q[3:7])
    return [*pos, *quat, *body_frd_flu(v[:3]), *body_frd_flu(v[3:6])]


def replay(
    system: System,
    bag: BagContents,
    dt: float = 0.005,
    sample_times: np.ndarray | None = None,
    initial_odometry: bool = True,
    progress: Callable[[int, int], object] | None = None,
    configurations: list | None = None,
    autopilot_rate: float = 200.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Simulate the bag's commands; ``(t, rows)`` at ``sample_times`` (default: the measured
    odometry's stamps, else every 0.1 s). With ``initial_odometry`` the vehicle starts at the
    first measured pose and velocity. Joint efforts from the bag's joint commands are applied
    (held between messages); ``configurations`` collects q at every sample."""
    sim = Simulator.from_system(system)
    bank = sim.thrusters
    if bank is None:
        raise ValueError("the description has no thrusters to drive")
    t_cmd, pwm = bag.commands.arrays()
    t_odo, odo = bag.odometry.arrays()
    if sample_times is None:
        sample_times = t_odo if len(t_odo) else command_grid(np.r_[t_cmd, bag.overrides.t])
    if initial_odometry and len(t_odo):
        sim.reset(*state_from_odometry(system, odo[0]))
        t0 = t_odo[0]
    else:
        t0 = 0.0
    sim.state.t = t0
    motors = None
    if bag.joints.t:
        from ..actuators.joints import JointMotors

        motors = sim.joint_motors = JointMotors(system.model, q=system.initial_q)
    t_joint = np.asarray(bag.joints.t)
    k_joint = 0
    pilot = _Pilot(system, bank, bag, autopilot_rate) if bag.command_source == "rc_override" else None
    rows = []
    k_cmd = 0
    shown = -1
    for n_sample, t_sample in enumerate(sample_times):
        if progress is not None and (pct := 100 * n_sample // max(1, len(sample_times))) != shown:
            shown = pct
            progress(pct, 100)
        if t_sample - sim.state.t > MAX_GAP:  # a recording gap: do not simulate hours of nothing
            logger.warning(
                f"replay: {t_sample - sim.state.t:.0f} s without samples at t = {sim.state.t:.1f} s: "
                + ("restarting from the measured state" if len(t_odo) else "the state is held")
            )
            if len(t_odo):
                sim.reset(
                    *state_from_odometry(system, odo[min(np.searchsorted(t_odo, t_sample), len(t_odo) - 1)])
                )
            sim.state.t = t_sample
            while k_cmd < len(t_cmd) and t_cmd[k_cmd] <= sim.state.t + 1e-12:
                k_cmd += 1
            k_cmd = max(0, k_cmd - 1)
        while sim.state.t < t_sample - 1e-12:
            while k_cmd < len(t_cmd) and t_cmd[k_cmd] <= sim.state.t + 1e-12:
                bank.set_motor_pwm(pwm[k_cmd])
                k_cmd += 1
            h = min(dt, t_sample - sim.state.t)
            if pilot is not None:
                h = min(h, pilot.update(sim))
            while motors is not None and k_joint < len(t_joint) and t_joint[k_joint] <= sim.state.t + 1e-12:
                efforts = {n: e for n, e in bag.joints.values[k_joint].items() if n in motors.names}
                motors.command("effort", efforts)
                k_joint += 1
            try:
                sim.step(h)
            except FloatingPointError as exc:  # the commands drove the model to infinity
                k = min(int(np.searchsorted(t_odo, t_sample)), len(t_odo) - 1) if len(t_odo) else None
                logger.warning(
                    f"replay: the model's state stopped being finite at t = {sim.state.t:.2f} s ({exc}); "
                    + ("restarting from the measured state" if k is not None else "back to the start state")
                )
                t_now = sim.state.t
                sim.reset(*(state_from_odometry(system, odo[k]) if k is not None else (system.initial_q,)))
                sim.state.t = t_now + h
        rows.append(odometry_row(sim.state.q[:7], sim.state.v[:6]))
        if configurations is not None:
            configurations.append(sim.state.q.copy())
    if progress is not None:
        progress(100, 100)
    return np.asarray(sample_times), np.asarray(rows)


class _Pilot:
    """The emulated ArduSub between a bag's RC override / mavros State and the thrusters."""

    def __init__(self, system: System, bank, bag: BagContents, rate: float) -> None:
        from ..actuators.ardusub import ArduSubEmulator, infer_frame

        frame = infer_frame(bank.motors)
        if frame is None:
            raise ValueError(
                f"RC override replay needs an ArduSub frame: motor numbers {bank.motors} are not 1-6 or 1-8"
            )
        self.autopilot = ArduSubEmulator(frame, directions=bank.motor_directions())
        self.bank = bank
        self.t_rc, self.rc = np.asarray(bag.overrides.t), bag.overrides.values
        self.t_state, self.states = np.asarray(bag.autopilot_states.t), bag.autopilot_states.values
        if not len(self.t_state):
            self.autopilot.arm(True)  # no State messages: an armed vehicle in MANUAL
        self.k_rc = self.k_state = 0
        self.cadence = Cadence(1.0 / rate)

    def update(self, sim) -> float:
        """Apply the messages due, run the autopilot if its period is up; time to its next run."""
        from ..actuators.ardusub import VehicleState

        t = sim.state.t
        while self.k_state < len(self.t_state) and self.t_state[self.k_state] <= t + 1e-12:
            armed, mode = self.states[self.k_state]
            if armed != self.autopilot.armed:
                self.autopilot.arm(armed)
            self.autopilot.set_mode(mode)
            self.k_state += 1
        while self.k_rc < len(self.t_rc) and self.t_rc[self.k_rc] <= t + 1e-12:
            self.autopilot.set_rc(self.rc[self.k_rc][:8])
            self.k_rc += 1
        if self.cadence.due(t):
            state = VehicleState.from_free_joint(sim.state.q[:7], sim.state.v[:6])
            self.bank.set_motor_pwm(self.autopilot.update(state, self.cadence.period))
        return max(self.cadence.next_time - t, 1e-9)


def free_joint_state(row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A free joint's ``q = [p NED; quat FRD->NED]`` and ``v = [u..r] (FRD)`` of an odometry
    row (ENU/FLU); the inverse of ``odometry_row``."""
    q = np.r_[position_enu_to_ned(row[:3]), quat_enu_flu_to_ned_frd(row[3:7])]
    return q, np.r_[body_frd_flu(row[7:10]), body_frd_flu(row[10:13])]


def state_from_odometry(system: System, row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The system's configuration and velocity for an odometry row (ENU/FLU -> NED/FRD)."""
    q = system.initial_q.copy()
    v = np.zeros(system.model.nv)
    q[:7], v[:6] = free_joint_state(row)
    return q, v


def write_prediction(
    path,
    bag: BagContents,
    t: np.ndarray,
    rows: np.ndarray,
    storage: str = "sqlite3",
    system: System | None = None,
    configurations: list | None = None,
) -> None:
    """An output bag for Foxglove or ``ros2 bag play``: the predicted odometry on
    ``/predicted/odom`` (child frame ``base_link_predicted``, also on ``/tf``) next to the
    recorded one (``/recorded/odom``, same stamps as in the input) and, with ``system`` and
    ``configurations``, the predicted ``/predicted/joint_states`` and the predicted vehicle as
    a robot model: ``/robot_description`` (the URDF with visuals, links prefixed
    ``predicted/``) with every link on ``/tf`` and ``/tf_static``, so that Foxglove's 3D panel
    or RViz draws it moving."""
    store = typestore()
    T = store.types

    def stamps(times):
        return [bag.start_ns + round(x * 1e9) for x in times]

    def header(ns, frame=""):
        return T["std_msgs/msg/Header"](
            stamp=T["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9), frame_id=frame
        )

    predicted = [
        (s, odometry_message(store, s, r, child="base_link_predicted"))
        for s, r in zip(stamps(t), rows, strict=True)
    ]
    tf = []
    for s, r in zip(stamps(t), rows, strict=True):
        transform = T["geometry_msgs/msg/Transform"](
            translation=T["geometry_msgs/msg/Vector3"](x=float(r[0]), y=float(r[1]), z=float(r[2])),
            rotation=T["geometry_msgs/msg/Quaternion"](
                w=float(r[3]), x=float(r[4]), y=float(r[5]), z=float(r[6])
            ),
        )
        stamped = T["geometry_msgs/msg/TransformStamped"](
            header=header(s, "odom"), child_frame_id="base_link_predicted", transform=transform
        )
        tf.append((s, T["tf2_msgs/msg/TFMessage"](transforms=[stamped])))
    topics = {"/predicted/odom": ("nav_msgs/msg/Odometry", predicted), "/tf": ("tf2_msgs/msg/TFMessage", tf)}
    t_odo, odo = bag.odometry.arrays()
    if len(t_odo):
        topics["/recorded/odom"] = (
            "nav_msgs/msg/Odometry",
            [(s, odometry_message(store, s, r)) for s, r in zip(stamps(t_odo), odo, strict=True)],
        )
    if system is not None and configurations:
        model = system.model
        idx = [i for i, j in enumerate(model.joints) if j.nq == 1]
        if idx:
            names = [model.bodies[i].joint_name for i in idx]
            js = [
                (s, T["sensor_msgs/msg/JointState"](
                    header=header(s), name=names, position=np.array([q[model.idx_q[i]] for i in idx]),
                    velocity=np.zeros(0), effort=np.zeros(0)))
                for s, q in zip(stamps(t), configurations, strict=True)
            ]  # fmt: skip
            topics["/predicted/joint_states"] = ("sensor_msgs/msg/JointState", js)
        model_topics = _robot_model(store, system, stamps(t), rows, configurations)
        links = model_topics.pop("/tf", ("", []))[1]
        for k, (_, msg) in enumerate(links):  # one /tf message per instant, the links beside the odometry's
            tf[k][1].transforms = [*tf[k][1].transforms, *msg.transforms]
        topics.update(model_topics)
    write_bag(path, topics, storage)


PREDICTED = "predicted/"  # the frame prefix of the predicted robot model in an output bag


def _robot_model(store, system: System, stamps: list[int], rows, configurations) -> dict:
    """``/robot_description``, ``/tf_static`` and the links' ``/tf`` of the predicted vehicle
    (``write_prediction``); the first vehicle's pose from the odometry rows, the links from
    the configurations."""
    from transforms3d.quaternions import mat2quat

    from ..frames import FLU_TO_FRD
    from ..model.kinematics import placements
    from ..model.naming import tf_names
    from ..model.urdf_writer import urdf_text

    T = store.types
    names, vehicles = tf_names(system, PREDICTED)
    if not vehicles:
        return {}
    vf = vehicles[0]

    def stamped(ns: int, parent: str, child: str, p, quat):
        return T["geometry_msgs/msg/TransformStamped"](
            header=T["std_msgs/msg/Header"](
                stamp=T["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9), frame_id=parent
            ),
            child_frame_id=child,
            transform=T["geometry_msgs/msg/Transform"](
                translation=T["geometry_msgs/msg/Vector3"](x=float(p[0]), y=float(p[1]), z=float(p[2])),
                rotation=T["geometry_msgs/msg/Quaternion"](
                    w=float(quat[0]), x=float(quat[1]), y=float(quat[2]), z=float(quat[3])
                ),
            ),
        )

    model = system.model
    data = model.create_data()
    moving = [i for i, j in enumerate(model.joints) if model.parents[i] >= 0 and i != vf.skip_body]
    tf = []
    for ns, row, q in zip(stamps, rows, configurations, strict=True):
        placements(model, data, q)
        links = [
            stamped(ns, names[model.parents[i]], names[i], data.r[i], mat2quat(data.E[i].T)) for i in moving
        ]
        tf.append(
            (
                ns,
                T["tf2_msgs/msg/TFMessage"](
                    transforms=[stamped(ns, "odom", vf.flu, row[:3], row[3:7]), *links]
                ),
            )
        )
    static = T["tf2_msgs/msg/TFMessage"](
        transforms=[stamped(stamps[0], vf.flu, vf.frd, np.zeros(3), mat2quat(FLU_TO_FRD))]
    )
    description = T["std_msgs/msg/String"](data=urdf_text(system, PREDICTED, "odom"))
    return {
        "/robot_description": ("std_msgs/msg/String", [(stamps[0], description)]),
        "/tf_static": ("tf2_msgs/msg/TFMessage", [(stamps[0], static)]),
        "/tf": ("tf2_msgs/msg/TFMessage", tf),
    }
