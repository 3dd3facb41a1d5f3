"""The simulator node over real DDS: commands in, motion out with REP-103/REP-105 signs, TF,
sensors, /clock, services, failsafe; malformed input never crashes it."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped, WrenchStamped
from mavros_msgs.msg import State
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile
from ros_helpers import call, simulator, spin_until
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import FluidPressure, Imu, JointState
from std_msgs.msg import Float64, Float64MultiArray, UInt16MultiArray
from std_srvs.srv import SetBool, Trigger
from tf2_msgs.msg import TFMessage
from transforms3d.quaternions import quat2mat

from uvms_sim.ros import messages

pytestmark = pytest.mark.ros


class Listener:
    """A user node that keeps the last messages of the topics it listens to."""

    def __init__(self, node, ns: str = "") -> None:
        self.node = node
        self.msgs: dict[str, list] = {}
        latched = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        for topic, kind in (
            ("odom", Odometry), ("imu", Imu), ("pressure", FluidPressure), ("depth", Float64),
            ("thrusters/thrust", Float64MultiArray), ("joint_states", JointState), ("/tf", TFMessage),
            ("/clock", Clock),
        ):  # fmt: skip
            self.listen(ns + topic if not topic.startswith("/") else topic, kind)
        self.msgs["/tf_static"] = []
        node.create_subscription(TFMessage, "/tf_static", self.msgs["/tf_static"].append, latched)

    def listen(self, topic: str, kind, qos=50) -> None:
        box: list = []
        self.msgs[topic] = box
        self.node.create_subscription(kind, topic, box.append, qos)

    def last(self, topic: str):
        return self.msgs[topic][-1] if self.msgs[topic] else None


def test_pwm_moves_forward_and_down_with_rep103_signs_and_sensors():
    """Vectored BlueROV2 (heading north): a small forward PWM pattern gives +x in base_link and
    +y in odom (ENU); the vertical thrusters above 1500 us push down: odom z decreases and
    depth and pressure grow. IMU reads the specific force (about +g up at rest)."""
    with simulator(real_time_factor=4.0, physics_rate=250.0, command_timeout=5.0, ardusub_frame="none") as (
        _sim,
        user,
        executor,
    ):
        ear = Listener(user)
        pwm = user.create_publisher(UInt16MultiArray, "thrusters/pwm", 10)
        ready = ("odom", "imu", "pressure", "depth")
        assert spin_until(
            executor, lambda: pwm.get_subscription_count() > 0 and all(ear.last(t) for t in ready)
        )
        imu = ear.last("imu")
        assert imu.header.frame_id == "base_link"
        assert 9.0 < imu.linear_acceleration.z < 10.6 and abs(imu.linear_acceleration.x) < 0.2
        # the truth IMU's attitude and rate are the odometry's of the same cycle (1e-15: the same numbers)
        same = lambda: [o for o in ear.msgs["odom"] if o.header.stamp == imu.header.stamp]  # noqa: E731
        assert spin_until(executor, same)
        odom = same()[-1]
        o, w = odom.pose.pose.orientation, odom.twist.twist.angular
        r, x = imu.orientation, imu.angular_velocity
        assert (r.x, r.y, r.z, r.w, x.x, x.y, x.z) == pytest.approx(
            (o.x, o.y, o.z, o.w, w.x, w.y, w.z), abs=1e-15
        )
        p0 = ear.last("pressure").fluid_pressure
        g = _sim.sim.env.gravity
        # the truth pressure and depth are published together each cycle; the last message of
        # each that this node has taken in may come from different cycles (the vehicle rises):
        # the pressure equals the formula at the depth of its own cycle, one of those received
        depths = [m.data for m in ear.msgs["depth"]]
        assert min(abs(p0 - (101325.0 + 1000 * g * d)) for d in depths) < 1e-9 * p0, (p0, depths[-3:])
        start = ear.last("odom").pose.pose.position
        forward = UInt16MultiArray(data=[1440, 1440, 1560, 1560, 1500, 1500])
        assert spin_until(
            executor,
            lambda: ear.last("odom").twist.twist.linear.x > 0.1,
            every=lambda: pwm.publish(forward),
            timeout=30,
        )
        odom = ear.last("odom")
        assert odom.pose.pose.position.y - start.y > 0.0 and abs(odom.pose.pose.position.x - start.x) < 0.05
        assert odom.header.frame_id == "odom" and odom.child_frame_id == "base_link"
        thrust = ear.last("thrusters/thrust").data
        assert len(thrust) == 6 and thrust[0] < 0 < thrust[2]
        z0, d0 = ear.last("odom").pose.pose.position.z, ear.last("depth").data
        down = UInt16MultiArray(data=[1500, 1500, 1500, 1500, 1650, 1650])
        assert spin_until(
            executor, lambda: ear.last("depth").data > d0 + 0.3, every=lambda: pwm.publish(down), timeout=30
        )
        assert ear.last("odom").pose.pose.position.z < z0 - 0.25
        assert ear.last("pressure").fluid_pressure > p0


def test_tf_tree_is_complete_and_matches_odometry():
    """Light-arm BlueROV2: odom -> base_link (dynamic, equal to odometry), base_link ->
    base_link_frd and odom -> odom_ned (static), base_link_frd -> arm_link1 -> ... -> arm_link4;
    joint_commands positions are reached and reported in joint_states."""
    with simulator(
        description="bluerov2_light_arm", real_time_factor=4.0, physics_rate=250.0, command_timeout=30.0
    ) as (
        _sim,
        user,
        executor,
    ):
        ear = Listener(user)
        cmd = user.create_publisher(JointState, "joint_commands", 10)
        assert spin_until(
            executor, lambda: ear.last("/tf") and ear.msgs["/tf_static"] and cmd.get_subscription_count()
        )
        static = {(t.header.frame_id, t.child_frame_id) for m in ear.msgs["/tf_static"] for t in m.transforms}
        assert {("odom", "odom_ned"), ("base_link", "base_link_frd")} <= static
        dynamic = {(t.header.frame_id, t.child_frame_id): t for t in ear.last("/tf").transforms}
        chain = [("odom", "base_link"), ("base_link_frd", "arm_link1")] + [
            (f"arm_link{k}", f"arm_link{k + 1}") for k in (1, 2, 3)
        ]
        assert set(chain) <= set(dynamic)
        target = JointState(name=["arm_joint2", "arm_joint3"], position=[0.4, -0.3])
        js = lambda: ear.last("joint_states")  # noqa: E731
        reached = lambda: js() and abs(js().position[1] - 0.4) < 0.02 and abs(js().position[2] + 0.3) < 0.02  # noqa: E731
        assert spin_until(executor, reached, every=lambda: cmd.publish(target), timeout=30)
        assert list(js().name) == ["arm_joint1", "arm_joint2", "arm_joint3", "arm_joint4"]
        # each joint's transform turns by the position joint_states gives at the same stamp
        # (its joint's tree rotation times the rotation about its axis; 1e-12: rounding)
        model = _sim.sim.model
        same = [
            (m, j)
            for m in ear.msgs["/tf"][-20:]
            for j in ear.msgs["joint_states"][-20:]
            if m.transforms[0].header.stamp == j.header.stamp
        ]
        assert same
        tf_msg, state = same[-1]
        moved = {x.child_frame_id: x.transform.rotation for x in tf_msg.transforms}
        tree = messages.tree_quaternions(model)
        for k, i in enumerate(_sim.motors.index):  # the bodies of joint_states' joints, in order
            q = np.array(model.neutral(), dtype=float)
            q[model.idx_q[i]] = state.position[k]
            r = moved[f"arm_link{k + 1}"]
            want = messages.joint_quaternion(model, i, q, tree[i])
            np.testing.assert_allclose([r.w, r.x, r.y, r.z], want if want[0] >= 0.0 else -want, atol=1e-12)
        # odom -> base_link equals the odometry published with it (origin and attitude)
        tf_msg = ear.last("/tf")
        odom = [o for o in ear.msgs["odom"] if o.header.stamp == tf_msg.transforms[0].header.stamp]
        assert odom
        t = {(x.header.frame_id, x.child_frame_id): x for x in tf_msg.transforms}[("odom", "base_link")]
        p = odom[-1].pose.pose
        assert (
            t.transform.translation.x,
            t.transform.translation.y,
            t.transform.translation.z,
        ) == pytest.approx((p.position.x, p.position.y, p.position.z), abs=1e-12)
        r, o = t.transform.rotation, p.orientation
        assert (r.x, r.y, r.z, r.w) == pytest.approx((o.x, o.y, o.z, o.w), abs=1e-12)
        # base_link -> base_link_frd is the FLU/FRD flip
        tr = next(
            x for m in ear.msgs["/tf_static"] for x in m.transforms if x.child_frame_id == "base_link_frd"
        )
        r = tr.transform.rotation
        np.testing.assert_allclose(quat2mat([r.w, r.x, r.y, r.z]), np.diag([1.0, -1.0, -1.0]), atol=1e-12)


def test_sim_time_clock_services_and_failsafe():
    """With use_sim_time the node publishes /clock and stamps its messages in simulated time
    (at real_time_factor 0 it runs as fast as it can: how fast is benchmarks/bench_node.py's
    business, since here it shares a process with the test); pause stops it, step advances one
    publish period, reset returns to the initial pose; a PWM command times out to zero thrust."""

    with simulator(
        use_sim_time=True, real_time_factor=0.0, physics_rate=200.0, command_timeout=0.5, ardusub_frame="none"
    ) as (
        sim,
        user,
        executor,
    ):
        ear = Listener(user)
        pwm = user.create_publisher(UInt16MultiArray, "thrusters/pwm", 10)
        assert spin_until(executor, lambda: len(ear.msgs["/clock"]) > 5 and pwm.get_subscription_count())
        # the node's own clock is set where it publishes /clock, not through a /clock subscription
        assert not [s for s in sim.subscriptions if s.topic_name == "/clock"]
        assert 0.0 < sim.get_clock().now().nanoseconds * 1e-9 < 1e6  # simulated time, not the epoch's

        def clock() -> float:
            return ear.last("/clock").clock.sec + ear.last("/clock").clock.nanosec * 1e-9

        clock0 = clock()
        assert spin_until(executor, lambda: clock() - clock0 > 1.0)  # it runs: 1 s of simulated time
        stamp = ear.last("odom").header.stamp
        t_odom = stamp.sec + stamp.nanosec * 1e-9
        # stamped with simulated time, not the wall clock's: at or after the first /clock, and soon
        # passed by /clock (the two topics may arrive in either order)
        assert clock0 <= t_odom
        assert spin_until(executor, lambda: clock() >= t_odom, timeout=5)
        # failsafe: thrust appears, then returns to zero once the command is older than 0.5 s
        pwm.publish(UInt16MultiArray(data=[1500, 1500, 1500, 1500, 1700, 1700]))
        assert spin_until(
            executor, lambda: ear.last("thrusters/thrust") and ear.last("thrusters/thrust").data[4] > 5.0
        )
        assert spin_until(executor, lambda: ear.last("thrusters/thrust").data[4] == 0.0, timeout=10)
        pause = user.create_client(SetBool, "pause")
        step = user.create_client(Trigger, "step")
        reset = user.create_client(Trigger, "reset")
        assert call(executor, pause, SetBool.Request(data=True)).success
        spin_until(executor, lambda: False, timeout=0.3)
        t_paused = ear.last("odom").header.stamp
        spin_until(executor, lambda: False, timeout=0.5)
        assert ear.last("odom").header.stamp == t_paused
        assert call(executor, step, Trigger.Request()).success
        assert spin_until(executor, lambda: ear.last("odom").header.stamp != t_paused)
        assert call(executor, reset, Trigger.Request()).success
        assert call(executor, pause, SetBool.Request(data=False)).success
        assert spin_until(executor, lambda: abs(ear.last("depth").data - 2.0) < 1e-3)


def test_malformed_messages_never_crash_the_node():
    """Wrong-length PWM, NaN wrench, NaN/unknown/mismatched joint commands, a NaN pose: each is
    rejected with a warning; the node keeps publishing and its state stays finite."""
    with simulator(description="bluerov2_light_arm", real_time_factor=4.0, physics_rate=250.0) as (
        sim,
        user,
        executor,
    ):
        ear = Listener(user)
        pwm = user.create_publisher(UInt16MultiArray, "thrusters/pwm", 10)
        wrench = user.create_publisher(WrenchStamped, "cmd_wrench", 10)
        joints = user.create_publisher(JointState, "joint_commands", 10)
        pose = user.create_publisher(PoseStamped, "set_pose", 10)
        assert spin_until(
            executor,
            lambda: ear.last("odom") and pose.get_subscription_count() and joints.get_subscription_count(),
        )
        bad_wrench = WrenchStamped()
        bad_wrench.wrench.force.x = float("nan")
        bad_pose = PoseStamped()
        bad_pose.pose.position.x = float("inf")

        def publish_bad():
            pwm.publish(UInt16MultiArray(data=[1500, 1600]))
            pwm.publish(UInt16MultiArray(data=[0, 65535, 1500, 1500, 1500, 1500]))  # clamped
            wrench.publish(bad_wrench)
            joints.publish(JointState(name=["arm_joint1"], effort=[float("nan")]))
            joints.publish(JointState(name=["arm_joint1", "elbow"], position=[0.1]))
            joints.publish(JointState(name=["nope"], velocity=[1.0]))
            pose.publish(bad_pose)

        n0 = len(ear.msgs["odom"])
        assert spin_until(executor, lambda: len(ear.msgs["odom"]) > n0 + 20, every=publish_bad, timeout=20)
        assert sim.thread.is_alive()
        assert np.all(np.isfinite(sim.sim.state.q)) and np.all(np.isfinite(sim.sim.state.v))
        good = PoseStamped()
        good.pose.position.x, good.pose.position.z = 3.0, -5.0
        good.pose.orientation.w = 1.0
        assert spin_until(
            executor,
            lambda: abs(ear.last("odom").pose.pose.position.x - 3.0) < 0.05,
            every=lambda: pose.publish(good),
        )


def test_namespace_frame_prefix_and_joint_wrenches():
    """A node in namespace rov1 with frame_prefix rov1/: topics under /rov1, TF frames
    prefixed; joint_wrenches/<joint> carries the arm's reaction wrenches on request."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from ros_helpers import ros_context

    from uvms_sim.ros.node import SimulatorNode

    with ros_context() as (ctx, executor):
        params = {
            "description": "bluerov2_light_arm",
            "frame_prefix": "rov1/",
            "publish_joint_wrenches": True,
        }
        sim = SimulatorNode(
            context=ctx,
            namespace="rov1",
            parameter_overrides=[Parameter(k, value=v) for k, v in params.items()],
        )
        sim_executor = SingleThreadedExecutor(context=ctx)
        sim_executor.add_node(sim)
        threading.Thread(target=sim_executor.spin, daemon=True).start()
        user = rclpy.create_node("user", context=ctx)
        executor.add_node(user)
        got: dict = {}
        user.create_subscription(Odometry, "/rov1/odom", lambda m: got.__setitem__("odom", m), 10)
        latched = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        user.create_subscription(State, "/rov1/mavros/state", lambda m: got.__setitem__("state", m), latched)
        user.create_subscription(
            WrenchStamped, "/rov1/joint_wrenches/arm_joint2", lambda m: got.__setitem__("w", m), 10
        )
        try:
            assert spin_until(executor, lambda: {"odom", "state", "w"} <= set(got), timeout=15)
            assert (
                got["odom"].header.frame_id == "rov1/odom" and got["odom"].child_frame_id == "rov1/base_link"
            )
            w = got["w"]
            assert w.header.frame_id == "rov1/arm_link2"
            f = np.array([w.wrench.force.x, w.wrench.force.y, w.wrench.force.z])
            assert (
                np.all(np.isfinite(f)) and np.linalg.norm(f) > 0.1
            )  # the links below weigh more than they float
        finally:
            sim_executor.shutdown()
            sim.destroy_node()


