"""Rosbag replay, comparison and identification on bags written and read with rosbags."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from uvms_sim.actuators.ardusub import mix, thrust_to_pwm
from uvms_sim.actuators.bank import ThrusterBank
from uvms_sim.model import load
from uvms_sim.model.export import save_yaml
from uvms_sim.model.model import Model
from uvms_sim.replay.bag import (
    BagError,
    odometry_message,
    pose_message,
    rcout_message,
    read_bag,
    typestore,
    write_bag,
)
from uvms_sim.replay.compare import compare
from uvms_sim.replay.dtw import dtw_distance
from uvms_sim.replay.identified import apply_identified, overlay_yaml
from uvms_sim.replay.identify import MIN_DISTINCT, THRUST_NAMES, _fisher, _spread, identify
from uvms_sim.replay.report import format_identification
from uvms_sim.replay.run import odometry_row, replay, write_prediction
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"

START = 1_700_000_000_000_000_000
# the recording vehicle: the BlueROV2 Heavy with Wu's (2018) hull, whose damping TRUTH lists
WU2018_HEAVY = Path(__file__).parent / "data" / "bluerov2_heavy_wu2018.yaml"


def record(
    path,
    storage,
    seconds=40.0,
    noise=0.0,
    seed=0,
    thrust_scale=(1.0, 1.0),
    poses=False,
    advance_ratio=None,
    lag=0.0,
    delay=0.0,
    buoyancy=0.0,
    command_range=(0.4, 0.5, 0.6),
):
    """A 'vehicle experiment' recorded from the simulator itself: the Heavy driven by a new
    random surge/heave/yaw command every second (ArduSub's vectored_6dof mix), RC out logged
    at each change, odometry at 20 Hz (with optional white noise on the velocities). The
    recording vehicle's thrusters push ``thrust_scale`` (forward, reverse) times the
    description's full-command thrusts and, if given, have advance ratio of zero thrust
    ``advance_ratio`` (J0). With ``poses`` the motion is logged as PoseStamped
    (100 Hz, ``noise`` metres of white noise on the position) instead of odometry. The
    recording vehicle's thrusters may also have a spin-up ``lag`` (time constant, s), its
    commands act ``delay`` seconds after they are logged, and its hull may be ``buoyancy``
    newtons more buoyant than described; ``command_range`` bounds the random surge, heave and
    yaw commands."""
    system = load(WU2018_HEAVY)
    system.environment.surface = None  # deep water: a random heave would otherwise breach the surface
    recording = system
    if buoyancy:
        body = system.model.bodies[0]
        extra = buoyancy / (system.environment.density * system.environment.gravity)
        bodies = [
            replace(body, hydro=replace(body.hydro, volume=body.hydro.volume + extra)),
            *system.model.bodies[1:],
        ]
        recording = replace(system, model=Model(bodies, name=system.model.name))
    sim = Simulator.from_system(recording)
    kinds = [
        replace(
            k,
            thrust_forward=k.thrust_forward * thrust_scale[0],
            thrust_reverse=k.thrust_reverse * thrust_scale[1],
            zero_thrust_advance_ratio=advance_ratio or k.zero_thrust_advance_ratio,
            time_constant=lag,
        )
        for k in sim.thrusters.kinds
    ]
    sim.thrusters = ThrusterBank(system.model, system.thrusters, kinds)
    store = typestore()
    rng = np.random.default_rng(seed)
    cmds, odos = [], []
    truth = record.truth = []
    k = 0
    pending: list = []  # (time it acts, pwm)
    surge, heave, yaw = command_range
    while sim.state.t < seconds - 1e-9:
        stamp = START + round(sim.state.t * 1e9)
        if k % 100 == 0:
            out = mix(
                "vectored_6dof",
                0,
                0,
                rng.uniform(-surge, surge),
                rng.uniform(-heave, heave),
                rng.uniform(-yaw, yaw),
                0,
            )
            pwm = thrust_to_pwm([out[m] for m in range(1, 9)])
            pending.append((sim.state.t + delay, pwm))
            cmds.append((stamp, rcout_message(store, stamp, pwm)))
        while pending and pending[0][0] <= sim.state.t + 1e-9:
            pwm = pending.pop(0)[1]
            sim.thrusters.set_motor_pwm({m: pwm[m - 1] for m in range(1, 9)})
        row = np.array(odometry_row(sim.state.q[:7], sim.state.v[:6]))
        if poses:
            row[:3] += noise * rng.normal(size=3)
            odos.append((stamp, pose_message(store, stamp, row)))
            truth.append(row)
        elif k % 5 == 0:
            row[7:] += noise * rng.normal(size=6)
            odos.append((stamp, odometry_message(store, stamp, row)))
        sim.step(0.01)
        k += 1
    write_bag(
        path,
        {
            "/mavros/rc/out": ("mavros_msgs/msg/RCOut", cmds),
            "/mocap/pose" if poses else "/odom": (
                "geometry_msgs/msg/PoseStamped" if poses else "nav_msgs/msg/Odometry",
                odos,
            ),
        },
        storage,
    )
    return system


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_a_bag_from_the_simulator_replays_to_the_same_trajectory(tmp_path, storage):
    """Same model, same commands, same steps: the replayed odometry equals the recorded one to
    1e-6 m (stamps round to 1 ns); the comparison table shows it (RMSE ~ 0, R = 1); the output
    bag holds /predicted/odom next to /recorded/odom."""
    bag_path = tmp_path / f"run_{storage}"
    system = record(bag_path, storage, seconds=20.0)
    bag = read_bag(bag_path)
    assert (bag.command_topic, bag.odometry_topic) == ("/mavros/rc/out", "/odom")
    assert len(bag.commands.t) == 20 and len(bag.odometry.t) == 400 and bag.out_of_order == 0
    t, predicted = replay(system, bag, dt=0.01)
    measured = bag.odometry.arrays()[1]
    np.testing.assert_allclose(predicted[:, :3], measured[:, :3], atol=1e-6)
    table = compare(t, predicted, measured)
    assert set(table) == {"x", "y", "z", "heading", "speed", "yaw_rate"}
    assert table["x"]["rmse"] < 1e-6 and table["x"]["pearson_r"] > 0.999999
    out = tmp_path / f"out_{storage}"
    write_prediction(out, bag, t, predicted, storage)
    from rosbags.highlevel import AnyReader

    with AnyReader([out], default_typestore=typestore()) as reader:
        topics = {c.topic: c.msgcount for c in reader.connections}
    assert topics == {"/predicted/odom": 400, "/recorded/odom": 400, "/tf": 400}


TRUTH = {"X_u": -4.03, "X_uu": -18.18, "Z_w": -5.18, "Z_ww": -36.99, "N_r": -0.07, "N_rr": -1.55}


def check_damping(fitted, quadratic=0.05, linear=0.5):
    """The BlueROV2's surge, heave and yaw damping (Wu 2018: X_u -4.03, X_uu -18.18, Z_w
    -5.18, Z_ww -36.99, N_r -0.07, N_rr -1.55): quadratic terms within ``quadratic``
    (relative), linear surge/heave terms within ``linear`` N s/m (at these speeds they carry
    a fifth of the damping force), and every estimate within 4 standard errors of the truth
    plus the bias of the trapezoidal integrals at 20 Hz (measured without noise: 3 % on X_u,
    1 % on the others)."""
    for name in ("X_uu", "Z_ww", "N_rr"):
        assert fitted[name][0] == pytest.approx(TRUTH[name], rel=quadratic), (name, fitted[name])
    for name in ("X_u", "Z_w"):
        assert abs(fitted[name][0] - TRUTH[name]) < linear, (name, fitted[name])
    for name, truth in TRUTH.items():
        value, se = fitted[name]
        assert abs(value - truth) <= 4 * se + 0.04 * abs(truth), (name, value, se)


def test_identification_recovers_damping(tmp_path):
    """Odometry at 20 Hz with 3 mm/s white noise on the velocities: the integral
    equation-error fit recovers the damping (``check_damping``)."""
    bag_path = tmp_path / "ident"
    system = record(bag_path, "sqlite3", seconds=60.0, noise=0.003)
    fitted = identify(system, read_bag(bag_path), axes=(0, 2, 5))
    assert set(fitted) == set(TRUTH)
    check_damping(fitted)
    text = overlay_yaml(system, fitted)
    assert "X_uu" in text and "base_link" in text and "thruster_model" not in text


def test_identification_recovers_thrust_scales_with_the_damping(tmp_path):
    """The recording vehicle's thrusters push 0.8x forward and 0.9x reverse of the described
    T200 (a weaker battery, fouled propellers) and lose thrust with advance speed faster
    (J0 = 0.6 instead of 1.0, so T_nu is 0.8/0.6 = 1.33x the described one): fitted jointly
    with the damping, the three thrust scales come back within 2 % (the thrust integrals are
    exact up to the trapezoidal rule; measured 0.5 %, 0.5 %, 0.9 %), the damping as before,
    and the written description carries the thrusts and J0 and loads back."""
    bag_path = tmp_path / "ident_thrust"
    system = record(bag_path, "mcap", seconds=60.0, noise=0.003, thrust_scale=(0.8, 0.9), advance_ratio=0.6)
    fitted = identify(system, read_bag(bag_path), axes=(0, 2, 5), thrust=True)
    assert fitted["thrust_forward_scale"][0] == pytest.approx(0.8, rel=0.02)
    assert fitted["thrust_reverse_scale"][0] == pytest.approx(0.9, rel=0.02)
    assert fitted["advance_scale"][0] == pytest.approx(0.8 / 0.6, rel=0.02)
    check_damping(fitted)
    # the damping-only fit of the same bag (thrust taken as described) is visibly wrong: the
    # thrust error goes into the damping (X_u off by more than 5 N s/m here) and the misfit
    # shows in standard errors more than 5x those of the joint fit
    wrong = identify(system, read_bag(bag_path), axes=(0, 2, 5))
    assert abs(wrong["X_u"][0] - TRUTH["X_u"]) > 5.0
    for name in ("X_uu", "Z_ww", "N_rr"):
        assert wrong[name][1] > 5 * fitted[name][1], (name, wrong[name], fitted[name])
    text = overlay_yaml(system, fitted)
    assert "thruster_model" in text and "thrust_forward" in text
    described = tmp_path / "identified.yaml"
    save_yaml(apply_identified(system, fitted), described)
    identified = load(described)
    kind = Simulator.from_system(identified).thrusters.kinds[0]
    assert kind.thrust_forward == pytest.approx(0.8 * 5.25 * 9.80665, rel=0.02)
    assert kind.zero_thrust_advance_ratio == pytest.approx(0.6, rel=0.02)
    assert identified.model.bodies[0].hydro.quadratic_damping[0] == pytest.approx(18.18, rel=0.05)


def test_pose_only_bags_are_differentiated_for_replay_and_identification(tmp_path):
    """Motion logged only as PoseStamped (100 Hz, 1 mm position noise, as a motion-capture
    system gives it): the body velocities derived from the poses match the true ones within
    1 cm/s and 0.005 rad/s RMS away from the command steps (measured: 6 mm/s, the 1 mm noise
    through a cubic Savitzky-Golay derivative over 0.27 s, and 2e-3 rad/s; within 0.2 s of a
    step the yaw rate jumps by up to 15 rad/s² and any smoothing differentiator lags), the
    replay runs from them, and the damping identified from the derived velocities is within
    5 % (quadratic) of the truth."""
    bag_path = tmp_path / "poses"
    system = record(bag_path, "sqlite3", seconds=60.0, noise=0.001, poses=True)
    truth = np.array(record.truth)
    bag = read_bag(bag_path)
    assert bag.motion_source == "pose" and bag.odometry_topic == "/mocap/pose"
    t_pose, rows = bag.odometry.arrays()
    far = np.abs(t_pose - np.round(t_pose)) > 0.2  # commands change every whole second
    err = rows[far, 7:] - truth[far, 7:]
    assert np.sqrt(np.mean(err[:, :3] ** 2)) < 0.01
    assert np.sqrt(np.mean(err[:, 3:] ** 2)) < 0.005
    t, predicted = replay(system, bag, dt=0.01)
    table = compare(t, predicted, rows)
    assert table["heading"]["pearson_r"] > 0.99
    fitted = identify(system, bag, axes=(0, 2, 5))
    for name in ("X_uu", "Z_ww", "N_rr"):
        assert fitted[name][0] == pytest.approx(TRUTH[name], rel=0.05), (name, fitted[name])


def test_corrupted_or_unusable_bags_give_clear_errors(tmp_path):
    with pytest.raises(BagError, match="no such bag"):
        read_bag(tmp_path / "missing")
    bag_path = tmp_path / "broken"
    record(bag_path, "sqlite3", seconds=2.0)
    db = next(bag_path.glob("*.db3"))
    db.write_bytes(b"not a database" * 10)
    with pytest.raises(BagError, match="broken"):
        read_bag(bag_path)
    only_odom = tmp_path / "odom_only"
    store = typestore()
    write_bag(
        only_odom,
        {
            "/odom": (
                "nav_msgs/msg/Odometry",
                [(START, odometry_message(store, START, [0] * 3 + [1] + [0] * 9))],
            )
        },
    )
    with pytest.raises(BagError, match="no thruster command topic"):
        read_bag(only_odom)


def test_dtw_handles_a_time_shift():
    """A delayed copy of a signal: RMSE sees the delay, DTW (Nielsen et al.'s (2018) measure) hardly does."""
    t = np.linspace(0, 10, 201)
    a = np.sin(t)
    b = np.sin(t - 0.5)
    assert dtw_distance(a, b, window=30) < 0.1 * np.sqrt(np.mean((a - b) ** 2))


def test_dtw_equals_the_textbook_recursion():
    """The compiled DTW equals the plain recursion D(i, j) = d(i, j) + min(D(i-1, j-1),
    D(i-1, j), D(i, j-1)) over the whole matrix, divided by the length of the path it picks
    (2-D sequences of unequal length; no band)."""
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(23, 2)), rng.normal(size=(31, 2))
    D = np.full((24, 32), np.inf)
    L = np.zeros((24, 32))
    D[0, 0] = 0.0
    for i in range(1, 24):
        for j in range(1, 32):
            options = [
                (D[i - 1, j - 1], L[i - 1, j - 1]),
                (D[i - 1, j], L[i - 1, j]),
                (D[i, j - 1], L[i, j - 1]),
            ]
            best, length = min(options, key=lambda o: o[0])  # first minimum: diagonal, then up
            D[i, j] = best + np.linalg.norm(a[i - 1] - b[j - 1])
            L[i, j] = length + 1
    assert dtw_distance(a, b) == pytest.approx(D[23, 31] / L[23, 31], rel=1e-12)


