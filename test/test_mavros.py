"""The MAVROS-compatible ArduSub shim over real DDS: a user's script using only rclpy and
mavros_msgs, in its own process, flies the simulated BlueROV2; ALT_HOLD holds depth against
a push; the message types and QoS are MAVROS's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from geometry_msgs.msg import WrenchStamped
from mavros_msgs.msg import OverrideRCIn, RCIn, RCOut, State
from mavros_msgs.srv import CommandBool, SetMode
from rclpy.qos import DurabilityPolicy, QoSProfile, qos_profile_sensor_data
from ros_helpers import call, simulator, spin_until
from sensor_msgs.msg import Imu
from std_msgs.msg import Float64

pytestmark = pytest.mark.ros
SCRIPT = Path(__file__).with_name("mavros_user_script.py")


def test_user_script_flies_the_simulated_bluerov2():
    """Arm via cmd/arming (refused with throttle applied), MANUAL forward stick via
    rc/override: rc/out shows the vectored mix and local_position moves forward; disarm returns
    every output to 1500; a bogus mode is refused with mode_sent false."""
    with simulator(real_time_factor=1.0, physics_rate=250.0) as (sim, _user, _executor):
        assert sim.vehicles[0].shim is not None
        run = subprocess.run(
            [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120, check=False
        )
        findings = json.loads(run.stdout.strip().splitlines()[-1]) if run.stdout.strip() else {}
        assert run.returncode == 0, (json.dumps(findings), run.stderr[-2000:])
        assert findings["moved_north_m"] > 0.2


def test_alt_hold_keeps_depth_under_a_push_and_topic_types():
    """ALT_HOLD at 2 m: a 30 N (about 3 kgf) downward push for 2 s: ArduSub's depth cascade
    (its acceleration integrator takes about a second to answer the push) lets the vehicle dip
    less than 0.4 m, and it returns within 0.05 m once released;
    rel_alt, imu/data, rc/in and rc/out carry MAVROS's types and QoS."""
    with simulator(real_time_factor=2.0, physics_rate=250.0) as (_sim, user, executor):
        last = {}
        latched = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        user.create_subscription(State, "mavros/state", lambda m: last.__setitem__("state", m), latched)
        user.create_subscription(
            Float64,
            "mavros/global_position/rel_alt",
            lambda m: last.__setitem__("alt", m),
            qos_profile_sensor_data,
        )
        user.create_subscription(
            Imu, "mavros/imu/data", lambda m: last.__setitem__("imu", m), qos_profile_sensor_data
        )
        user.create_subscription(RCIn, "mavros/rc/in", lambda m: last.__setitem__("rc_in", m), 10)
        user.create_subscription(RCOut, "mavros/rc/out", lambda m: last.__setitem__("rc_out", m), 10)
        override = user.create_publisher(OverrideRCIn, "mavros/rc/override", 10)
        push = user.create_publisher(WrenchStamped, "cmd_wrench", 10)
        arming = user.create_client(CommandBool, "mavros/cmd/arming")
        set_mode = user.create_client(SetMode, "mavros/set_mode")
        assert spin_until(
            executor, lambda: all(k in last for k in ("state", "alt", "imu", "rc_in", "rc_out"))
        )
        assert last["imu"].header.frame_id == "base_link" and last["imu"].linear_acceleration.z > 9.0
        assert call(executor, set_mode, SetMode.Request(custom_mode="ALT_HOLD")).mode_sent
        assert call(executor, arming, CommandBool.Request(value=True)).success
        assert spin_until(executor, lambda: last["state"].armed and last["state"].mode == "ALT_HOLD")
        neutral = OverrideRCIn(channels=[1500] * 8 + [OverrideRCIn.CHAN_NOCHANGE] * 10)
        spin_until(executor, lambda: False, timeout=3.0, every=lambda: override.publish(neutral))
        alt0 = last["alt"].data
        down = WrenchStamped()
        down.wrench.force.z = -30.0  # FLU: down
        samples = []

        def pushing():
            push.publish(down)
            samples.append(last["alt"].data)

        spin_until(executor, lambda: False, timeout=1.0, every=pushing)  # 2 s of sim time at RTF 2
        push.publish(WrenchStamped())
        assert min(samples) > alt0 - 0.4
        print(f"ALT_HOLD dip under a 30 N push: {alt0 - min(samples):.3f} m")
        assert spin_until(
            executor,
            lambda: abs(last["alt"].data - alt0) < 0.05,
            timeout=10,
            every=lambda: override.publish(neutral),
        )
        assert len(last["rc_in"].channels) == 9 and last["rc_in"].rssi == 255
        assert len(last["rc_out"].channels) == 6


def test_manual_control_and_rc_override_timeout():
    """manual_control/send x = 500 becomes RC channel 5 = 1500 + 0.4 · 0.5 · 500 = 1600 (ArduSub's
    joystick transform at the default gain 0.5); with no pilot input for 3 s (simulated)
    ArduSub's pilot input failsafe acts: sticks and servo outputs to neutral, disarmed, and
    mavros/state says so."""
    from mavros_msgs.msg import ManualControl

    with simulator(real_time_factor=4.0, physics_rate=250.0, use_sim_time=True) as (sim, user, executor):
        last = {}
        user.create_subscription(RCIn, "mavros/rc/in", lambda m: last.__setitem__("rc_in", m), 10)
        user.create_subscription(RCOut, "mavros/rc/out", lambda m: last.__setitem__("rc_out", m), 10)
        latched = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        user.create_subscription(State, "mavros/state", lambda m: last.__setitem__("state", m), latched)
        manual = user.create_publisher(ManualControl, "mavros/manual_control/send", 10)
        arming = user.create_client(CommandBool, "mavros/cmd/arming")
        assert spin_until(executor, lambda: "rc_out" in last and manual.get_subscription_count())
        assert call(executor, arming, CommandBool.Request(value=True)).success
        cmd = ManualControl(x=500.0, y=0.0, z=500.0, r=0.0)
        assert spin_until(
            executor,
            lambda: list(last["rc_in"].channels[:6]) == [1500, 1500, 1500, 1500, 1600, 1500],
            every=lambda: manual.publish(cmd),
        )
        assert spin_until(executor, lambda: list(last["rc_out"].channels[:4]) == [1400, 1400, 1600, 1600])
        t_last = sim.sim.state.t
        assert spin_until(executor, lambda: list(last["rc_out"].channels) == [1500] * 6, timeout=20)
        assert sim.sim.state.t - t_last > 3.0 - 0.05 and not sim.vehicles[0].shim.autopilot.armed
        assert spin_until(executor, lambda: not last["state"].armed)
