"""The Reach Alpha 5 driven through ros2_control's interfaces over real DDS: rclpy action clients
that call the trajectory controller as MoveIt's trajectory execution does (a FollowJointTrajectory
goal with positions, velocities and accelerations, a goal time tolerance, a cancel on demand),
the gripper action, the forward command controllers and /joint_states."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory, ParallelGripperCommand
from control_msgs.msg import JointTolerance
from rclpy.action import ActionClient
from ros_helpers import simulator, spin_until
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectoryPoint

ARM = ["alpha_5_axis_e", "alpha_5_axis_d", "alpha_5_axis_c", "alpha_5_axis_b"]
START = [3.14, 1.5, 1.5, 3.1]  # the description's initial positions
Result = FollowJointTrajectory.Result
PARAMS = dict(description="alpha5", use_sim_time=True, physics_rate=500.0, publish_rate=50.0, marker_rate=0.0)


def dur(t: float) -> Duration:
    return Duration(sec=int(t), nanosec=round((t - int(t)) * 1e9))


def point(t: float, q, v=None, a=None) -> JointTrajectoryPoint:
    p = JointTrajectoryPoint(positions=[float(x) for x in q], time_from_start=dur(t))
    if v is not None:
        p.velocities = [float(x) for x in v]
    if a is not None:
        p.accelerations = [float(x) for x in a]
    return p


def moveit_goal(points, names=ARM, goal_time: float = 0.5) -> FollowJointTrajectory.Goal:
    """As MoveIt's FollowJointTrajectory controller handle sends it: stamp 0 (start now), every
    point with positions, velocities and accelerations, a goal time tolerance."""
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(names)
    goal.trajectory.points = points
    goal.goal_time_tolerance = dur(goal_time)
    return goal


def smooth_move(target, seconds: float = 2.0, start=START):
    """A rest-to-rest quintic sampled at 5 points, as a planner's time parameterisation gives."""
    q0, q1 = np.array(start), np.array(target)
    out = []
    for s in np.linspace(0.25, 1.0, 4):
        x = 10 * s**3 - 15 * s**4 + 6 * s**5
        dx = (30 * s**2 - 60 * s**3 + 30 * s**4) / seconds
        ddx = (60 * s - 180 * s**2 + 120 * s**3) / seconds**2
        out.append(point(s * seconds, q0 + (q1 - q0) * x, (q1 - q0) * dx, (q1 - q0) * ddx))
    return out


class Client:
    """An action client as MoveIt's trajectory execution uses it: send, wait for acceptance,
    wait for the result (or cancel)."""

    def __init__(
        self,
        user,
        executor,
        action=FollowJointTrajectory,
        name="joint_trajectory_controller/follow_joint_trajectory",
    ):
        self.executor = executor
        self.client = ActionClient(user, action, name)
        assert self.client.wait_for_server(timeout_sec=10.0)
        self.feedback = []

    def send(self, goal):
        future = self.client.send_goal_async(
            goal, feedback_callback=lambda fb: self.feedback.append(fb.feedback)
        )
        assert spin_until(self.executor, future.done, timeout=10.0)
        return future.result()

    def result(self, handle, timeout: float = 20.0):
        future = handle.get_result_async()
        assert spin_until(self.executor, future.done, timeout=timeout)
        return future.result()


@pytest.fixture(scope="module")
def arm():
    with simulator(**PARAMS) as (sim, user, executor):
        states = []
        user.create_subscription(JointState, "joint_states", states.append, 10)
        assert spin_until(executor, lambda: len(states) > 0)
        yield sim, user, executor, states


def joints(states, names=ARM) -> np.ndarray:
    last = states[-1]
    return np.array([last.position[list(last.name).index(n)] for n in names])


def test_joint_states_as_the_broadcaster_publishes_them(arm) -> None:
    _, _, executor, states = arm
    assert spin_until(executor, lambda: len(states) > 3)
    msg = states[-1]
    assert sorted(msg.name) == sorted([*ARM, "alpha_5_axis_a"])
    assert len(msg.position) == len(msg.velocity) == len(msg.effort) == 5
    assert np.allclose(joints(states), START, atol=0.01)  # the servos hold the start pose


