"""ArduSub's own logs as replay input: DataFlash .BIN and telemetry .tlog files written by the
tests in the real formats (test/ardupilot_logs.py) from a simulated flight, read by pymavlink
through ``replay.ardupilot_log``, replayed, validated window by window, and fuzzed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ardupilot_logs import MESSAGES_3X, DataFlashWriter, TelemetryLogWriter, euler_deg

from uvms_sim.actuators.ardusub import mix, thrust_to_pwm
from uvms_sim.model import load
from uvms_sim.replay.ardupilot_log import calibration_depth, read_ardupilot_log
from uvms_sim.replay.bag import BagError
from uvms_sim.replay.run import free_joint_state, replay
from uvms_sim.replay.windows import run_from_recording, summary, validate, with_reversed_motors
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"
REVERSED = {2}  # the recording vehicle's motor 2 is mounted reversed (MOT_2_DIRECTION = -1)
SERVO_OF_MOTOR = {1: 1, 2: 2, 3: 10, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8}  # motor 3 wired to servo 10
BOOT = 5.0  # s of boot time before the flight


def fly(seconds: float, seed: int = 0):
    """The Heavy (motor 2 reversed) under a new random ArduSub mix every second, the reversed
    motor's output mirrored as ArduSub's mixer does; samples every 10 ms of (t, q, v, pwm by
    motor)."""
    system = with_reversed_motors(load(CONFIG / "bluerov2_heavy.yaml"), REVERSED)
    system.environment.surface = None
    sim = Simulator.from_system(system)
    q0 = sim.state.q.copy()
    q0[2] = 3.0  # 3 m deep
    sim.reset(q0)
    rng = np.random.default_rng(seed)
    samples = []
    pwm = np.full(8, 1500.0)
    for k in range(round(seconds / 0.01)):
        if k % 100 == 0:
            out = mix("vectored_6dof", rng.uniform(-0.2, 0.2), 0, rng.uniform(-0.4, 0.4),
                      rng.uniform(-0.5, 0.5),
                      rng.uniform(-0.6, 0.6), 0)  # fmt: skip
            pwm = np.array(thrust_to_pwm([out[m] * (-1.0 if m in REVERSED else 1.0) for m in range(1, 9)]))
            sim.thrusters.set_motor_pwm(pwm)
        samples.append((sim.state.t, sim.state.q[:7].copy(), sim.state.v[:6].copy(), pwm.copy()))
        sim.step(0.01)
    return samples


def params() -> dict[str, float]:
    out = {"FRAME_CONFIG": 2.0, "BARO_SPEC_GRAV": 1.0, "BARO1_GND_PRESS": 101500.0, "EK3_SRC1_POSXY": 6.0,
           "EK3_SRC1_VELXY": 6.0, "SERVO3_REVERSED": 0.0}  # fmt: skip
    for n in range(1, 17):
        out[f"SERVO{n}_FUNCTION"] = 0.0
    for motor, servo in SERVO_OF_MOTOR.items():
        out[f"SERVO{servo}_FUNCTION"] = 32.0 + motor
        out[f"MOT_{motor}_DIRECTION"] = -1.0 if motor in REVERSED else 1.0
    return out


def servo_row(pwm: np.ndarray, width: int) -> list[int]:
    row = [0] * width
    for motor, servo in SERVO_OF_MOTOR.items():
        row[servo - 1] = int(pwm[motor - 1])
    return row


def write_dataflash(
    path: Path, samples, extra_params: dict | None = None, ardusub3: bool = False, spoil=None
) -> None:
    """The flight as ArduSub 4.x logs it (or 3.x with ``ardusub3``: IMU2/BAR2/BAT2, NKF1 and
    NKF6, ATT in centidegrees); ``spoil(k, name, fields)`` may change a record's fields."""
    log = DataFlashWriter(path, MESSAGES_3X if ardusub3 else None)

    def write(k: int, name: str, **fields) -> None:
        if spoil is not None:
            spoil(k, name, fields)
        log.write(name, **fields)

    for name, value in {**params(), **(extra_params or {})}.items():
        log.write("PARM", TimeUS=int(BOOT * 1e6) - 1000, Name=name, Value=value, Default=value)
    for k, (t, q, v, pwm) in enumerate(samples):
        us = round((BOOT + t) * 1e6)
        if k % 4 == 0:
            for imu in ("IMU", "IMU2") if ardusub3 else ("IMU",):  # IMU2 is off by 1 rad/s
                write(k, imu, TimeUS=us, I=0, GyrX=v[3] + (imu == "IMU2"), GyrY=v[4], GyrZ=v[5], AccZ=-9.81)
        if k % 10:
            continue
        roll, pitch, yaw = euler_deg(q[3:7])
        R = _rotation(q[3:7])
        vn, ve, vd = R @ v[:3]
        write(k, "RCOU", TimeUS=us, **{f"C{n + 1}": x for n, x in enumerate(servo_row(pwm, 14))})
        write(k, "ATT", TimeUS=us, Roll=roll, Pitch=pitch, Yaw=yaw, DesRoll=roll, DesPitch=pitch, DesYaw=yaw)
        for core in (0, 1):  # two EKF cores, as ArduSub logs them; core 1 is off by 1 m
            name = ("NKF1", "NKF6")[core] if ardusub3 else "XKF1"
            write(k, name, TimeUS=us, C=core, Roll=roll, Pitch=pitch, Yaw=yaw, VN=vn, VE=ve, VD=vd,
                  PN=q[0] + core, PE=q[1], PD=q[2])  # fmt: skip
        for n, baro in enumerate(("BARO", "BAR2") if ardusub3 else ("BARO",)):  # BAR2 in the air: 0 m
            write(k, baro, TimeUS=us, I=0, Alt=-q[2] * (1 - n), Press=101500.0 + 9800.0 * q[2], H=1)
        for n, bat in enumerate(("BAT", "BAT2") if ardusub3 else ("BAT",)):
            write(k, bat, TimeUS=us, Inst=0, Volt=15.8 - 3 * n, H=1)
    log.close()


