"""ros2_control's controllers for a Reach Alpha 5, with the topics, actions and rules of
ros2_controllers (Kilted), driving the arm's firmware servos (``actuators.servo``).

Controllers (``arm_controllers`` parameter: the ones the controller manager would have active):

- ``joint_trajectory_controller`` (the arm's rotate joints; command interface position, state
  interfaces position and velocity): ``~/follow_joint_trajectory``
  (control_msgs/FollowJointTrajectory), ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory),
  ``~/controller_state`` (control_msgs/JointTrajectoryControllerState), ``~/query_state``
  (control_msgs/QueryTrajectoryState). Goals are validated and refused as the controller refuses
  them (``ros.trajectory``); an accepted goal preempts the active one (aborted with INVALID_GOAL,
  "Current goal preempted by new incoming action."); a cancel holds the current position;
  path tolerances abort with PATH_TOLERANCE_VIOLATED, a goal not reached within
  goal_time_tolerance with GOAL_TOLERANCE_VIOLATED, and success is "Goal successfully reached!".
  The sampled position goes to the servos with its velocity as feed-forward.
- ``forward_position_controller``, ``forward_velocity_controller``,
  ``forward_effort_controller`` (the rotate joints): ``~/commands`` (std_msgs/Float64MultiArray,
  one value per joint in the controller's order).
- ``gripper_controller`` (parallel_gripper_action_controller on ``axis_a``): ``~/gripper_cmd``
  (control_msgs/ParallelGripperCommand): one position, the goal succeeds within
  ``goal_tolerance`` and aborts (stalled) when the jaws stop for ``stall_timeout`` before it,
  as the controller does; the command's effort, or the controller's ``max_effort``, caps the
  jaws' force (the servo's current).
- ``joint_state_broadcaster``: ``joint_states`` (the node publishes it).

Each controller is a namespace under the node's (``~/`` = ``<controller name>/``). As in the
controller manager, two active controllers may not claim one joint: the node refuses to start
(one line naming both). A command to a controller that is not active is ignored with a
throttled warning. The controllers update every ``controller_rate`` period of simulated time
(the node's parameter; 100 Hz, the controller manager's default ``update_rate``): the
trajectory is sampled and the servos' setpoints (position and velocity feed-forward) set and
held until the next update, while the servos' own loops run at every physics step. Feedback,
results and the controller state are sent at the action monitor rate (20 Hz of wall-clock
time), as the controllers' non-realtime side sends them, built from the last update then.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import cast

import numpy as np
from control_msgs.action import FollowJointTrajectory, ParallelGripperCommand
from control_msgs.msg import JointTrajectoryControllerState
from control_msgs.srv import QueryTrajectoryState
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType, ROSClock
from rclpy.node import Node
from rclpy.task import Future
from rclpy.time_source import TimeSource
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..actuators.servo import JointServos
from ..log import Throttle
from .trajectory import JointLimits, Tolerances, Trajectory, seconds, tolerances, validate, within_all

TRAJECTORY = "joint_trajectory_controller"
FORWARD = {
    "forward_position_controller": "position",
    "forward_velocity_controller": "velocity",
    "forward_effort_controller": "effort",
}
GRIPPER = "gripper_controller"
BROADCASTER = "joint_state_broadcaster"
KNOWN = (BROADCASTER, TRAJECTORY, GRIPPER, *FORWARD)
DEFAULT_CONTROLLERS = [BROADCASTER, TRAJECTORY, GRIPPER]
MONITOR_PERIOD = 0.05  # s: action_monitor_rate 20 Hz
GRIPPER_GOAL_TOLERANCE = 0.001  # m: the Alpha's 15 mm push rod (the controller's default is 0.01)
STALL_VELOCITY = 0.001  # m/s, the controller's stall_velocity_threshold
STALL_TIMEOUT = 1.0  # s, its stall_timeout


def claims(controllers: list[str], arm: list[str], gripper: list[str]) -> dict[str, list[str]]:
    """The joints each active controller claims; ValueError (one line) for an unknown controller
    or two active controllers on one joint."""
    owner: dict[str, str] = {}
    out: dict[str, list[str]] = {}
    for c in controllers:
        if c not in KNOWN:
            raise ValueError(f"parameter arm_controllers: unknown controller {c!r}; known: {list(KNOWN)}")
        joints = [] if c == BROADCASTER else gripper if c == GRIPPER else arm
        for j in joints:
            if j in owner:
                raise ValueError(
                    f"parameter arm_controllers: {owner[j]} and {c} both claim {j}: the controller manager "
                    "activates one controller per joint interface"
                )
            owner[j] = c
        out[c] = joints
    return out


class _Goal:
    """An accepted goal: its handle, the Future its execute callback waits on, its feedback."""

    def __init__(self, handle) -> None:
        self.handle = handle
        self.done: Future = Future()
        self.feedback: Callable[[], object] | None = None  # builds the latest feedback message
        self.outcome: tuple[str, object] | None = None  # ("succeed" | "abort" | "canceled", result)


class ArmControllers:
    """The controllers above on ``node`` for ``servos``; ``lock`` is the physics loop's lock,
    ``now`` the simulated time, ``q_v`` the joints' positions and velocities."""

    def __init__(
        self,
        node: Node,
        servos: JointServos,
        lock: threading.RLock,
        now: Callable[[], float],
        active: list[str],
        sim_time: bool = False,
    ) -> None:
        self.node, self.servos, self.lock, self.now = node, servos, lock, now
        self.sim_time = sim_time
        names = servos.names
        self.gripper_joints = [n for n in names if n.endswith("axis_a")]
        self.arm_joints = [n for n in names if n not in self.gripper_joints]
        self.claims = claims(active, self.arm_joints, self.gripper_joints)
        self.active = set(active)
        k = [names.index(j) for j in self.arm_joints]
        self.arm_k = np.array(k, dtype=int)
        self.limits = JointLimits(
            {n: float(servos.lower[names.index(n)]) for n in names},
            {n: float(servos.upper[names.index(n)]) for n in names},
            {n: float(servos.velocity_limit[names.index(n)]) for n in names},
        )
        self.throttle = Throttle(1.0, node.get_logger())
        self.group = ReentrantCallbackGroup()
        self.trajectory: Trajectory | None = None
        self.goal: _Goal | None = None
        self.tolerances = Tolerances.defaults(len(self.arm_joints))
        self.default_tolerances = Tolerances.defaults(len(self.arm_joints))
        self.finished: list[_Goal] = []  # goals the update ended, to be sent by the monitor
        self.goals: dict[int, _Goal] = {}  # every accepted goal until its execute callback ends
        self.sample: _Sample | None = None  # the trajectory controller's last update
        self.gripper_goal: _Goal | None = None
        self.gripper_target = 0.0
        self.gripper_effort = 10.0
        self.last_movement = 0.0
        self._interfaces()
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.monitor = node.create_timer(MONITOR_PERIOD, self.run_non_realtime, self.group, clock=steady)

    # -- interfaces ---------------------------------------------------------------------------
    def _interfaces(self) -> None:
        node = self.node
        # The action servers keep their goals' stamps and expiry on a clock of their own (rcl's
        # action server makes a timer on the clock it is given): on the node's simulated clock,
        # which the node sets at every /clock it publishes, each of those settings woke the
        # executor for a pass over every entity of the node (a fifth of a core at 250 Hz). This
        # clock follows simulated time at each goal and cancel request and while goals run.
        self.action_clock = node.get_clock()
        if self.sim_time:
            self.action_clock = ROSClock()
            self.time_source = TimeSource()
            self.time_source.attach_clock(self.action_clock)
            self.time_source.ros_time_is_active = True
        self.action_node = cast(Node, _ActionNode(node, self.action_clock))
        ns = TRAJECTORY
        node.create_subscription(JointTrajectory, f"{ns}/joint_trajectory", self.on_topic, 10)
        self.state_pub = node.create_publisher(JointTrajectoryControllerState, f"{ns}/controller_state", 10)
        node.create_service(QueryTrajectoryState, f"{ns}/query_state", self.on_query)
        self.action = ActionServer(
            self.action_node,
            FollowJointTrajectory,
            f"{ns}/follow_joint_trajectory",
            execute_callback=self.execute,
            goal_callback=self.on_goal,
            handle_accepted_callback=self.on_accepted,
            cancel_callback=self.on_cancel,
            callback_group=self.group,
        )
        for name, mode in FORWARD.items():
            node.create_subscription(
                Float64MultiArray,
                f"{name}/commands",
                lambda msg, n=name, m=mode: self.on_forward(n, m, msg),
                10,
            )
        self.gripper_action = ActionServer(
            self.action_node,
            ParallelGripperCommand,
            f"{GRIPPER}/gripper_cmd",
            execute_callback=self.execute,
            goal_callback=self.on_gripper_goal,
            handle_accepted_callback=self.on_gripper_accepted,
            cancel_callback=self.on_gripper_cancel,
            callback_group=self.group,
        )

    def reset(self) -> None:
        """The vehicles were reset: no trajectory, the goals aborted as on a deactivation (loop
        lock held)."""
        self.trajectory = None
        for goal in (self.goal, self.gripper_goal):
            if goal is not None:
                result = FollowJointTrajectory.Result()
                result.error_code = FollowJointTrajectory.Result.INVALID_GOAL
                result.error_string = "Current goal cancelled during deactivate transition."
                gripper = goal is self.gripper_goal
                self._end(goal, "abort", self._gripper_result() if gripper else result)
        self.goal = self.gripper_goal = None
        self.servos.current_cap[:] = [s.current_limit for s in self.servos.specs]

    def destroy(self) -> None:
        self.action.destroy()
        self.gripper_action.destroy()

    # -- joint_trajectory_controller ----------------------------------------------------------
    def _refuse(self, reason: str) -> None:
        self.throttle.warn("trajectory", f"{TRAJECTORY}: {reason}")

    def on_topic(self, msg: JointTrajectory) -> None:
        if TRAJECTORY not in self.active:
            self.throttle.warn("inactive", f"{TRAJECTORY} is not active: trajectory ignored")
            return
        with self.lock:
            reason = validate(msg, self.arm_joints, self.now(), self.limits)
            if reason is not None:
                self._refuse(reason)
                return
            self._install(msg)

    def _tick_action_clock(self) -> None:
        """The action servers' clock to simulated time (with ``use_sim_time``)."""
        if self.sim_time:
            stamp = self.node.get_clock().now()
            assert isinstance(self.action_clock, ROSClock)
            self.action_clock.set_ros_time_override(stamp)

    def on_goal(self, goal) -> GoalResponse:
        self._tick_action_clock()
        if TRAJECTORY not in self.active:
            self._refuse("Can't accept new action goals. Controller is not running.")
            return GoalResponse.REJECT
        with self.lock:
            reason = validate(goal.trajectory, self.arm_joints, self.now(), self.limits)
        if reason is not None:
            self._refuse(reason)
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def on_accepted(self, handle) -> None:
        goal = _Goal(handle)
        with self.lock:
            self.goals[id(handle)] = goal
            if self.goal is not None:  # preempt_active_goal
                result = FollowJointTrajectory.Result()
                result.error_code = FollowJointTrajectory.Result.INVALID_GOAL
                result.error_string = "Current goal preempted by new incoming action."
                self._end(self.goal, "abort", result)
            self._install(handle.request.trajectory)
            tol, error = tolerances(self.default_tolerances, handle.request, self.arm_joints)
            if error is not None:
                self._refuse(error)
            self.tolerances = tol
            self.goal = goal
            self._wake_monitor()
        handle.execute()

    def on_cancel(self, handle) -> CancelResponse:
        self._tick_action_clock()
        with self.lock:
            if self.goal is not None and self.goal.handle is handle:
                self._end(self.goal, "canceled", FollowJointTrajectory.Result())
                self.goal = None
                self._hold()
        return CancelResponse.ACCEPT

    async def execute(self, handle):
        """Every accepted goal's execute callback: waits for the update to end it."""
        with self.lock:
            goal = self.goals[id(handle)]
        try:
            kind, result = await goal.done
        finally:
            with self.lock:
                self.goals.pop(id(handle), None)
        getattr(handle, kind)()  # succeed, abort or canceled
        return result

    def _end(self, goal: _Goal, kind: str, result) -> None:
        """Mark a goal ended; the monitor sends it (loop lock held)."""
        if goal.outcome is None:
            goal.outcome = (kind, result)
            self.finished.append(goal)
            self._wake_monitor()

    def _wake_monitor(self) -> None:
        """Start the non-realtime side's timer if it stopped (``run_non_realtime``): it runs
        only while there is something to send, since each of its wake-ups costs the executor a
        pass over every entity of the node (a fifth of a core at 20 Hz with these controllers)."""
        if self.monitor.is_canceled():
            self.monitor.reset()
            executor = self.node.executor
            if executor is not None:
                executor.wake()

    def _install(self, msg) -> None:
        """A validated trajectory becomes the active one (loop lock held)."""
        q = self.servos.last_q[self.arm_k]
        self.trajectory = Trajectory(msg, self.arm_joints, self.now(), q)

    def _hold(self) -> None:
        """Hold the current positions (set_hold_position, loop lock held)."""
        q = self.servos.last_q[self.arm_k]
        hold = JointTrajectory()
        hold.joint_names = list(self.arm_joints)
        point = JointTrajectoryPoint()
        point.positions = q.tolist()
        hold.points = [point]
        self.trajectory = Trajectory(hold, self.arm_joints, self.now(), q)

    def update(self, period: float) -> None:
        """The controllers' update (physics thread, loop lock held)."""
        if self.trajectory is not None and TRAJECTORY in self.active:
            self._update_trajectory()
        if GRIPPER in self.active and self.gripper_joints:
            self._update_gripper()

    def _update_trajectory(self) -> None:
        """Sample the trajectory, command the servos and check the tolerances; the controller
        state and the goal's feedback are kept as arrays (``_Sample``) and turned into
        messages by the non-realtime side when it sends them."""
        now = self.now()
        traj = self.trajectory
        assert traj is not None
        p, v, a, index, past_end = traj.sample(now)
        q = self.servos.last_q[self.arm_k]
        qd = self.servos.last_v[self.arm_k]
        error_p = p - q
        self.servos.command_positions(self.arm_k, p, v)
        sample = _Sample(p, v, a, q, qd, int(index))
        self.sample = sample
        if self.monitor.is_canceled() and self.state_pub.get_subscription_count():
            self._wake_monitor()
        goal = self.goal
        if goal is None:
            return
        errors = np.zeros((len(self.arm_joints), 3))
        errors[:, 0] = error_p  # velocity errors: only with a velocity command interface
        tol = self.tolerances
        goal.feedback = partial(sample.feedback, self.arm_joints)
        if not past_end and not within_all(errors, tol.state):
            result = FollowJointTrajectory.Result()
            result.error_code = FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED
            result.error_string = "Aborted due to path tolerance violation"
            self._end(goal, "abort", result)
            self.goal = None
            self._hold()
            return
        if past_end:
            late = now - traj.end
            if within_all(errors, tol.goal):
                result = FollowJointTrajectory.Result()
                result.error_code = FollowJointTrajectory.Result.SUCCESSFUL
                result.error_string = "Goal successfully reached!"
                self._end(goal, "succeed", result)
                self.goal = None
            elif tol.goal_time != 0.0 and late > tol.goal_time:
                result = FollowJointTrajectory.Result()
                result.error_code = FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED
                result.error_string = f"Aborted due to goal_time_tolerance exceeding by {late:f} seconds"
                self._end(goal, "abort", result)
                self.goal = None
                self._hold()

    def on_query(self, request, response):
        with self.lock:
            if self.trajectory is None:
                response.success, response.message = False, "Currently there is no valid trajectory instance."
                return response
            t = seconds(request.time)
            p, v, acc, _, _ = self.trajectory.sample(t)
        response.success = True
        response.name = list(self.arm_joints)
        response.position, response.velocity, response.acceleration = p.tolist(), v.tolist(), acc.tolist()
        return response

    # -- forward_command_controller -----------------------------------------------------------
    def on_forward(self, name: str, mode: str, msg: Float64MultiArray) -> None:
        if name not in self.active:
            self.throttle.warn(f"inactive-{name}", f"{name} is not active: command ignored")
            return
        joints = self.claims[name]
        if len(msg.data) != len(joints):
            self.throttle.warn(
                name,
                f"{name}: command size ({len(msg.data)}) does not match number of interfaces ({len(joints)})",
            )
            return
        try:
            with self.lock:
                ignored = self.servos.command(
                    mode, dict(zip(joints, [float(x) for x in msg.data], strict=True))
                )
        except ValueError as exc:
            self.throttle.warn(name, f"{name}: command refused: {exc}")
            return
        if ignored:
            self.throttle.warn(f"{name}-ignored", f"{name}: the firmware ignored the setpoints of {ignored}")

    # -- parallel_gripper_action_controller ----------------------------------------------------
    def on_gripper_goal(self, goal) -> GoalResponse:
        self._tick_action_clock()
        if GRIPPER not in self.active or not self.gripper_joints:
            self.throttle.warn(
                "gripper", f"{GRIPPER}: Can't accept new action goals. Controller is not running."
            )
            return GoalResponse.REJECT
        cmd = goal.command
        if len(cmd.position) != 1:
            self.throttle.warn(
                "gripper",
                f"{GRIPPER}: Received action goal with wrong number of position values, expects 1, "
                f"got {len(cmd.position)}",
            )
            return GoalResponse.REJECT
        joint = self.gripper_joints[0]
        x = cmd.position[0]
        effort = list(cmd.effort)
        if not np.isfinite(x) or not self.limits.lower[joint] <= x <= self.limits.upper[joint]:
            self.throttle.warn(
                "gripper",
                f"{GRIPPER}: position {x} of {joint} is outside its limits "
                f"[{self.limits.lower[joint]:g}, {self.limits.upper[joint]:g}]",
            )
            return GoalResponse.REJECT
        if effort and (not np.isfinite(effort[0]) or effort[0] < 0.0):
            self.throttle.warn(
                "gripper", f"{GRIPPER}: effort {effort[0]} is not a finite, non-negative force"
            )
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def on_gripper_accepted(self, handle) -> None:
        goal = _Goal(handle)
        cmd = handle.request.command
        with self.lock:
            self.goals[id(handle)] = goal
            if self.gripper_goal is not None:
                self._end(self.gripper_goal, "canceled", self._gripper_result())
            self.gripper_target = float(cmd.position[0])
            k = self.servos.names.index(self.gripper_joints[0])
            limit = float(self.servos.effort_limit[k])
            self.gripper_effort = min(float(cmd.effort[0]), limit) if len(cmd.effort) else limit
            self.servos.grip_limit(self.gripper_joints[0], self.gripper_effort)
            self.servos.command("position", {self.gripper_joints[0]: self.gripper_target})
            self.last_movement = self.now()
            self.gripper_goal = goal
            self._wake_monitor()
        handle.execute()

    def on_gripper_cancel(self, handle) -> CancelResponse:
        self._tick_action_clock()
        with self.lock:
            goal = self.gripper_goal
            if goal is not None and goal.handle is handle:
                self._end(goal, "canceled", self._gripper_result())
                self.gripper_goal = None
                k = self.servos.names.index(self.gripper_joints[0])
                self.servos.command("position", {self.gripper_joints[0]: float(self.servos.last_q[k])})
        return CancelResponse.ACCEPT

    def _gripper_result(self, reached: bool = False, stalled: bool = False):
        k = self.servos.names.index(self.gripper_joints[0])
        result = ParallelGripperCommand.Result()
        result.state.name = [self.gripper_joints[0]]
        result.state.position = [float(self.servos.last_q[k])]
        result.state.effort = [float(self.servos.effort[k])]
        result.reached_goal, result.stalled = reached, stalled
        return result

    def _update_gripper(self) -> None:
        goal = self.gripper_goal
        if goal is None:
            return
        k = self.servos.names.index(self.gripper_joints[0])
        x, v = float(self.servos.last_q[k]), float(self.servos.last_v[k])
        effort = float(self.servos.effort[k])
        goal.feedback = partial(_gripper_feedback, self.gripper_joints[0], x, v, effort)
        if abs(self.gripper_target - x) < GRIPPER_GOAL_TOLERANCE:
            self._end(goal, "succeed", self._gripper_result(reached=True))
            self.gripper_goal = None
        elif abs(v) > STALL_VELOCITY:
            self.last_movement = self.now()
        elif self.now() - self.last_movement > STALL_TIMEOUT:
            self._end(goal, "abort", self._gripper_result(stalled=True))
            self.gripper_goal = None

    # -- the non-realtime side ----------------------------------------------------------------
    def run_non_realtime(self) -> None:
        """Feedback of the active goals, the ended goals' results, the controller state."""
        with self.lock:
            finished, self.finished = self.finished, []
            goals = [g for g in (self.goal, self.gripper_goal) if g is not None]
            feedback = [(g, g.feedback) for g in goals if g.feedback is not None]
            sample = self.sample
            wanted = (
                sample is not None and TRAJECTORY in self.active and self.state_pub.get_subscription_count()
            )
            if not goals and not wanted:
                self.monitor.cancel()  # nothing more to send until _wake_monitor
        if goals or finished:
            self._tick_action_clock()
        for g, fb in feedback:
            if g.handle.is_active:
                g.handle.publish_feedback(fb())
        for g in finished:
            if not g.done.done():
                g.done.set_result(g.outcome)
        if wanted:
            assert sample is not None
            state = sample.controller_state(self.arm_joints)
            state.header.stamp = self.node.get_clock().now().to_msg()
            self.state_pub.publish(state)