def test_moveit_goal_succeeds_and_the_arm_follows_the_spline(arm) -> None:
    _, user, executor, states = arm
    client = Client(user, executor)
    target = [3.6, 1.2, 1.8, 3.5]
    handle = client.send(moveit_goal(smooth_move(target)))
    assert handle.accepted
    res = client.result(handle)
    assert res.status == GoalStatus.STATUS_SUCCEEDED
    assert res.result.error_code == Result.SUCCESSFUL
    assert res.result.error_string == "Goal successfully reached!"
    assert client.feedback and client.feedback[-1].joint_names == ARM
    spin_until(executor, lambda: False, timeout=1.0)
    # the firmware's position loop (10 1/s) trails the reference while moving, and settles
    assert np.allclose(joints(states), target, atol=0.01)


def test_a_new_goal_preempts_the_active_one(arm) -> None:
    _, user, executor, states = arm
    client = Client(user, executor)
    here = joints(states)
    first = client.send(moveit_goal([point(4.0, here + np.array([0.4, 0.0, 0.0, 0.0]))]))
    spin_until(executor, lambda: False, timeout=0.5)
    second = client.send(moveit_goal([point(1.0, here)]))
    assert first.accepted and second.accepted
    r1 = client.result(first)
    assert r1.status == GoalStatus.STATUS_ABORTED
    assert r1.result.error_code == Result.INVALID_GOAL
    assert r1.result.error_string == "Current goal preempted by new incoming action."
    assert client.result(second).result.error_code == Result.SUCCESSFUL


def test_cancel_holds_the_arm_where_it_is(arm) -> None:
    _, user, executor, states = arm
    client = Client(user, executor)
    here = joints(states)
    handle = client.send(moveit_goal([point(6.0, here + np.array([0.0, 0.5, 0.0, 0.0]))]))
    spin_until(executor, lambda: False, timeout=1.0)
    cancel = handle.cancel_goal_async()
    assert spin_until(executor, cancel.done)
    assert client.result(handle).status == GoalStatus.STATUS_CANCELED
    spin_until(executor, lambda: False, timeout=1.0)
    held = joints(states)
    spin_until(executor, lambda: False, timeout=1.0)
    assert np.allclose(joints(states), held, atol=0.005)  # holding, not finishing the move
    assert abs(held[1] - here[1]) < 0.4


@pytest.mark.parametrize(
    "case",
    ["unknown joint", "partial", "nan", "unordered times", "beyond the limits", "velocity above the limit",
     "empty", "moving at the end", "effort field"],
)  # fmt: skip
def test_bad_goals_are_rejected(arm, case: str) -> None:
    """The controller refuses these goals (JTC: GoalResponse REJECT, one logged line)."""
    _, user, executor, _ = arm
    client = Client(user, executor)
    names, pts = list(ARM), [point(1.0, START), point(2.0, START)]
    if case == "unknown joint":
        names[0] = "elbow"
    elif case == "partial":
        names, pts = ARM[:3], [point(1.0, START[:3])]
    elif case == "nan":
        pts[1].positions[2] = math.nan
    elif case == "unordered times":
        pts[1].time_from_start = dur(0.5)
    elif case == "beyond the limits":
        pts[1].positions[1] = 3.9  # axis_d: 0 to 3.8 rad
    elif case == "velocity above the limit":
        pts[0].velocities = [0.0, 0.9, 0.0, 0.0]  # 0.5 rad/s
    elif case == "empty":
        pts = []
    elif case == "moving at the end":
        pts[1].velocities = [0.1, 0.0, 0.0, 0.0]
    elif case == "effort field":
        pts[1].effort = [0.0] * 4
    handle = client.send(moveit_goal(pts, names))
    assert not handle.accepted


def test_path_tolerance_violation_aborts_with_its_error_code(arm) -> None:
    _, user, executor, states = arm
    client = Client(user, executor)
    here = joints(states)
    goal = moveit_goal([point(0.5, here + np.array([0.6, 0.0, 0.0, 0.0]))])  # 1.2 rad/s: above the 0.5 limit
    goal.path_tolerance = [JointTolerance(name=ARM[0], position=0.01)]
    res = client.result(client.send(goal))
    assert res.status == GoalStatus.STATUS_ABORTED
    assert res.result.error_code == Result.PATH_TOLERANCE_VIOLATED
    assert res.result.error_string == "Aborted due to path tolerance violation"