def _rotation(quat: np.ndarray) -> np.ndarray:
    from transforms3d.quaternions import quat2mat

    return quat2mat(quat)


def write_telemetry(
    path: Path,
    samples,
    extra_params: dict | None = None,
    reboot: bool = False,
    boot: float = BOOT,
    spoil=None,
) -> None:
    """The flight as a ground station records ArduSub's telemetry, ``boot`` s after the
    autopilot booted; ``spoil(k, name, fields)`` may change a message's fields."""
    log = TelemetryLogWriter(path, spoil)
    wall = 1_700_000_000_000_000  # the ground station's clock, unrelated to the autopilot's boot clock
    all_params = {**params(), **(extra_params or {})}
    for n, (name, value) in enumerate(all_params.items()):
        log.send("PARAM_VALUE", wall, param_id=name.encode(), param_value=value, param_type=9,
                 param_count=len(all_params), param_index=n)  # fmt: skip
    for k, (t, q, v, pwm) in enumerate(samples):
        if k % 5:
            continue
        ms, us = round((boot + t) * 1e3), round((boot + t) * 1e6)
        stamp = wall + us + 3000 * (k % 7)  # link jitter in the receive stamps only
        roll, pitch, yaw = np.radians(euler_deg(q[3:7]))
        log.send("ATTITUDE", stamp, time_boot_ms=ms, roll=roll, pitch=pitch, yaw=yaw, rollspeed=v[3],
                 pitchspeed=v[4], yawspeed=v[5])  # fmt: skip
        if k % 10 == 0:
            vn, ve, vd = _rotation(q[3:7]) @ v[:3]
            log.send(
                "LOCAL_POSITION_NED", stamp, time_boot_ms=ms, x=q[0], y=q[1], z=q[2], vx=vn, vy=ve, vz=vd
            )
            log.send("SERVO_OUTPUT_RAW", stamp, time_usec=us % 2**32, port=0, **{  # a uint32: it wraps
                f"servo{n + 1}_raw": x for n, x in enumerate(servo_row(pwm, 16))})  # fmt: skip
            log.send("SCALED_IMU", stamp, time_boot_ms=ms, xacc=0, yacc=0, zacc=-1000, xgyro=int(v[3] * 1000),
                     ygyro=int(v[4] * 1000), zgyro=int(v[5] * 1000), xmag=0, ymag=0, zmag=0)  # fmt: skip
        if k % 100 == 0:
            log.send("SYS_STATUS", stamp, onboard_control_sensors_present=0,
                     onboard_control_sensors_enabled=0,
                     onboard_control_sensors_health=0, load=0, voltage_battery=15800, current_battery=0,
                     battery_remaining=90, drop_rate_comm=0, errors_comm=0, errors_count1=0, errors_count2=0,
                     errors_count3=0, errors_count4=0)  # fmt: skip
        if k == 1000:
            log.raw(b"\x00\xfe\x13garbage from a noisy link\xfd\x09")
    if reboot:  # the autopilot restarts: its boot clock starts again
        for k in range(20):
            log.send("SERVO_OUTPUT_RAW", wall + 10**9 + k * 100_000, time_usec=100_000 * k, port=0,
                     **{f"servo{n + 1}_raw": 1900 for n in range(16)})  # fmt: skip
    log.close()