def test_battery_voltage_is_a_run_time_parameter_and_currents_are_published():
    """The Heavy at 1700 us on thrusters/pwm: thrusters/current carries the tables' supply
    current; ``battery_voltage`` set to 12 V while running lowers it; 30 V and a change of
    physics_rate are refused with a reason, nothing changed."""
    from rclpy.parameter import Parameter

    from uvms_sim.actuators import t200

    with simulator(description="bluerov2_heavy", ardusub_frame="none", command_timeout=30.0) as (
        sim,
        user,
        executor,
    ):
        amps: list = []
        user.create_subscription(Float64MultiArray, "thrusters/current", amps.append, 10)
        pwm = user.create_publisher(UInt16MultiArray, "thrusters/pwm", 10)
        command = UInt16MultiArray(data=[1700] * 8)
        expected16 = float(t200.current(1700.0, 16.0))
        assert spin_until(
            executor,
            lambda: amps and amps[-1].data[0] == pytest.approx(expected16),
            every=lambda: pwm.publish(command),
        )
        result = sim.set_parameters([Parameter("battery_voltage", value=12.0)])[0]
        assert result.successful
        expected12 = float(t200.current(1700.0, 12.0))
        assert expected12 < expected16
        assert spin_until(
            executor,
            lambda: amps[-1].data[0] == pytest.approx(expected12),
            every=lambda: pwm.publish(command),
        )
        refused = sim.set_parameters([Parameter("battery_voltage", value=30.0)])[0]
        assert not refused.successful and "10-20 V" in refused.reason
        assert not sim.set_parameters([Parameter("physics_rate", value=100.0)])[0].successful
        assert sim.get_parameter("battery_voltage").value == 12.0
        assert np.nanmax(sim.sim.thrusters.voltage) == 12.0


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
def test_absurd_inputs_reset_the_physics_instead_of_killing_it():
    """A cmd_wrench of 1e6 N makes the state non-finite within steps: the node says so in the
    ROS log, puts the vehicle back to its initial state with the inputs neutral, keeps time
    running and keeps publishing finite odometry. A set_pose quaternion of 1e200 components is
    a rotation like any other; a set_pose 1e308 m deep is refused (no infinite pressure)."""
    with simulator(description="bluerov2_heavy", ardusub_frame="none", real_time_factor=0.0) as (
        sim,
        user,
        executor,
    ):
        ear = Listener(user)
        wrench = user.create_publisher(WrenchStamped, "cmd_wrench", 10)
        pose = user.create_publisher(PoseStamped, "set_pose", 10)
        assert spin_until(executor, lambda: ear.last("odom") and wrench.get_subscription_count())
        huge = WrenchStamped()
        huge.wrench.force.x = 1.0e6
        t0 = sim.sim.state.t
        assert spin_until(
            executor, lambda: sim.recoveries > 0, every=lambda: wrench.publish(huge), timeout=20
        )
        n0 = len(ear.msgs["odom"])
        assert spin_until(executor, lambda: len(ear.msgs["odom"]) > n0 + 10)
        assert sim.thread.is_alive() and sim.sim.state.t > t0
        for m in ear.msgs["odom"]:
            p = m.pose.pose.position
            assert np.all(np.isfinite([p.x, p.y, p.z]))
        big = PoseStamped()
        big.pose.position.z = -4.0
        big.pose.orientation.w = big.pose.orientation.z = 1.0e200
        assert spin_until(
            executor,
            lambda: abs(ear.last("odom").pose.pose.position.z + 4.0) < 0.05,
            every=lambda: pose.publish(big),
        )
        q = ear.last("odom").pose.pose.orientation
        assert abs(q.z) == pytest.approx(np.sqrt(0.5), abs=0.02)
        deep = PoseStamped()
        deep.pose.position.z = -1.0e308
        deep.pose.orientation.w = 1.0
        for _ in range(5):
            pose.publish(deep)
            executor.spin_once(timeout_sec=0.05)
        n1 = len(ear.msgs["pressure"])
        assert spin_until(executor, lambda: len(ear.msgs["pressure"]) > n1 + 5)
        assert all(np.isfinite(m.fluid_pressure) for m in ear.msgs["pressure"])
        assert ear.last("odom").pose.pose.position.z > -10.0


