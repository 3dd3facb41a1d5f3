"""Hostile input into the Reach Alpha 5's controllers: random trajectories (NaN, infinities, huge
values, unordered and negative times, wrong sizes, unknown and repeated joints, effort fields,
stamps in the past and future) into the trajectory rules and the firmware servos, and the same
over real DDS into the trajectory topic and action, the gripper action and the forward command
controllers (``FUZZ_SCALE`` times as many). What must hold: a refusal (one line) or a finite
command, never an exception out of a callback; the node lives on, its joint states finite and
its joints within their limits."""

from __future__ import annotations

import math
import os

import numpy as np
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory, ParallelGripperCommand
from rclpy.action import ActionClient
from ros_helpers import simulator, spin_until
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from uvms_sim.actuators.servo import SERVO_MODES, JointServos, alpha5_specs
from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.ros.trajectory import JointLimits, Trajectory, validate
from uvms_sim.simulator import Simulator

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
ARM = ["alpha_5_axis_e", "alpha_5_axis_d", "alpha_5_axis_c", "alpha_5_axis_b"]
SPECIALS = [math.nan, math.inf, -math.inf, 1e300, -1e300, 1e-300, 0.0, -1.0, 3.0, 7.0]


def value(rng) -> float:
    return float(rng.choice(SPECIALS)) if rng.random() < 0.3 else float(rng.uniform(-1.0, 7.0))


def random_trajectory(rng) -> JointTrajectory:
    names = list(ARM)
    if rng.random() < 0.2:
        names = list(rng.choice([*ARM, "elbow", "", "alpha_5_axis_a"], size=int(rng.integers(0, 6))))
    msg = JointTrajectory(joint_names=names)
    if rng.random() < 0.1:
        msg.header.stamp.sec = int(rng.integers(0, 2**31 - 1))
    t = 0.0
    for _ in range(int(rng.integers(0, 5))):
        t += float(rng.choice([0.5, -0.5, 0.0, 1e-9, 2.0]))
        n = len(names) if rng.random() < 0.85 else int(rng.integers(0, 6))
        p = JointTrajectoryPoint(positions=[value(rng) if rng.random() < 0.3 else 1.5 for _ in range(n)])
        if rng.random() < 0.4:
            p.velocities = [value(rng) * 0.1 for _ in range(n)]
        if rng.random() < 0.3:
            p.accelerations = [value(rng) for _ in range(n)]
        if rng.random() < 0.05:
            p.effort = [0.0] * n
        sec = max(min(t, 2**31 - 2), -(2**31))
        p.time_from_start = Duration(sec=math.floor(sec), nanosec=0)
        msg.points.append(p)
    return msg


def test_random_trajectories_into_the_rules_and_the_servos() -> None:
    """Thousands of trajectories: validate refuses with a reason or the sampled setpoints are
    finite; the servos, commanded in random modes with random values, keep the state finite."""
    system = load(resolve("alpha5"))
    sim = Simulator.from_system(system)
    servos = JointServos(sim.model, alpha5_specs(sim.model), q=system.initial_q)
    sim.joint_motors = servos
    names = servos.names
    limits = JointLimits(
        dict(zip(names, servos.lower, strict=True)),
        dict(zip(names, servos.upper, strict=True)),
        dict(zip(names, servos.velocity_limit, strict=True)),
    )
    rng = np.random.default_rng(39)
    accepted = 0
    for i in range(2000 * SCALE):
        msg = random_trajectory(rng)
        reason = validate(msg, ARM, 10.0, limits)
        if reason is None:
            accepted += 1
            traj = Trajectory(msg, ARM, 10.0, np.array([3.0, 1.5, 1.5, 3.0]))
            for t in (9.0, 10.0, 10.7, 12.0, 1e9):
                p, v, a, _, _ = traj.sample(t)
                assert np.all(np.isfinite(p)) and np.all(np.isfinite(v)) and np.all(np.isfinite(a))
        else:
            assert isinstance(reason, str) and "\n" not in reason
        if i % 20 == 0:
            mode = str(rng.choice(SERVO_MODES))
            targets = {str(rng.choice(names)): value(rng) for _ in range(int(rng.integers(0, 4)))}
            try:
                servos.command(mode, targets)
            except ValueError:
                pass
            for _ in range(5):
                sim.step(0.002)
            assert np.all(np.isfinite(sim.state.q)) and np.all(np.isfinite(sim.state.v))
    assert accepted > 50  # the fuzzing also reaches the sampling


def test_hostile_commands_over_dds_never_kill_the_controllers() -> None:
    params = dict(description="alpha5", use_sim_time=True, physics_rate=500.0, marker_rate=0.0)
    with simulator(**params) as (sim, user, executor):
        states: list[JointState] = []
        user.create_subscription(JointState, "joint_states", states.append, 10)
        topic = user.create_publisher(JointTrajectory, "joint_trajectory_controller/joint_trajectory", 10)
        forward = user.create_publisher(Float64MultiArray, "forward_position_controller/commands", 10)
        action = ActionClient(
            user, FollowJointTrajectory, "joint_trajectory_controller/follow_joint_trajectory"
        )
        gripper = ActionClient(user, ParallelGripperCommand, "gripper_controller/gripper_cmd")
        assert action.wait_for_server(timeout_sec=10.0) and gripper.wait_for_server(timeout_sec=10.0)
        rng = np.random.default_rng(7)
        futures = []
        for _ in range(150 * SCALE):
            msg = random_trajectory(rng)
            topic.publish(msg)
            forward.publish(Float64MultiArray(data=[value(rng) for _ in range(int(rng.integers(0, 6)))]))
            if rng.random() < 0.3:
                goal = FollowJointTrajectory.Goal(trajectory=random_trajectory(rng))
                futures.append(action.send_goal_async(goal))
            if rng.random() < 0.1:
                g = ParallelGripperCommand.Goal()
                g.command.position = [value(rng) * 0.01 for _ in range(int(rng.integers(0, 3)))]
                g.command.effort = [value(rng) for _ in range(int(rng.integers(0, 2)))]
                futures.append(gripper.send_goal_async(g))
            executor.spin_once(timeout_sec=0.005)
        spin_until(executor, lambda: all(f.done() for f in futures), timeout=20.0)
        n = len(states)
        assert spin_until(executor, lambda: len(states) > n + 5, timeout=10.0)  # still publishing
        assert sim.thread.is_alive() and sim.failed is None
        last = states[-1]
        assert np.all(np.isfinite(last.position)) and np.all(np.isfinite(last.velocity))
        assert np.all(np.isfinite(last.effort))
        servos = sim.motors
        q = np.array(last.position)
        assert np.all(q >= servos.lower - 1e-6) and np.all(q <= servos.upper + 1e-6)