@pytest.fixture(scope="module")
def flight():
    return fly(30.0)


def truth_rows(samples, step: int):
    t = np.array([s[0] for s in samples[::step]])
    return t, np.array([s[1] for s in samples[::step]]), np.array([s[2] for s in samples[::step]])


def check_motion(bag, samples, step: int, att_tol_deg: float, lost: int = 0, every: int = 1):
    """The log's motion, read back into the physics frames, equals the flight's at the same
    boot times: position and velocity to float32 (the logs store float32), attitude to the
    log's resolution (centidegrees in XKF1); at most ``lost`` samples missing. Position and
    velocity are checked at every ``every``-th sample, where the log has them (in between they
    are interpolated)."""
    t_true, q_true, v_true = truth_rows(samples, step)
    t, odo = bag.odometry.arrays()
    assert len(t_true) - lost <= len(t) <= len(t_true)
    match = np.searchsorted(t_true - t_true[0], t - t[0] - 1e-3)
    np.testing.assert_allclose(t - t[0], t_true[match] - t_true[0], atol=1.5e-3)
    for k, j in enumerate(match):
        q, v = free_joint_state(odo[k])
        angle = 2 * np.degrees(np.arccos(min(1.0, abs(float(q[3:7] @ q_true[j, 3:7])))))
        assert angle < att_tol_deg, (k, angle)
        if j % every == 0:
            np.testing.assert_allclose(q[:3], q_true[j, :3], atol=1e-4)
            np.testing.assert_allclose(v[:3], v_true[j, :3], atol=2e-3)  # rotated with the logged attitude