def test_live_mode_drives_a_running_simulator(tmp_path):
    """The bag player publishes the commands (16 servo channels, as in a real rc/out log) and
    /clock from the bag into a running simulator node: the node's thrusters follow them."""
    import threading

    from ros_helpers import simulator, spin_until
    from rosgraph_msgs.msg import Clock

    from uvms_sim.ros.bag_player import play

    bag_path = tmp_path / "live"
    store = typestore()
    pwm = [1500] * 4 + [1700] * 4 + [0] * 8
    cmds = [(START + k * 500_000_000, rcout_message(store, START + k * 500_000_000, pwm)) for k in range(4)]
    write_bag(bag_path, {"/mavros/rc/out": ("mavros_msgs/msg/RCOut", cmds)})
    bag = read_bag(bag_path)
    with simulator(description="bluerov2_heavy", ardusub_frame="none", command_timeout=5.0) as (
        sim,
        user,
        executor,
    ):
        clocks: list = []
        user.create_subscription(Clock, "/clock", clocks.append, 10)
        spin_until(executor, lambda: False, timeout=0.5)
        result = {}
        player = threading.Thread(target=lambda: result.setdefault("rc", play(bag, context=sim.context)))
        player.start()
        assert spin_until(executor, lambda: sim.sim.thrusters.thrust[4] > 5.0, timeout=10)
        player.join(timeout=10)
        assert result["rc"] == 0
        spin_until(executor, lambda: len(clocks) > 5, timeout=2)
        assert clocks and clocks[-1].clock.sec == START // 10**9 + 1