class _ActionNode:
    """``node`` as an action server sees it, with ``clock`` as its clock (its handle, logger,
    executor, callback group and waitables are the node's)."""

    def __init__(self, node: Node, clock: Clock) -> None:
        self._node, self._clock = node, clock

    def get_clock(self) -> Clock:
        return self._clock

    def __getattr__(self, name: str):
        return getattr(self._node, name)


class _Sample:
    """The trajectory controller's reference and the joints' state at one update; the messages
    are built from it when they are sent (at the action monitor rate, not at every update)."""

    def __init__(self, p, v, a, q, qd, index: int) -> None:
        self.p, self.v, self.a, self.q, self.qd, self.index = p, v, a, q, qd, index

    def controller_state(self, joints: list[str]) -> JointTrajectoryControllerState:
        state = JointTrajectoryControllerState()
        state.joint_names = list(joints)
        state.reference.positions, state.reference.velocities = self.p.tolist(), self.v.tolist()
        state.reference.accelerations = self.a.tolist()
        state.feedback.positions, state.feedback.velocities = self.q.tolist(), self.qd.tolist()
        state.error.positions = (self.p - self.q).tolist()
        state.output.positions = self.p.tolist()
        state.speed_scaling_factor = 1.0
        return state

    def feedback(self, joints: list[str]) -> FollowJointTrajectory.Feedback:
        feedback = FollowJointTrajectory.Feedback()
        feedback.joint_names = list(joints)
        feedback.desired.positions, feedback.desired.velocities = self.p.tolist(), self.v.tolist()
        feedback.desired.accelerations = self.a.tolist()
        feedback.actual.positions, feedback.actual.velocities = self.q.tolist(), self.qd.tolist()
        feedback.error.positions = (self.p - self.q).tolist()
        feedback.index = self.index
        return feedback


def _gripper_feedback(joint: str, x: float, v: float, effort: float) -> ParallelGripperCommand.Feedback:
    feedback = ParallelGripperCommand.Feedback()
    feedback.state.name = [joint]
    feedback.state.position, feedback.state.velocity = [x], [v]
    feedback.state.effort = [effort]
    return feedback