def test_dataflash_logs_are_read_as_arducopter_writes_them(tmp_path, flight):
    """A .BIN with the motor functions on other servos, a reversed motor, two EKF cores,
    IMU, barometer and battery: the commands come out by motor number (motor 3 from servo
    10), the reversed motor is recognised from MOT_2_DIRECTION, core 0's estimate becomes the
    odometry (to the log's 0.01 degree resolution), and IMU, battery and frame are there."""
    path = tmp_path / "00000042.BIN"
    write_dataflash(path, flight)
    bag = read_ardupilot_log(path)
    assert (
        bag.format == "ArduPilot DataFlash" and bag.command_topic == "RCOU" and bag.odometry_topic == "XKF1"
    )
    assert bag.reversed_motors == frozenset(REVERSED) and bag.frame == "vectored_6dof" and bag.horizontal
    _, cmds = bag.commands.arrays()
    assert cmds.shape == (len(flight) // 10, 8)
    np.testing.assert_array_equal(cmds[:, 2], [s[3][2] for s in flight[::10]])  # motor 3 via servo 10
    np.testing.assert_array_equal(cmds[:, 1], [s[3][1] for s in flight[::10]])
    check_motion(bag, flight, 10, att_tol_deg=0.03)
    assert len(bag.imu.t) == len(flight) // 4 and np.median(bag.battery.values) == pytest.approx(15.8)
    assert calibration_depth(bag.parameters) == 0.0  # calibrated at the surface


def test_a_dataflash_log_replays_the_flight_only_with_its_motor_directions(tmp_path, flight):
    """Replayed on the nominal Heavy with the log's MOT_2_DIRECTION applied, the flight comes
    back (position RMSE < 2 cm over 30 s; the start state is the log's, to its resolution);
    with motor 2 taken as nominal it does not (> 20 cm)."""
    path = tmp_path / "flight.BIN"
    write_dataflash(path, flight)
    bag = read_ardupilot_log(path)
    system = load(CONFIG / "bluerov2_heavy.yaml")
    system.environment.surface = None
    _, measured = bag.odometry.arrays()
    errors = {}
    for label, motors in (("log", bag.reversed_motors), ("nominal", frozenset())):
        _, predicted = replay(with_reversed_motors(system, motors), bag, dt=0.01)
        errors[label] = float(np.sqrt(np.mean(np.sum((predicted[:, :3] - measured[:, :3]) ** 2, axis=1))))
    assert errors["log"] < 0.02 and errors["nominal"] > 0.2, errors


def test_telemetry_logs_use_the_autopilot_clock_and_survive_link_noise_and_a_reboot(tmp_path, flight):
    """A .tlog: PARAM_VALUE, ATTITUDE at 20 Hz, LOCAL_POSITION_NED and SERVO_OUTPUT_RAW at
    10 Hz, with jittered receive stamps, a burst of garbage bytes and a reboot at the end: the
    samples are on the autopilot's boot clock (not the jittered stamps), the garbage costs the
    one message it corrupts (as on a real link), the rebooted part is dropped with a warning,
    and the motion is the flight's."""
    path = tmp_path / "flight.tlog"
    write_telemetry(path, flight, reboot=True)
    bag = read_ardupilot_log(path)
    assert bag.format == "MAVLink telemetry log" and bag.odometry_topic == "ATTITUDE"
    assert bag.reversed_motors == frozenset(REVERSED) and bag.frame == "vectored_6dof"
    t_cmd, cmds = bag.commands.arrays()
    assert len(t_cmd) == len(flight) // 10 and np.all(cmds < 1900)  # nothing of the rebooted part
    np.testing.assert_array_equal(cmds[:, 2], [s[3][2] for s in flight[::10]])
    # ATTITUDE at 20 Hz, the position at 10 Hz; the garbage swallowed one ATTITUDE
    check_motion(bag, flight, 5, att_tol_deg=1e-3, lost=1, every=2)
    assert np.median(bag.battery.values) == pytest.approx(15.8) and len(bag.imu.t) == len(flight) // 10


def test_windows_of_a_log_without_horizontal_navigation_score_heave_and_yaw_only(tmp_path, flight):
    """EK3_SRC1_POSXY = VELXY = 0 (no GPS, DVL or external navigation: most BlueROV2s): the
    EKF's horizontal velocity is not a measurement, so windows score w and r only, and the
    model (the recording vehicle itself) beats both baselines on them."""
    path = tmp_path / "nonav.BIN"
    write_dataflash(path, flight, {"EK3_SRC1_POSXY": 0.0, "EK3_SRC1_VELXY": 0.0})
    bag = read_ardupilot_log(path)
    assert not bag.horizontal
    system = load(CONFIG / "bluerov2_heavy.yaml")
    system.environment.surface = None
    results = validate(system, [run_from_recording("nonav", bag)], seconds=5.0)
    assert all(set(r.rmse) == {"w", "r"} for r in results)
    s = summary(results)
    assert "rmse_u" not in s
    for axis in "wr":
        assert s[f"rmse_{axis}"] < 0.2 * min(s[f"constant_rmse_{axis}"], s[f"zero_rmse_{axis}"])


def test_a_barometer_calibrated_under_water_moves_the_depth(tmp_path, flight):
    """ArduSub's depth is relative to the pressure at calibration (BAROn_GND_PRESS): booted 2 m
    under water (SITL, a reboot in the water) the log says 0 m where the vehicle was at 2 m;
    the reader puts the depth back and says so."""
    path = tmp_path / "deep.BIN"
    shifted = [(t, np.r_[q[:2], q[2] - 2.0, q[3:]], v, p) for t, q, v, p in flight]
    write_dataflash(path, shifted, {"BARO1_GND_PRESS": 101325.0 + 9800.0 * 2.0})
    bag = read_ardupilot_log(path)
    assert any("calibrated 2.00 m under water" in n for n in bag.notes)
    check_motion(bag, flight, 10, att_tol_deg=0.03)


def test_replay_command_line_on_ardusub_logs(tmp_path, flight, capsys):
    """``uvms-sim replay x.BIN y.tlog --config bluerov2_heavy --window 5``: one report per log
    (format, parameters, reversed motors, IMU, battery) and one windowed validation in which
    the model beats both baselines; ``--voltage log`` puts the thrusters on the logs' battery
    voltage (and a CSV run, which has none, is refused)."""
    from uvms_sim.cli import main as cli_main

    write_dataflash(tmp_path / "a.BIN", flight)
    write_telemetry(tmp_path / "b.tlog", flight)
    args = ["replay", str(tmp_path / "a.BIN"), str(tmp_path / "b.tlog"), "--config", "bluerov2_heavy"]
    assert cli_main([*args, "--window", "5", "--dt", "0.01"]) == 0
    text = capsys.readouterr().out
    assert "(ArduPilot DataFlash): 300 commands on RCOU, 300 autopilot estimate on XKF1" in text
    assert "(MAVLink telemetry log)" in text and "reversed motors (MOT_n_DIRECTION = -1): 2" in text
    assert (
        "battery: median 15.80 V" in text and "11 windows (0 failed)" in text
    )  # 6 of the .BIN (10 Hz), 5 of the .tlog (20 Hz, one lost)
    assert "the model beats both baselines on speed, u v w r" in text
    assert cli_main(args) == 2  # two recordings and nothing to do with both
    assert "several recordings" in capsys.readouterr().err
    # the thrusters on the logs' battery voltage (15.8 V, where the flight was flown at 16 V)
    assert cli_main([*args, "--window", "5", "--dt", "0.01", "--voltage", "log"]) == 0
    at_log = capsys.readouterr().out
    assert "thrusters on 15.80, 15.80 V" in at_log and "11 windows (0 failed)" in at_log
    assert float(at_log.split("speed DTW ")[1].split()[0]) > float(text.split("speed DTW ")[1].split()[0])
    csv = tmp_path / "run.csv"
    csv.write_text("x,y,z,qw,qx,qy,qz,u,v,w,p,q,r,pwm1\n" + "0,0,-1,1,0,0,0,0,0,0,0,0,0,1500\n" * 3)
    assert cli_main(["replay", str(csv), "--config", "bluerov2_heavy", "--voltage", "log"]) == 2
    assert "has no battery voltage" in capsys.readouterr().err
    fixed = Path(__file__).parent / "data" / "bluerov2_heavy_wu2018.yaml"  # preset t200_16v: no voltage model
    assert cli_main(["replay", str(csv), "--config", str(fixed), "--voltage", "12"]) == 2
    assert "needs thrusters modelled from the T200 tables" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".BIN", ".tlog"])
