"""The camera's tilt and the lights driven by ArduSub's servo outputs (``uvms_sim.actuators.
camera_mount``), checked against ArduPilot's own servo mapping and through a node flown by a
SITL JSON peer over real UDP on loopback (``uvms_sim.hil.sitl_peer``, as test_sitl_json.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from uvms_sim.actuators.camera_mount import CameraMount, check_tilt_pwm

MAX_TILT = math.radians(45.0)


def ardupilot_pwm(
    angle_deg: float, pitch_min: float, pitch_max: float, servo_min=1100, servo_max=1900, reversed_=False
):
    """ArduPilot's ``SRV_Channels::move_servo`` (what AP_Mount_Servo writes for a tilt angle):
    the angle's fraction of MNT1_PITCH_MIN..MAX, clamped, onto SERVOn_MIN..MAX (truncated to
    a whole microsecond, as its uint16)."""
    v = min(1.0, max(0.0, (angle_deg - pitch_min) / (pitch_max - pitch_min)))
    v = 1.0 - v if reversed_ else v
    return int(servo_min + v * (servo_max - servo_min))


@pytest.mark.parametrize("angle", [-45.0, -30.0, -7.5, 0.0, 12.0, 44.0, 45.0])
def test_ardusub_angles_are_the_cameras_with_the_mount_set_up(angle):
    """MNT1_PITCH_MIN/MAX = -45/45 (the camera's max_tilt): the angle ArduSub commands is the
    camera's tilt, within the 1 us of ArduPilot's whole-microsecond PWM (0.11 degree)."""
    mount = CameraMount(MAX_TILT)
    pwm = [1500] * 16
    pwm[9] = ardupilot_pwm(angle, -45.0, 45.0)  # SERVO10: mount tilt
    assert math.degrees(mount.tilt(tuple(pwm))) == pytest.approx(angle, abs=90.0 / 800.0 + 1e-9)


def test_the_ends_hold_zero_is_nothing_and_a_reversed_servo_swaps():
    mount = CameraMount(MAX_TILT)
    pwm = [0] * 16
    assert mount.tilt(tuple(pwm)) is None and mount.lights(tuple(pwm)) is None  # outputs not set up
    pwm[9], pwm[8] = 2100, 1000
    assert mount.tilt(tuple(pwm)) == pytest.approx(MAX_TILT) and mount.lights(tuple(pwm)) == 0.0
    pwm[9], pwm[8] = 1100, 1500
    assert mount.tilt(tuple(pwm)) == pytest.approx(-MAX_TILT) and mount.lights(tuple(pwm)) == pytest.approx(
        0.5
    )
    # a Navigator: SERVO16 tilt, reversed (SERVO16_REVERSED = 1), SERVO13 lights
    navigator = CameraMount(MAX_TILT, tilt_servo=16, lights_servo=13, tilt_pwm=(1900.0, 1100.0))
    pwm = [1500] * 16
    pwm[15] = ardupilot_pwm(20.0, -45.0, 45.0, reversed_=True)
    pwm[12] = 1900
    assert math.degrees(navigator.tilt(tuple(pwm))) == pytest.approx(20.0, abs=0.12)
    assert navigator.lights(tuple(pwm)) == 1.0
    assert CameraMount(MAX_TILT, tilt_servo=20).tilt((1500,) * 16) is None  # beyond the 16 outputs


@pytest.mark.parametrize("bad", [[1100.0], [1500, 1505], [0, 1900], "1100,1900", [True, 1900], None])
def test_bad_tilt_pwms_are_one_line_errors(bad):
    with pytest.raises(ValueError, match=r"^parameter mount_tilt_pwm: expected two PWMs") as info:
        check_tilt_pwm(bad)
    assert "\n" not in str(info.value)


def test_sitl_servo_outputs_tilt_the_camera_and_set_the_lights(tmp_path):
    """The node with ``sitl_port`` and a camera: SITL JSON frames (the strict peer of
    ArduPilot's SIM_JSON over UDP) with SERVO10 (mount tilt) at ArduSub's PWM for +30 degrees
    and SERVO9 (lights) at 1700 us turn the camera up by 30 degrees (its optical frame on /tf)
    and publish lights at 0.75; then SERVO10 at ArduSub's -20 degrees turns it down."""
    from net_helpers import free_udp_port
    from ros_helpers import simulator, spin_until
    from std_msgs.msg import Float64
    from test_camera import _tilt_of
    from test_video import camera_description
    from tf2_msgs.msg import TFMessage

    from uvms_sim.hil.sitl_peer import SimJsonPeer

    port = free_udp_port()
    with simulator(description=camera_description(tmp_path), sitl_port=port) as (sim, user, executor):
        tilts: list[float] = []
        lights: list[float] = []

        def on_tf(msg: TFMessage) -> None:
            tilts.extend(_tilt_of(t) for t in msg.transforms if t.child_frame_id == "front_optical")

        user.create_subscription(TFMessage, "/tf", on_tf, 100)
        user.create_subscription(Float64, "camera/front/lights", lambda m: lights.append(m.data), 10)
        peer = SimJsonPeer(("127.0.0.1", port), rate_hz=400)
        pwm = [1500] * 16
        pwm[8], pwm[9] = 1700, ardupilot_pwm(30.0, -45.0, 45.0)

        def frames() -> None:
            for _ in range(20):
                assert peer.update(pwm)

        assert spin_until(
            executor,
            lambda: bool(tilts) and abs(math.degrees(tilts[-1]) - 30.0) < 0.2,
            every=frames,
            timeout=30,
        )
        assert spin_until(
            executor, lambda: bool(lights) and lights[-1] == pytest.approx(0.75), every=frames, timeout=10
        )
        pwm[9] = ardupilot_pwm(-20.0, -45.0, 45.0)
        assert spin_until(
            executor, lambda: abs(math.degrees(tilts[-1]) + 20.0) < 0.2, every=frames, timeout=30
        )
        assert sim.sitl.servo_outputs(0) == tuple(pwm)
        assert np.all(np.isfinite(sim.sim.state.q))
        peer.close()


def test_the_emulated_ardusub_turns_rc8_into_a_tilt_rate_and_passes_rc9_to_the_lights():
    """ArduSub's mount in RC targeting with MNT1_RC_RATE 30 deg/s: channel 8 at 1900 for 1 s
    tilts up 30 degrees (1700: half that rate), 1500 holds, the angle stops at MNT1_PITCH_MAX;
    SERVO10 carries the angle as ``SRV_Channels::move_servo`` maps it (which the camera's
    ``CameraMount`` reads back as the same angle) and SERVO9 channel 9's PWM. Armed or not."""
    from uvms_sim.actuators.ardusub import ArduSubEmulator, VehicleState

    ap = ArduSubEmulator("vectored_6dof", mount_limits=(-MAX_TILT, MAX_TILT))
    state = VehicleState(0.0, 0.0, 0.0, np.zeros(3), 1.0, 0.0)
    mount = CameraMount(MAX_TILT)

    def run(seconds: float, dt: float = 0.005) -> None:
        for _ in range(round(seconds / dt)):
            ap.update(state, dt)

    assert ap.servo_outputs({})[8:10] == (0, 1500)  # no lights given yet; the mount level
    assert mount.lights(ap.servo_outputs({})) is None
    ap.set_rc([65535] * 7 + [1900])
    run(1.0)
    assert math.degrees(ap.mount_tilt) == pytest.approx(30.0, abs=1e-9)
    pwm = ap.servo_outputs({})
    assert pwm[9] == ardupilot_pwm(30.0, -45.0, 45.0)
    assert math.degrees(mount.tilt(pwm)) == pytest.approx(30.0, abs=0.12)  # one microsecond
    ap.set_rc([65535] * 7 + [1500])
    run(2.0)
    assert math.degrees(ap.mount_tilt) == pytest.approx(30.0, abs=1e-9)
    ap.set_rc([65535] * 7 + [1700])
    run(2.0)  # 15 deg/s for 2 s: held at MNT1_PITCH_MAX
    assert ap.mount_tilt == MAX_TILT and ap.servo_outputs({})[9] == 1900
    ap.arm()
    ap.set_rc([65535] * 7 + [1100, 1300])
    run(0.5)
    assert math.degrees(ap.mount_tilt) == pytest.approx(30.0, abs=1e-9)
    assert ap.servo_outputs({})[8] == 1300 and mount.lights(ap.servo_outputs({})) == pytest.approx(0.25)
    ap.set_rc([65535] * 8 + [65534])  # channel 9's release (and 0, 65535): the lights stay
    ap.set_rc([65535] * 8 + [0])
    assert ap.servo_outputs({})[8] == 1300


def test_an_rc_override_tilts_the_camera_and_sets_the_lights(tmp_path):
    """The node's emulated ArduSub over DDS: ``mavros/rc/override`` with channel 8 at 1900
    (OverrideRCIn, 18 channels) turns the camera up at 30 deg/s (its optical frame on /tf, in
    simulated time) to its max_tilt, 1500 holds it there; channel 9 at 1700 publishes lights
    0.75 on ``camera/front/lights``; channel 8 at 1100 turns it down."""
    from mavros_msgs.msg import OverrideRCIn
    from ros_helpers import simulator, spin_until
    from std_msgs.msg import Float64
    from test_camera import _tilt_of
    from test_video import camera_description
    from tf2_msgs.msg import TFMessage

    with simulator(description=camera_description(tmp_path)) as (sim, user, executor):
        tilts: list[tuple[float, float]] = []
        lights: list[float] = []

        def on_tf(msg: TFMessage) -> None:
            tilts.extend(
                (t.header.stamp.sec + 1e-9 * t.header.stamp.nanosec, _tilt_of(t))
                for t in msg.transforms
                if t.child_frame_id == "front_optical"
            )

        user.create_subscription(TFMessage, "/tf", on_tf, 100)
        user.create_subscription(Float64, "camera/front/lights", lambda m: lights.append(m.data), 10)
        override = user.create_publisher(OverrideRCIn, "mavros/rc/override", 10)

        def send(ch8: int, ch9: int) -> None:
            msg = OverrideRCIn()
            msg.channels = [OverrideRCIn.CHAN_NOCHANGE] * 7 + [ch8, ch9] + [OverrideRCIn.CHAN_NOCHANGE] * 9
            override.publish(msg)

        assert spin_until(executor, lambda: bool(tilts), timeout=30)
        assert tilts[-1][1] == pytest.approx(0.0, abs=1e-9)
        send(1900, 1700)
        assert spin_until(executor, lambda: abs(math.degrees(tilts[-1][1]) - 45.0) < 0.2, timeout=30)
        rising = [(t, a) for t, a in tilts if 0.1 < math.degrees(a) < 40.0]
        assert len(rising) >= 3  # 30 deg/s of simulated time (the camera reads the mount at 10 Hz)
        (t0, a0), (t1, a1) = rising[0], rising[-1]
        assert math.degrees(a1 - a0) / (t1 - t0) == pytest.approx(30.0, rel=0.1)
        assert spin_until(executor, lambda: bool(lights) and lights[-1] == pytest.approx(0.75), timeout=10)
        send(1500, 0)
        n = len(tilts)
        assert spin_until(executor, lambda: len(tilts) > n + 5, timeout=30)
        assert math.degrees(tilts[-1][1]) == pytest.approx(45.0, abs=0.2)
        send(1100, 0)
        assert spin_until(executor, lambda: math.degrees(tilts[-1][1]) < 0.0, timeout=30)
        assert lights[-1] == pytest.approx(0.75)
        assert np.all(np.isfinite(sim.sim.state.q))