def test_replay_command_line(tmp_path, capsys):
    """``uvms-sim replay BAG --config CFG --out --plot --identify --window 4`` writes all three
    (the fit, of a vehicle with Wu's hull, beats the shipped Heavy on the bag's last third) and
    prints the comparison table and the counts of what it did not use; without a whole window
    in the held-out third there is nothing to choose the fit by: a one-line error."""
    from uvms_sim.cli import main as cli_main

    bag_path = tmp_path / "cli"
    record(bag_path, "mcap", seconds=15.0)
    out, png, overlay = tmp_path / "pred", tmp_path / "cmp.png", tmp_path / "overlay.yaml"
    args = ["replay", str(bag_path), "--config", "bluerov2_heavy", "--dt", "0.01"]
    full = tmp_path / "identified.yaml"
    more = [
        "--identify",
        str(overlay),
        "--identified-config",
        str(full),
        "--identify-thrust",
        "--axes",
        "u,w,r",
    ]
    assert cli_main([*args, *more]) == 2  # 12 s windows: none in the last 5 s
    assert "hold no whole 12 s window to choose the fit by" in capsys.readouterr().err
    assert cli_main([*args, "--out", str(out), "--plot", str(png), *more, "--window", "4"]) == 0
    text = capsys.readouterr().out
    assert (
        "RMSE" in text and "x real time" in text and "messages/s" in text and "thrust_forward_scale" in text
    )
    assert out.is_dir() and png.stat().st_size > 10_000 and "quadratic_damping" in overlay.read_text()
    assert len(load(full).thrusters) == 8
    assert cli_main(["replay", str(tmp_path / "nothing"), "--config", "bluerov2"]) == 2