def test_hostile_logs_give_one_line_errors(tmp_path, flight, suffix):
    """Random bytes, an empty file, a truncated log and one without servo outputs: a BagError
    naming the file or the intact part of the log, never a traceback or a hang."""
    rng = np.random.default_rng(7)
    cases = {"random": rng.bytes(200_000), "empty": b""}
    good = tmp_path / f"good{suffix}"
    (write_dataflash if suffix == ".BIN" else write_telemetry)(good, flight[:1000])
    data = good.read_bytes()
    cases["truncated"] = data[: len(data) // 2 + 3]
    cases["flipped"] = bytes(b ^ 0x5A if k % 97 == 0 else b for k, b in enumerate(data))
    for name, content in cases.items():
        path = tmp_path / f"{name}{suffix}"
        path.write_bytes(content)
        try:
            bag = read_ardupilot_log(path)
        except BagError as exc:
            assert str(path) in str(exc) and "\n" not in str(exc)
            continue
        t, cmds = bag.commands.arrays()  # what was read is usable
        assert len(t) and np.all(np.isfinite(cmds)) and np.all(np.diff(t) > 0)
        assert np.all(np.isfinite(bag.odometry.arrays()[1]))
    with pytest.raises(BagError, match="no such log"):
        read_ardupilot_log(tmp_path / f"missing{suffix}")


def test_the_same_flight_replays_alike_from_a_bag_a_dataflash_log_and_a_telemetry_log(tmp_path, flight):
    """Whatever the format, the same flight gives the same windowed errors (speed DTW and
    per-axis RMSE within 5 mm/s; the logs hold float32 and centidegrees): the readers agree on
    frames, clocks, servo mapping and motor directions."""
    from uvms_sim.replay.bag import odometry_message, rcout_message, read_bag, typestore, write_bag
    from uvms_sim.replay.run import odometry_row

    system = load(CONFIG / "bluerov2_heavy.yaml")
    system.environment.surface = None
    write_dataflash(tmp_path / "f.BIN", flight)
    write_telemetry(tmp_path / "f.tlog", flight)
    store = typestore()
    stamps = [1_700_000_000_000_000_000 + round(t * 1e9) for t, *_ in flight[::10]]
    write_bag(tmp_path / "f_bag", {
        "/mavros/rc/out": ("mavros_msgs/msg/RCOut", [
            (ns, rcout_message(store, ns, s[3])) for ns, s in zip(stamps, flight[::10], strict=True)]),
        "/odom": ("nav_msgs/msg/Odometry", [
            (ns, odometry_message(store, ns, odometry_row(s[1], s[2])))
            for ns, s in zip(stamps, flight[::10], strict=True)]),
    })  # fmt: skip
    bag = read_bag(tmp_path / "f_bag")
    bag.reversed_motors = frozenset(REVERSED)  # a bag does not record them: --reversed-motors 2
    recordings = [bag, read_ardupilot_log(tmp_path / "f.BIN"), read_ardupilot_log(tmp_path / "f.tlog")]
    s = [summary(validate(system, [run_from_recording("f", r)], seconds=4.0)) for r in recordings]
    assert [x["windows"] for x in s] == [7, 7, 7] and all(x["failed"] == 0 for x in s)
    for key in ("speed_dtw", "rmse_u", "rmse_v", "rmse_w", "rmse_r"):  # (the baselines depend on the rate)
        assert max(x[key] for x in s) - min(x[key] for x in s) < 0.005, (key, [x[key] for x in s])


def test_ardusub_3_logs_are_read_with_their_own_formats(tmp_path, flight):
    """An ArduSub 3.x .BIN (IMU2, BAR2 and BAT2 as messages of their own without an instance
    field, ATT in centidegrees, EKF2's NKF1 and NKF6): instance 0 of each is taken (IMU, not
    IMU2, which is off by 1 rad/s; BAT, not BAT2), NKF1 becomes the odometry and the motion is
    the flight's to the log's 0.01 degree resolution."""
    path = tmp_path / "sub35.BIN"
    write_dataflash(path, flight, ardusub3=True)
    bag = read_ardupilot_log(path)
    assert bag.odometry_topic == "XKF1" and bag.reversed_motors == frozenset(REVERSED)
    check_motion(bag, flight, 10, att_tol_deg=0.03)
    _, imu = bag.imu.arrays()
    np.testing.assert_allclose(imu[:, 0], [s[2][3] for s in flight[::4]], atol=1e-6)  # IMU, not IMU2
    assert np.median(bag.battery.values) == pytest.approx(15.8)


def _spoiler(field_of: dict[str, str], every: int, value: float):
    """Sets ``value`` in the named field of every ``every``-th record of those kinds."""

    def spoil(k: int, name: str, fields: dict) -> None:
        if name in field_of and k > 0 and k % every == 0:
            fields[field_of[name]] = value

    return spoil


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 1e34])
def test_non_finite_and_huge_log_values_are_dropped_with_a_counted_warning(tmp_path, flight, value, caplog):
    """NaN, inf or 1e34 (beyond the bags' bound of 1e6) in ATT, XKF1, IMU and BARO of a .BIN
    and in ATTITUDE and LOCAL_POSITION_NED of a .tlog: those samples are dropped and counted in
    one warning; what is left is finite and is the flight."""
    spoil = _spoiler({"ATT": "Roll", "XKF1": "PN", "IMU": "GyrX", "BARO": "Alt"}, 70, value)
    write_dataflash(tmp_path / "f.BIN", flight[:2000], spoil=spoil)
    spoil = _spoiler({"ATTITUDE": "roll", "LOCAL_POSITION_NED": "x"}, 7, value)
    write_telemetry(tmp_path / "f.tlog", flight[:2000], spoil=spoil)
    for name in ("f.BIN", "f.tlog"):
        caplog.clear()
        bag = read_ardupilot_log(tmp_path / name)
        t, odo = bag.odometry.arrays()
        assert np.all(np.isfinite(odo)) and np.all(np.abs(odo) < 1e6) and len(t) > 100
        assert np.all(np.isfinite(bag.imu.arrays()[1]))
        [warning] = [r.getMessage() for r in caplog.records if "not finite or beyond 1e6" in r.getMessage()]
        assert (
            ("XKF1" in warning and "IMU" in warning) if name == "f.BIN" else "LOCAL_POSITION_NED" in warning
        )
        with_bad = np.array([s[0] for s in flight[:2000:10]])
        if name == "f.BIN":  # XKF1 every 7th record (of the 10 ms samples: every 70th)
            check_motion(bag, flight[:2000], 10, att_tol_deg=0.03, lost=len(with_bad) // 7 + 1)


def test_attitude_infinite_or_a_barometer_of_no_water_is_no_math_error(tmp_path, flight):
    """ATT roll inf (with no EKF in the log) and BARO_SPEC_GRAV 0 (which would divide by zero):
    the sample is dropped, and the specific gravity taken as 1.0 with a note."""

    def spoil(k: int, name: str, fields: dict) -> None:
        if name == "XKF1":
            fields["C"] = 2  # no core 0: the attitude comes from ATT
        if name == "ATT" and k == 500:
            fields["Roll"] = float("inf")

    path = tmp_path / "att.BIN"
    write_dataflash(path, flight[:1000], {"BARO_SPEC_GRAV": 0.0, "BARO1_GND_PRESS": 121000.0}, spoil=spoil)
    bag = read_ardupilot_log(path)
    assert bag.odometry_topic == "ATT" and np.all(np.isfinite(bag.odometry.arrays()[1]))
    assert len(bag.odometry.t) == 99
    assert any("BARO_SPEC_GRAV = 0 is no water's" in n for n in bag.notes)
    assert calibration_depth(bag.parameters) == pytest.approx((121000.0 - 101325.0) / 9800.0)


def test_a_telemetry_log_past_71_minutes_unwraps_the_servo_clock(tmp_path, flight):
    """SERVO_OUTPUT_RAW.time_usec is a uint32 of microseconds: 71.6 min after boot it wraps.
    A .tlog that crosses it keeps every command, on the boot clock of the other messages
    (not taken for a reboot)."""
    boot = 2**32 * 1e-6 - 10.0  # the wrap 10 s into the flight
    path = tmp_path / "long.tlog"
    write_telemetry(path, flight, boot=boot)
    bag = read_ardupilot_log(path)
    t_cmd, cmds = bag.commands.arrays()
    assert len(t_cmd) == len(flight) // 10
    np.testing.assert_allclose(np.diff(t_cmd), 0.1, atol=1e-5)
    np.testing.assert_array_equal(cmds[:, 2], [s[3][2] for s in flight[::10]])


def test_a_reboot_in_the_first_second_keeps_the_longest_boot(tmp_path, flight, caplog, capsys):
    """The autopilot rebooted 0.5 s into the log: the longest boot (the flight after it) is
    used with a warning; a window longer than any recording is a one-line error, exit 2
    (no "0 windows ... nan")."""
    from uvms_sim.cli import main as cli_main

    log = TelemetryLogWriter(tmp_path / "reboot.tlog")
    for k in range(5):  # 0.5 s of the first boot
        log.send("SERVO_OUTPUT_RAW", 1000 + k, time_usec=4_000_000 + 100_000 * k, port=0,
                 **{f"servo{n + 1}_raw": 1900 for n in range(16)})  # fmt: skip
        log.send("ATTITUDE", 1000 + k, time_boot_ms=4000 + 100 * k, roll=0, pitch=0, yaw=0, rollspeed=0,
                 pitchspeed=0, yawspeed=0)  # fmt: skip
    log.close()
    with open(tmp_path / "reboot.tlog", "ab") as f:
        write_telemetry(tmp_path / "after.tlog", flight[:1500], boot=1.0)
        f.write((tmp_path / "after.tlog").read_bytes())
    bag = read_ardupilot_log(tmp_path / "reboot.tlog")
    t_cmd, cmds = bag.commands.arrays()
    assert len(t_cmd) == 150 and np.all(cmds < 1900)
    assert any("boot 2 of 2 is used" in r.getMessage() for r in caplog.records)
    short = tmp_path / "short.tlog"
    write_telemetry(short, flight[:300])
    args = ["replay", str(short), "--config", "bluerov2_heavy", "--window", "5"]
    assert cli_main(args) == 2
    err = capsys.readouterr().err
    assert "no 5 s window fits in the recordings (the longest has 3.0 s of motion)" in err


@pytest.mark.parametrize("kind", ["zeros", "text"])
def test_a_file_that_is_no_dataflash_log_is_one_line(tmp_path, capfd, kind):
    """A 1 MiB zero-filled .BIN and a text file named .BIN: pymavlink's thousands of
    "bad header" lines are kept off the terminal, and the error is one line naming the file."""
    path = tmp_path / "x.BIN"
    path.write_bytes(bytes(1 << 20) if kind == "zeros" else b"time,depth\n0.0,1.0\n" * 20_000)
    with pytest.raises(BagError) as info:
        read_ardupilot_log(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    out, err = capfd.readouterr()
    assert len((out + err).splitlines()) <= 2


def test_replay_progress_is_a_line_per_tenth_in_a_pipe(tmp_path, flight, capsys):
    """``uvms-sim replay x.BIN`` with its output not on a terminal: the progress is a line every
    tenth of the replay (not one long line of carriage returns)."""
    from uvms_sim.cli import main as cli_main

    write_dataflash(tmp_path / "a.BIN", flight[:1000])
    assert cli_main(["replay", str(tmp_path / "a.BIN"), "--config", "bluerov2_heavy", "--dt", "0.01"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("replaying")]
    assert "\r" not in err and 10 <= len(lines) <= 12 and "100 of 100" in lines[-1]