@pytest.mark.parametrize(
    ("value", "accepted"),
    [("1000", True), ("0", False), ("-500.0", False), ("1e9", False), ("fast", False)],
)
def test_rate_parameters_are_typed_with_ranges(value, accepted):
    """physics_rate:=1000 (an integer, as ROS users write it) is a rate; 0, negative, 1e9 and a
    word stop the node at once with one line naming the parameter and the range (exit 2)."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "uvms_sim.ros.node", "--ros-args", "-p", f"physics_rate:={value}",
           "-p", "description:=no_such_vehicle_so_it_stops_after_the_parameters"]  # fmt: skip
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    line = out.stderr.strip()
    assert line.count("\n") == 0, line
    if accepted:
        assert "physics_rate" not in line and "no_such_vehicle" in line
    else:
        assert line.startswith("simulator: error: parameter physics_rate: expected"), line


def test_a_misspelt_parameter_is_named_not_ignored():
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "uvms_sim.ros.node", "--ros-args", "-p", "descripton:=bluerov2",
           "-p", "physics_rate:=0"]  # fmt: skip
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "unknown parameter 'descripton' ignored (did you mean 'description'?)" in out.stderr


def test_a_malformed_params_file_is_a_one_line_error(tmp_path):
    """rcl refuses a params file it cannot parse: the node says so in one line naming the file
    and the line (exit 2), not with a traceback."""
    import subprocess
    import sys

    bad = tmp_path / "params.yaml"
    bad.write_text('simulator:\n  ros__parameters:\n    "": 1\n')
    cmd = [sys.executable, "-m", "uvms_sim.ros.node", "--ros-args", "--params-file", str(bad)]
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    line = out.stderr.strip()
    assert "\n" not in line and line.startswith("simulator: error: Failed to parse ROS arguments"), line
    assert str(bad) in line and "line 3" in line


def test_unknown_parameters_are_named_and_none_is_left_declared(capfd):
    """Overrides are declared from the node's own list (rclpy's public API): a misspelt name is
    named and undeclared again, a qos_overrides one undeclared quietly, an empty one (which
    rclpy cannot declare) named too, and an integer given for a float parameter still reaches
    check_parameter (its type is not fixed by the override)."""
    qos = "qos_overrides./tf.publisher.depth"
    with simulator(descripton="bluerov2", physics_rate=250, **{qos: 5, "": 1}) as (sim, _user, _executor):
        names = set(sim.list_parameters([], 0).names)
        assert "descripton" not in names and qos not in names and "description" in names
        assert sim.get_parameter("physics_rate").value == 250 and sim.dt == 1 / 250
    err = capfd.readouterr().err
    assert "unknown parameter 'descripton' ignored (did you mean 'description'?)" in err
    assert "unknown parameter '' ignored" in err  # a name rclpy cannot declare (Python API only)
    assert "qos_overrides" not in err and "start_type_description_service" not in err


def test_the_core_warnings_reach_the_ros_log(capfd):
    """The physics core logs (clamped PWM, dropped datagrams) through ``uvms_sim``'s logger; the
    node forwards them to its ROS logger (rcutils: level, node name, stderr)."""
    import logging

    with simulator(description="bluerov2_heavy", ardusub_frame="none") as (sim, _user, _executor):
        sim.sim.thrusters.set_pwm(np.full(8, 2500.0))
        logging.getLogger("uvms_sim").warning("probe from the core")
    err = capfd.readouterr().err
    assert "[WARN]" in err and "[simulator]" in err
    assert "probe from the core" in err and "clamped" in err


def test_time_never_runs_backwards_on_teleport_or_reset():
    """In simulated time: /clock keeps growing across a set_pose teleport and a reset (TF
    listeners and command timeouts rely on it), and the teleport lands where it was sent."""
    from std_srvs.srv import Trigger

    with simulator(description="bluerov2_heavy", use_sim_time=True, real_time_factor=0.0) as (
        sim,
        user,
        executor,
    ):
        ear = Listener(user)
        pose = user.create_publisher(PoseStamped, "set_pose", 10)
        reset = user.create_client(Trigger, "reset")
        assert spin_until(executor, lambda: len(ear.msgs["/clock"]) > 20 and pose.get_subscription_count())
        goal = PoseStamped()
        goal.pose.position.z = -7.0
        goal.pose.orientation.w = 1.0
        t_before = sim.sim.state.t
        assert spin_until(
            executor,
            lambda: ear.last("odom") and abs(ear.last("odom").pose.pose.position.z + 7.0) < 0.05,
            every=lambda: pose.publish(goal),
        )
        assert call(executor, reset, Trigger.Request()).success
        n = len(ear.msgs["/clock"])
        assert spin_until(executor, lambda: len(ear.msgs["/clock"]) > n + 20)
        stamps = [c.clock.sec + 1e-9 * c.clock.nanosec for c in ear.msgs["/clock"]]
        assert np.all(np.diff(stamps) >= 0.0) and stamps[-1] > t_before


def test_run_time_parameter_sets_are_applied_whole_or_refused_whole():
    """Over the node's parameter service (what ``ros2 param set`` uses): ``battery_voltage``
    0 after 12 V puts the description's 16 V back (the thrust with it); an atomic set of
    [battery_voltage 20, physics_rate 1000] is refused and 20 V is not applied; use_sim_time
    changed while running is refused with a reason."""
    from rclpy.parameter import Parameter
    from rclpy.parameter_client import AsyncParameterClient

    from uvms_sim.actuators import t200

    with simulator(description="bluerov2_heavy", ardusub_frame="none", command_timeout=30.0) as (
        sim,
        user,
        ex,
    ):
        client = AsyncParameterClient(user, "simulator")
        assert client.wait_for_services(5.0)

        def atomic(*params):
            future = client.set_parameters_atomically(list(params))
            assert spin_until(ex, future.done, timeout=5.0)
            return future.result().result

        def each(*params):
            future = client.set_parameters(list(params))
            assert spin_until(ex, future.done, timeout=5.0)
            return future.result().results

        bank = sim.sim.thrusters
        bank.set_motor_pwm(np.full(8, 1700.0))
        assert each(Parameter("battery_voltage", value=12.0))[0].successful
        assert np.nanmax(bank.voltage) == 12.0
        assert each(Parameter("battery_voltage", value=0.0))[0].successful
        assert np.nanmax(bank.voltage) == 16.0 and np.nanmin(bank.voltage) == 16.0
        assert float(bank.currents()[0]) == pytest.approx(
            float(t200.current(1700.0, 16.0))
        )  # the thrust's table
        result = atomic(Parameter("battery_voltage", value=20.0), Parameter("physics_rate", value=1000.0))
        assert not result.successful and "physics_rate is read at start only" in result.reason
        assert np.nanmax(bank.voltage) == 16.0 and sim.get_parameter("battery_voltage").value == 0.0
        [result] = each(Parameter("use_sim_time", value=True))
        assert not result.successful and "use_sim_time is read at start only" in result.reason
        assert sim.get_parameter("use_sim_time").value is False


@pytest.mark.parametrize(
    ("param", "expected"),
    [
        ("mavros_namespace:=bad name!", "parameter mavros_namespace: expected a ROS namespace"),
        ("frame_id:=''", "parameter frame_id: expected a TF frame id"),
        ("frame_id:=has space", "parameter frame_id: expected a TF frame id"),
        ("world_frame:=/map", "parameter world_frame: expected a TF frame id"),
        ("world_frame:=odom", "parameters world_frame and frame_id: both name 'odom'"),
    ],
)
def test_bad_names_at_start_are_one_line_errors(param, expected):
    """A namespace or frame id that ROS or TF cannot use, or a world frame that is the odometry
    frame: the node stops with one line naming the parameter (exit 2), no traceback."""
    import subprocess
    import sys
    from pathlib import Path

    cmd = [str(Path(sys.executable).parent / "simulator"), "--ros-args", "-p", "description:=bluerov2",
           "-p", param]  # fmt: skip
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out
    assert expected in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_a_first_start_says_that_it_compiles(capfd, monkeypatch):
    """With the kernels not yet in numba's cache (the first start after a pip install), the
    node says why the first odometry takes a minute and which command does it ahead; with
    them cached it says nothing about it."""
    import uvms_sim.ros.node as node_module

    monkeypatch.setattr(node_module, "kernels_compiled", lambda: False)
    with simulator(description="bluerov2", ardusub_frame="none"):
        pass
    err = capfd.readouterr().err
    assert "compiling the physics kernels" in err and "uvms-sim kernels" in err
    monkeypatch.setattr(node_module, "kernels_compiled", lambda: True)
    with simulator(description="bluerov2", ardusub_frame="none"):
        pass
    assert "compiling the physics kernels" not in capfd.readouterr().err