def test_joint_commands_replay_on_the_light_arm(tmp_path):
    """A UVMS bag: RC out for the BlueROV2 plus joint efforts on joint_commands. The replay
    applies both and reproduces the recorded vehicle motion (which the arm's reaction moves)
    to 1e-6 m; the output bag carries /predicted/joint_states."""
    from rosbags.highlevel import AnyReader

    from uvms_sim.actuators.joints import JointMotors

    system = load(CONFIG / "bluerov2_light_arm.yaml")
    sim = Simulator.from_system(system)
    sim.joint_motors = JointMotors(system.model, q=system.initial_q)
    store = typestore()
    T = store.types
    cmds, odos, joints = [], [], []
    for k in range(800):
        stamp = START + round(sim.state.t * 1e9)
        if k % 200 == 0:
            pwm = [1550, 1550, 1450, 1450, 1500, 1500] if k < 400 else [1500] * 6
            sim.thrusters.set_motor_pwm({m: pwm[m - 1] for m in range(1, 7)})
            cmds.append((stamp, rcout_message(store, stamp, pwm)))
            efforts = [0.5, -0.8, 0.6, 0.1] if k < 400 else [-0.3, 0.4, -0.2, 0.0]
            sim.joint_motors.command("effort", dict(zip(sim.joint_motors.names, efforts, strict=True)))
            header = T["std_msgs/msg/Header"](
                stamp=T["builtin_interfaces/msg/Time"](sec=stamp // 10**9, nanosec=stamp % 10**9), frame_id=""
            )
            msg = T["sensor_msgs/msg/JointState"](
                header=header,
                name=list(sim.joint_motors.names),
                position=np.zeros(0),
                velocity=np.zeros(0),
                effort=np.array(efforts),
            )
            joints.append((stamp, msg))
        if k % 5 == 0:
            odos.append(
                (stamp, odometry_message(store, stamp, odometry_row(sim.state.q[:7], sim.state.v[:6])))
            )
        sim.step(0.01)
    bag_path = tmp_path / "uvms"
    write_bag(
        bag_path,
        {
            "/mavros/rc/out": ("mavros_msgs/msg/RCOut", cmds),
            "/odom": ("nav_msgs/msg/Odometry", odos),
            "/joint_commands": ("sensor_msgs/msg/JointState", joints),
        },
    )
    bag = read_bag(bag_path)
    assert bag.joint_topic == "/joint_commands" and len(bag.joints.t) == 4
    configurations: list = []
    t, predicted = replay(system, bag, dt=0.01, configurations=configurations)
    np.testing.assert_allclose(predicted[:, :3], bag.odometry.arrays()[1][:, :3], atol=1e-6)
    out = tmp_path / "out"
    write_prediction(out, bag, t, predicted, "sqlite3", system, configurations)
    with AnyReader([out], default_typestore=store) as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
    assert counts["/predicted/joint_states"] == len(t)


def test_rc_override_bags_fly_through_the_emulated_ardusub(tmp_path):
    """A bag with the pilot's side only (mavros OverrideRCIn and State, no rc/out): recorded
    from the Heavy flown by the emulated ArduSub at 200 Hz (arm, ALT_HOLD, a new stick set every
    second), it replays through the same emulator to the recorded trajectory within 1e-6 m, and
    the command line says what it did."""
    from uvms_sim.actuators.ardusub import ArduSubEmulator, VehicleState
    from uvms_sim.cli import main as cli_main
    from uvms_sim.replay.bag import override_message, state_message

    system = load(CONFIG / "bluerov2_heavy.yaml")
    sim = Simulator.from_system(system)
    autopilot = ArduSubEmulator("vectored_6dof")
    store = typestore()
    rng = np.random.default_rng(3)
    rc, states, odos = [], [], []
    k = 0
    while sim.state.t < 12.0 - 1e-9:
        stamp = START + round(sim.state.t * 1e9)
        if k == 0:
            autopilot.arm(True)
            autopilot.set_mode("ALT_HOLD")
            states.append((stamp, state_message(store, stamp, True, "ALT_HOLD")))
        if k % 200 == 0:
            sticks = [1500, 1500, int(rng.uniform(1350, 1650)), int(rng.uniform(1400, 1600)),
                      int(rng.uniform(1400, 1700)), int(rng.uniform(1400, 1600)), 0, 65535]  # fmt: skip
            autopilot.set_rc(sticks)
            rc.append((stamp, override_message(store, stamp, sticks)))
        if k % 10 == 0:
            odos.append(
                (stamp, odometry_message(store, stamp, odometry_row(sim.state.q[:7], sim.state.v[:6])))
            )
        state = VehicleState.from_free_joint(sim.state.q[:7], sim.state.v[:6])
        sim.thrusters.set_motor_pwm(autopilot.update(state, 0.005))
        sim.step(0.005)
        k += 1
    bag_path = tmp_path / "pilot"
    write_bag(
        bag_path,
        {
            "/mavros/rc/override": ("mavros_msgs/msg/OverrideRCIn", rc),
            "/mavros/state": ("mavros_msgs/msg/State", states),
            "/odom": ("nav_msgs/msg/Odometry", odos),
        },
        "sqlite3",
    )
    bag = read_bag(bag_path)
    assert bag.command_source == "rc_override" and len(bag.overrides.t) == 12 and bag.state_topic
    _, predicted = replay(system, bag, dt=0.005)
    _, measured = bag.odometry.arrays()
    assert np.abs(predicted[:, :3] - measured[:, :3]).max() < 1e-6
    assert np.abs(measured[-1, :2] - measured[0, :2]).max() > 1.0  # it did fly somewhere
    with pytest.raises(ValueError, match="RC override"):
        identify(system, bag)
    assert cli_main(["replay", str(bag_path), "--config", "bluerov2_heavy", "--dt", "0.005"]) == 0


def test_live_mode_sends_rc_override_bags_to_the_mavros_interface(tmp_path):
    """Live replay of a pilot-side bag: the node's emulated ArduSub is armed and put in the
    bag's mode through the MAVROS services, and its motors follow the override."""
    import threading

    from ros_helpers import simulator, spin_until

    from uvms_sim.replay.bag import override_message, state_message
    from uvms_sim.ros.bag_player import play

    store = typestore()
    stamps = [START + k * 500_000_000 for k in range(4)]
    rc = [(s, override_message(store, s, [1500, 1500, 1500, 1500, 1800, 1500, 0, 0])) for s in stamps]
    states = [(stamps[0], state_message(store, stamps[0], True, "STABILIZE"))]
    bag_path = tmp_path / "pilot_live"
    write_bag(
        bag_path,
        {
            "/mavros/rc/override": ("mavros_msgs/msg/OverrideRCIn", rc),
            "/mavros/state": ("mavros_msgs/msg/State", states),
        },
    )
    bag = read_bag(bag_path)
    with simulator(description="bluerov2_heavy", command_timeout=5.0) as (sim, _user, executor):
        result = {}
        player = threading.Thread(target=lambda: result.setdefault("rc", play(bag, context=sim.context)))
        player.start()
        shim = sim.vehicles[0].shim
        assert spin_until(
            executor, lambda: shim.autopilot.armed and shim.autopilot.mode == "STABILIZE", timeout=10
        )
        assert spin_until(executor, lambda: shim.autopilot.rc[4] == 1800.0, timeout=10)
        player.join(timeout=10)
        assert result["rc"] == 0


def _hostile_bag(path, odometry_rows, commands, extra=None, stamps=None):
    """A bag with odometry rows and RCOut commands (lists of PWM) at 10 Hz from START, plus
    ``extra`` {topic: (type, [(stamp, raw CDR bytes or message)])}."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    store = typestore()
    with Writer(Path(path), version=9, storage_plugin=StoragePlugin.SQLITE3) as w:
        odo = w.add_connection("/odom", "nav_msgs/msg/Odometry", typestore=store)
        cmd = w.add_connection("/mavros/rc/out", "mavros_msgs/msg/RCOut", typestore=store)
        for k, row in enumerate(odometry_rows):
            stamp = (stamps or {}).get(k, START + k * 100_000_000)
            w.write(
                odo, stamp, store.serialize_cdr(odometry_message(store, stamp, row), "nav_msgs/msg/Odometry")
            )
        for k, pwm in enumerate(commands):
            stamp = START + k * 100_000_000
            w.write(
                cmd, stamp, store.serialize_cdr(rcout_message(store, stamp, pwm), "mavros_msgs/msg/RCOut")
            )
        for topic, (kind, items) in (extra or {}).items():
            conn = w.add_connection(topic, kind, typestore=store)
            for stamp, data in items:
                w.write(conn, stamp, data if isinstance(data, bytes) else store.serialize_cdr(data, kind))


def test_hostile_bags_and_options_give_one_line_errors_or_sane_replays(tmp_path, capsys):
    """Corrupt payloads, NaN and zero quaternions, velocities of 1e308, servo logs that grow from
    8 to 16 channels, a message stamped at the epoch, a two-hour gap, and bad command-line
    options: the replay either runs (dropping what it cannot use, with a count) or stops with
    one line and status 2; never a traceback, never a huge allocation."""
    from uvms_sim.cli import main as cli_main

    good = odometry_row(np.r_[0, 0, 2.0, 1, 0, 0, 0], np.zeros(6))
    rows = [good] * 30
    rows[3] = [*good[:3], 0.0, 0.0, 0.0, 0.0, *good[7:]]  # zero quaternion
    rows[4] = [*good[:3], float("nan"), *good[4:]]
    rows[5] = [*good[:7], 1e308, *good[8:]]
    cmds = [[1500] * 8] * 10 + [[1600] * 16] * 10
    bag = tmp_path / "hostile"
    garbage = {"/joint_commands": ("sensor_msgs/msg/JointState", [(START + 5, b"\x00\x01\x02garbage")])}
    _hostile_bag(bag, rows, cmds, garbage, stamps={7: 5})  # row 7 stamped 5 ns after the epoch
    contents = read_bag(bag, joint_topic="joint_commands")
    assert len(contents.odometry.t) == 30 - 4 and contents.commands.arrays()[1].shape == (20, 16)
    assert cli_main(["replay", str(bag), "--config", "bluerov2_heavy", "--dt", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "replayed 2.9 s" in out
    gap = tmp_path / "gap"
    _hostile_bag(gap, [good] * 3, [[1500] * 8] * 2, stamps={2: START + 7200 * 10**9})
    t, predicted = replay(load(CONFIG / "bluerov2_heavy.yaml"), read_bag(gap), dt=0.01)
    assert t[-1] == pytest.approx(7200.0) and np.all(np.isfinite(predicted))
    assert "7200 s without samples" in capsys.readouterr().err  # said, and jumped over
    for args, why in (
        (["--command-topic", "/nope"], "no topic /nope"),
        (["--command-topic", "/odom"], "expected one of"),
        (["--out", str(tmp_path)], "exists"),
        (["--plot", str(tmp_path / "no" / "such" / "plot.png")], "no directory"),
    ):
        assert cli_main(["replay", str(bag), "--config", "bluerov2_heavy", *args]) == 2, args
        err = capsys.readouterr().err.strip()
        assert why in err and "\n" not in err, err
    for args, why in (
        (["--dt", "0"], "0 is not a step in (0, 1] s"),
        (["--dt", "nan"], "nan is not a step in (0, 1] s"),
        (["--dt", "-1"], "-1 is not a step"),
        (["--dt", "fast"], "'fast' is not a number"),
        (["--axes", "x,y"], ""),
        (["--bootstrap", "1.5"], "'1.5' is not an integer"),
        (["--bootstrap", "20000"], "20000 is not a count in [0, 10000]"),
    ):
        with pytest.raises(SystemExit) as exc:
            cli_main(["replay", str(bag), "--config", "bluerov2_heavy", *args])
        assert exc.value.code == 2
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert last.startswith("uvms-sim replay: error:") and why in last, last


def test_identification_over_several_recordings_finds_lag_delay_and_buoyancy(tmp_path):
    """Three recordings of a vehicle whose thrusters lag by 0.15 s, whose commands act 0.1 s
    after they are logged and whose hull is 3 N more buoyant than described: fitted together,
    the profile over the lag and the delay lands on both (the grid is 0.05 s; a lag and a
    delay trade along a ridge that coordinate steps alone stop on: 0.2 / 0.05 without the
    diagonal steps), the buoyancy offset comes back within 0.1 N, the damping as in
    ``check_damping``, and the standard errors come from a bootstrap over the recordings."""
    system = None
    bags = []
    for seed in (1, 2, 3):
        path = tmp_path / f"run{seed}"
        system = record(
            path, "sqlite3", seconds=40.0, noise=0.003, seed=seed, lag=0.15, delay=0.1, buoyancy=3.0
        )
        bags.append(read_bag(path))
    fitted = identify(system, bags, axes=(0, 2, 5), buoyancy=True, lag=True, delay=True)
    assert fitted.bootstrap == "100 resamples over the 3 recordings"
    assert fitted["time_constant"][0] == pytest.approx(0.15) and fitted["command_delay"][0] == pytest.approx(
        0.1
    )
    assert fitted["buoyancy_offset"][0] == pytest.approx(3.0, abs=0.1)
    check_damping({k: v for k, v in fitted.items() if k in TRUTH})
    assert not fitted.warnings, fitted.warnings
    identified = apply_identified(system, fitted)  # the lag into the thruster model, the offset into the hull
    assert Simulator.from_system(identified).thrusters.kinds[0].time_constant == pytest.approx(0.15)
    g, rho = system.environment.gravity, system.environment.density
    added = identified.model.bodies[0].hydro.volume - system.model.bodies[0].hydro.volume
    assert added * rho * g == pytest.approx(fitted["buoyancy_offset"][0])


def test_identification_says_what_the_data_cannot_tell(tmp_path):
    """Slow, narrow motion (surge commands within +-0.15, heave and yaw within +-0.02): linear
    and quadratic heave damping cannot be told apart and the surge terms are not identified;
    the fit says so. Thrust scales bounded away from the truth (0.8) end on the bound, and the
    fit says that too instead of reporting 0.9 +- 0.0006."""
    system = record(tmp_path / "slow", "sqlite3", seconds=40.0, noise=0.003, command_range=(0.15, 0.02, 0.02))
    fitted = identify(system, read_bag(tmp_path / "slow"), axes=(0, 2, 5))
    text = " | ".join(fitted.warnings)
    assert "Z_w and Z_ww cannot both be identified" in text
    assert "X_uu = " in text and "is not identified" in text
    weak = record(tmp_path / "weak", "sqlite3", seconds=40.0, noise=0.003, thrust_scale=(0.8, 0.8))
    bounded = identify(
        weak, read_bag(tmp_path / "weak"), axes=(0, 2, 5), thrust=True,
        bounds={"thrust_forward_scale": (0.9, 1.1), "thrust_reverse_scale": (0.9, 1.1)},
    )  # fmt: skip
    assert bounded["thrust_forward_scale"][0] == pytest.approx(0.9)
    assert any(w.startswith("thrust_forward_scale ended on its lower bound (0.9)") for w in bounded.warnings)
    # an estimate on a bound is not a result: the three thrust scales are refused together, the
    # described thrust is kept, and no standard error is printed as 0 (all resamples on the bound)
    assert set(THRUST_NAMES) <= set(bounded.refused)
    assert any(w.startswith("the thrust scales are not a result") for w in bounded.warnings)
    kept = Simulator.from_system(apply_identified(weak, bounded)).thrusters.kinds[0]
    described = Simulator.from_system(weak).thrusters.kinds[0]
    assert (kept.thrust_forward, kept.thrust_reverse) == (described.thrust_forward, described.thrust_reverse)
    text = format_identification(bounded)
    assert "not estimated" in text and "+- 0.0000" not in text and "nan" not in text.lower()


def test_the_fisher_information_names_columns_the_data_cannot_separate():
    """Three regressors, the third twice the first plus 0.1 % noise: the equilibrated Fisher
    information is ill-conditioned (beyond 1e4) and its inverse correlates the first and the
    third estimates beyond 0.99 (the second, independent, below 0.3); a column that is all
    zero (a parameter the data never excite) is left out rather than given a zero error."""
    rng = np.random.default_rng(5)
    A = rng.normal(size=(400, 3))
    A[:, 2] = 2.0 * A[:, 0] + 1e-3 * rng.normal(size=400)
    condition, corr, names = _fisher(A, ["a", "b", "c"])
    assert condition > 1e4 and names == ["a", "b", "c"]
    assert abs(corr[0, 2]) > 0.99 and abs(corr[0, 1]) < 0.3 and abs(corr[1, 2]) < 0.3
    A[:, 1] = 0.0
    condition, corr, names = _fisher(A, ["a", "b", "c"])
    assert names == ["a", "c"] and corr.shape == (2, 2)


def test_lag_and_delay_at_either_end_of_their_grid_are_flagged_and_not_used(tmp_path):
    """A vehicle without lag or delay, fitted with both: they end at the bottom of their grid
    (0 s), which the fit flags and refuses (the described lag stays); a 0.15 s lag fitted on a
    grid that stops at 0.1 s ends at its top, flagged with the advice to widen the bound."""
    system = record(tmp_path / "none", "sqlite3", seconds=40.0, noise=0.003)
    fitted = identify(system, read_bag(tmp_path / "none"), axes=(0, 2, 5), lag=True, delay=True, bootstrap=0)
    assert fitted["time_constant"][0] == 0.0 and fitted["command_delay"][0] == 0.0
    text = " | ".join(fitted.warnings)
    assert "time_constant ended at the bottom of its grid (0 s)" in text
    assert "command_delay ended at the bottom of its grid (0 s)" in text
    assert {"time_constant", "command_delay"} <= set(fitted.refused)
    kind = Simulator.from_system(apply_identified(system, fitted)).thrusters.kinds[0]
    assert kind.time_constant == Simulator.from_system(system).thrusters.kinds[0].time_constant
    lagged = record(tmp_path / "lag", "sqlite3", seconds=40.0, noise=0.003, lag=0.15)
    top = identify(
        lagged, read_bag(tmp_path / "lag"), axes=(0, 2, 5), lag=True, bootstrap=0,
        bounds={"time_constant": (0.0, 0.1)},
    )  # fmt: skip
    assert top["time_constant"][0] == pytest.approx(0.1)
    assert any(w.startswith("time_constant ended at the top of its grid (0.1 s)") for w in top.warnings)


def test_a_bootstrap_of_too_few_distinct_resamples_is_not_an_error_estimate():
    """Resamples that take fewer than MIN_DISTINCT distinct draws, or an estimate that takes
    fewer than three values over them (a bound or a grid point every time): the spread is not
    estimated (NaN, printed as such), never 0."""
    rng = np.random.default_rng(1)
    samples = [rng.normal(size=3) for _ in range(50)]
    assert np.all(np.isfinite(_spread(samples, MIN_DISTINCT, 3)))
    assert np.all(np.isnan(_spread(samples, MIN_DISTINCT - 1, 3)))
    for s in samples:
        s[1] = 0.5  # always on a bound
    spread = _spread(samples, MIN_DISTINCT, 3)
    assert np.isnan(spread[1]) and np.isfinite(spread[0]) and np.isfinite(spread[2])


def test_windowed_validation_and_held_out_identification_from_the_command_line(tmp_path, capsys):
    """``uvms-sim replay A B --config C --window 10 --fit thrust --bound ...``: the windowed
    validation of the described model beside the baselines, the held-out errors of the
    candidate fits (damping alone, damping and thrust), the chosen one fitted over both
    recordings with its bootstrap: the recording vehicle pushes 0.8x the described thrust, so
    the model fitted on one recording predicts the other better than the described one (speed
    DTW 0.002 against 0.024 m/s measured before the warp band; half asserted), and better than
    the damping alone, so the thrust fit is chosen.
    ``--impose attitude,depth`` scores u and v only."""
    from uvms_sim.cli import main as cli_main

    paths = []
    for seed in (4, 5):
        paths.append(str(tmp_path / f"r{seed}"))
        system = record(paths[-1], "sqlite3", seconds=40.0, noise=0.003, seed=seed, thrust_scale=(0.8, 0.8))
    save_yaml(system, tmp_path / "deep.yaml")  # as recorded: in deep water, no free surface
    args = ["replay", *paths, "--config", str(tmp_path / "deep.yaml"), "--window", "10", "--dt", "0.01"]
    assert cli_main([*args, "--fit", "thrust", "--axes", "u,w,r", "--bootstrap", "20"]) == 0
    text = capsys.readouterr().out
    assert (
        "windowed validation, 10 s windows from the measured state:" in text
        and "8 windows (0 failed)" in text
    )
    assert (
        "identified from 2 recording(s)" in text
        and "20 resamples over 20 blocks of consecutive windows" in text
    )
    assert "held-out windowed error of each candidate fit (10 s windows)" in text
    assert "(each of the 2 recordings left out in turn)" in text
    original = float(text.split("  described: ")[1].split("speed DTW ")[1].split(" ")[0])
    damping = float(text.split("  fitted, damping:")[1].split("speed DTW ")[1].split(" ")[0])
    fitted = float(text.split("  fitted, damping + thrust:")[1].split("speed DTW ")[1].split(" ")[0])
    assert fitted < 0.5 * original and fitted < damping, (fitted, damping, original)
    assert "chosen by held-out speed DTW: damping + thrust" in text
    assert cli_main([*args, "--impose", "attitude,depth"]) == 0
    assert "RMSE u " in (out := capsys.readouterr().out) and " w " not in out.split("windowed validation")[1]
    for bad in (
        ["--impose", "roll"],
        ["--fit", "magic"],
        ["--bound", "X_u=1:2"],
        ["--bound", "time_constant=2:1"],
    ):
        with pytest.raises(SystemExit):
            cli_main([*args, *bad])
        assert "error" in capsys.readouterr().err


def test_a_bag_with_gigabytes_of_camera_frames_replays_in_bounded_memory(tmp_path):
    """A bag whose camera topic is ~300 MB (60 s of 0.5 MB frames at 10 Hz) beside the
    commands and odometry: the replay never reads the frames (counted from the bag's index),
    so its peak anonymous memory is that of the same bag without them (within 20 MB) and
    under 120 MB (``replay_memory``; measured with a 2.8 GB bag: 86 MB anonymous, as without
    the frames; 3.0 GB of RSS before the bags were streamed). The whole RSS is not bounded
    here: the rest is shared libraries' file pages, as many as the kernel maps around each
    fault from its page cache (the same replay: 206 MB in a checkout of some hours, 253 MB in a
    fresh clone whose libraries were just written, libllvmlite alone 70 against 104 MB)."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    path = tmp_path / "camera"
    system = record(tmp_path / "plain", "mcap", seconds=60.0)
    store = typestore()
    T = store.types
    frame = np.zeros(500_000, dtype=np.uint8)
    plain = read_bag(tmp_path / "plain")
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        for topic, (msgtype, fn) in {
            "/mavros/rc/out": ("mavros_msgs/msg/RCOut", lambda ns, v: rcout_message(store, ns, v)),
            "/odom": ("nav_msgs/msg/Odometry", lambda ns, v: odometry_message(store, ns, v)),
        }.items():
            conn = writer.add_connection(topic, msgtype, typestore=store)
            series = plain.commands if topic == "/mavros/rc/out" else plain.odometry
            for t, v in zip(series.t, series.values, strict=True):
                ns = plain.start_ns + round(t * 1e9)
                writer.write(conn, ns, store.serialize_cdr(fn(ns, v), msgtype))
        cam = writer.add_connection("/camera/image_raw", "sensor_msgs/msg/Image", typestore=store)
        for k in range(600):
            ns = plain.start_ns + k * 100_000_000
            header = T["std_msgs/msg/Header"](
                stamp=T["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9), frame_id="camera"
            )
            image = T["sensor_msgs/msg/Image"](
                header=header, height=500, width=1000, encoding="mono8", is_bigendian=0, step=1000, data=frame
            )
            writer.write(cam, ns, store.serialize_cdr(image, "sensor_msgs/msg/Image"))
    assert sum(f.stat().st_size for f in path.iterdir()) > 290e6
    save_yaml(system, tmp_path / "vehicle.yaml")
    peaks = {
        name: replay_memory(bag, tmp_path / "vehicle.yaml")
        for name, bag in (("plain", tmp_path / "plain"), ("camera", path))
    }
    (code, anon, total, out), (_, anon0, _, _) = peaks["camera"], peaks["plain"]
    assert code == 0 and "not used: 600 messages on /camera/image_raw" in out, out
    assert anon - anon0 < 20_000, (anon, anon0)  # the frames cost nothing: the bag is streamed
    assert anon < 120_000, (anon, total)


def replay_memory(bag: Path, config: Path) -> tuple[int, int, int, str]:
    """``(exit status, peak anonymous memory kB, peak RSS kB, stdout)`` of ``uvms-sim replay``
    in its own process. The anonymous memory (heap, arrays) is what a replay allocates; the
    rest of its RSS is the shared libraries' pages (numba's LLVM alone maps 70-104 MB), which
    vary with how much of them the kernel faults in (183-253 MB total measured on this
    machine). It is sampled every 5 ms from /proc, the total from the kernel's high-water mark."""
    import subprocess
    import sys
    import time

    cmd = [sys.executable, "-m", "uvms_sim.cli", "replay", str(bag), "--config", str(config)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    anon = total = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                fields = dict(line.split(":", 1) for line in f)
            anon = max(anon, int(fields["RssAnon"].split()[0]))
            total = max(total, int(fields["VmHWM"].split()[0]))
        except (OSError, KeyError, ValueError):  # the process is ending
            pass
        time.sleep(0.005)
    out = proc.communicate(timeout=60)[0]
    return proc.returncode, anon, total, out