def test_goal_not_reached_in_time_aborts_with_its_error_code(arm) -> None:
    _, user, executor, states = arm
    client = Client(user, executor)
    here = joints(states)
    goal = moveit_goal(
        [point(0.5, here + np.array([0.0, 0.0, 0.5, 0.0]))], goal_time=0.2
    )  # needs 1 s at 0.5 rad/s
    goal.goal_tolerance = [JointTolerance(name=ARM[2], position=0.005)]
    res = client.result(client.send(goal))
    assert res.status == GoalStatus.STATUS_ABORTED
    assert res.result.error_code == Result.GOAL_TOLERANCE_VIOLATED
    assert res.result.error_string.startswith("Aborted due to goal_time_tolerance exceeding by")


def test_gripper_closes_to_the_commanded_gap(arm) -> None:
    _, user, executor, _ = arm
    client = Client(user, executor, ParallelGripperCommand, "gripper_controller/gripper_cmd")
    goal = ParallelGripperCommand.Goal()
    goal.command.name = ["alpha_5_axis_a"]
    goal.command.position = [0.008]
    res = client.result(client.send(goal))
    assert res.status == GoalStatus.STATUS_SUCCEEDED
    assert res.result.reached_goal and not res.result.stalled
    assert res.result.state.position[0] == pytest.approx(0.008, abs=0.001)
    bad = ParallelGripperCommand.Goal()
    bad.command.position = [0.008, 0.0]  # the controller expects one position
    assert not client.send(bad).accepted


def test_forward_controllers_and_conflicting_claims() -> None:
    with pytest.raises(ValueError, match="both claim alpha_5_axis_e"):
        with simulator(
            **PARAMS, arm_controllers=["joint_trajectory_controller", "forward_position_controller"]
        ):
            pass
    params = dict(PARAMS, arm_controllers=["joint_state_broadcaster", "forward_velocity_controller"])
    with simulator(namespace="fwd", **params) as (_, user, executor):
        states = []
        user.create_subscription(JointState, "/fwd/joint_states", states.append, 10)
        pub = user.create_publisher(Float64MultiArray, "/fwd/forward_velocity_controller/commands", 10)
        jtc = user.create_publisher(Float64MultiArray, "/fwd/forward_position_controller/commands", 10)
        assert spin_until(executor, lambda: len(states) > 2)
        start = joints(states)
        t0 = time.monotonic()

        def command() -> None:
            pub.publish(Float64MultiArray(data=[0.2, 0.0, 0.0, 0.0]))
            jtc.publish(Float64MultiArray(data=[0.0, 0.0, 0.0, 0.0]))  # not active: ignored
            pub.publish(Float64MultiArray(data=[1.0]))  # wrong size: refused

        spin_until(executor, lambda: time.monotonic() - t0 > 2.0, every=command)
        moved = joints(states) - start
        assert moved[0] > 0.1 and np.allclose(moved[1:], 0.0, atol=0.01)


def test_a_fixed_arm_with_markers_keeps_stepping() -> None:
    """The fixed-base Alpha 5 has no vehicle: with the markers on (the default rate), the
    physics thread kept dying at its first scene frame (the wave surface was centred on the
    first vehicle). Its joint states must keep coming and time keep moving. Time is read from
    the simulator itself: a joint state that arrives here may have been sent by an earlier
    test's simulator still leaving the domain, with a stamp of its own time."""
    params = {**PARAMS, "marker_rate": 10.0}
    with simulator(**params) as (sim, user, executor):
        states = []
        user.create_subscription(JointState, "joint_states", states.append, 10)
        assert spin_until(executor, lambda: len(states) > 20, timeout=60.0)
        first, count = sim.sim.state.t, len(states)
        assert spin_until(executor, lambda: len(states) > count + 20, timeout=60.0)
        assert sim.thread.is_alive() and sim.sim.state.t > first
