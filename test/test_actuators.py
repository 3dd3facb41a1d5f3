"""Thrusters (PWM -> thrust with advance speed), ArduSub frames, mixing and modes, joint motors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

from uvms_sim.actuators import T200_12V, T200_16V, ThrusterBank
from uvms_sim.actuators.althold import (
    ALT_HOLD_DEFAULTS,
    ALT_HOLD_FIRMWARE,
    ALT_HOLD_SITL,
    DepthEstimate,
    DepthSensing,
    climb_rate,
    stopping_distance,
)
from uvms_sim.actuators.ardusub import FRAMES, ArduSubEmulator, VehicleState, mix, normalize_rc, thrust_to_pwm
from uvms_sim.actuators.joints import LEON_GONZALEZ_ARM_GAINS, JointMotors, tuned_gains
from uvms_sim.actuators.thruster import KGF, PRESET_NAMES, thruster_model
from uvms_sim.model import load
from uvms_sim.model.system import THRUSTER_MODEL_KEYS, THRUSTER_MODEL_RANGES, THRUSTER_PRESETS
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"
WU2018 = Path(__file__).resolve().parent / "data" / "bluerov2_wu2018.yaml"  # the gains were tuned on it


# -- thruster curve -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("model", "forward_kgf", "reverse_kgf"), [(T200_16V, 5.25, 4.1), (T200_12V, 3.7, 2.9)], ids=["16V", "12V"]
)
def test_t200_datasheet_points(model, forward_kgf, reverse_kgf):
    """Full command gives the datasheet bollard thrust (Blue Robotics' datasheet: 5.25/4.1 kgf at 16 V,
    3.7/2.9 kgf at 12 V) to 1e-9; inside the ±25 us deadband there is none; thrust grows
    monotonically with the command and reverse is weaker than forward."""
    assert model.bollard_thrust(1900.0) == pytest.approx(forward_kgf * KGF, rel=1e-9)
    assert model.bollard_thrust(1100.0) == pytest.approx(-reverse_kgf * KGF, rel=1e-9)
    for pwm in (1475.0, 1490.0, 1500.0, 1510.0, 1525.0):
        assert model.bollard_thrust(pwm) == 0.0
    assert model.bollard_thrust(1526.0) > 0.0 > model.bollard_thrust(1474.0)
    pwm = np.arange(1100.0, 1901.0, 5.0)
    T = model.bollard_thrust(pwm)
    assert np.all(np.diff(T) >= 0.0)
    for d in (100.0, 200.0, 300.0, 400.0):
        assert -model.bollard_thrust(1500 - d) / model.bollard_thrust(1500 + d) == pytest.approx(
            reverse_kgf / forward_kgf, rel=1e-12
        )


def test_presets_match_the_description_schema():
    assert set(PRESET_NAMES) == set(THRUSTER_PRESETS)
    fields = set(T200_16V.__dataclass_fields__)
    assert set(THRUSTER_MODEL_KEYS) <= fields
    assert set(THRUSTER_MODEL_RANGES) == set(THRUSTER_MODEL_KEYS)
    for key, (lo, hi, closed) in THRUSTER_MODEL_RANGES.items():  # the model refuses what the schema does
        below = lo - 1.0 if closed else lo
        with pytest.raises(ValueError):
            thruster_model((("preset", "t200" if key == "voltage" else "t200_16v"), (key, below)))
        if hi is not None and key != "voltage":
            with pytest.raises(ValueError):
                thruster_model((("preset", "t200_16v"), (key, hi)))
    lag = thruster_model((("preset", "t200_12v"), ("time_constant", 0.1)))
    assert lag == replace(T200_12V, time_constant=0.1)


def test_advance_speed_loss_sign_and_size():
    """Nielsen et al. 2018 section 4.1.3 / Fig. 11: moving through the water the way a thruster pushes
    lowers its thrust, at every command, increasingly with speed (eq. 12: linearly, for a fixed
    shaft speed); a few newtons at 0.5 m/s. Moving against it raises the thrust (up to the
    bollard limit)."""
    m = T200_16V
    for pwm in np.arange(1550.0, 1901.0, 50.0):
        n = m.shaft_speed(pwm)
        T0, T1, T2 = (float(m.thrust(n, u)) for u in (0.0, 0.25, 0.5))
        assert T0 > T1 > T2 > 0.0
        assert T0 - T2 == pytest.approx(2.0 * (T0 - T1), rel=1e-12)  # linear in u_a
        assert 0.5 < T0 - T2 < 10.0, (pwm, T0 - T2)
        assert float(m.thrust(n, -0.25)) >= T0 or T0 == m.thrust_forward
    # reverse thrust: moving backwards (the way it pushes) weakens it the same way
    n = m.shaft_speed(1200.0)
    assert float(m.thrust(n, 0.0)) < float(m.thrust(n, -0.5)) < 0.0


def test_spin_up_lag_is_first_order():
    system = load(CONFIG / "bluerov2.yaml")
    lagged = replace(T200_16V, time_constant=0.2)
    bank = ThrusterBank(system.model, system.thrusters, [lagged] * 6)
    bank.set_pwm([1900.0] * 6)
    target = float(lagged.shaft_speed(1900.0))
    for _ in range(10):
        bank.advance(0.02)
    assert bank.n[0] == pytest.approx(target * (1.0 - np.exp(-1.0)), rel=1e-12)


def test_bad_pwm_is_rejected_or_clamped():
    sim = Simulator.from_system(load(CONFIG / "bluerov2.yaml"))
    before = sim.thrusters.pwm.copy()
    with pytest.raises(ValueError, match="non-finite"):
        sim.set_thruster_pwm([1500, np.nan, 1500, 1500, 1500, 1500])
    with pytest.raises(ValueError, match="6 values"):
        sim.set_thruster_pwm([1500] * 5)
    np.testing.assert_array_equal(sim.thrusters.pwm, before)
    assert sim.set_thruster_pwm([2500, 900, 1500, 1500, 1500, 1500]) == 2
    np.testing.assert_array_equal(sim.thrusters.pwm[:2], [1900, 1100])
    sim.step(0.01)
    assert np.all(np.isfinite(sim.state.v))


# -- frames and mixing ----------------------------------------------------------------------
@pytest.mark.parametrize(("config", "frame"), [("bluerov2", "vectored"), ("bluerov2_heavy", "vectored_6dof")])
def test_each_motor_pushes_as_its_factor_row(config, frame):
    """Motor n alone at +100 us: the body wrench has the signs of ArduSub's factors for that
    motor (forward = +X, lateral = +Y, throttle = up = -Z, roll/pitch/yaw = +K/+M/+N)."""
    system = load(CONFIG / f"{config}.yaml")
    sim = Simulator.from_system(system)
    bank = sim.thrusters
    for motor, (rf, pf, yf, tf, ff, lf) in FRAMES[frame].items():
        bank.set_motor_pwm({m: 1500.0 for m in FRAMES[frame]} | {motor: 1600.0})
        bank.advance(0.01)
        w = bank.wrenches(sim.data)[0]  # at rest: v_rel = 0
        X, Y, Z, K, M, N = w
        assert np.sign(round(X, 9)) == ff and np.sign(round(Y, 9)) == lf and np.sign(round(-Z, 9)) == tf
        assert np.sign(round(N, 9)) == yf
        if rf:
            assert np.sign(K) == rf
        if pf:
            assert np.sign(M) == pf


@pytest.mark.parametrize("frame", ["vectored", "vectored_6dof"])
def test_pure_yaw_makes_no_net_force(frame):
    """A yaw-only stick: thrusters run forward and reverse (whose thrusts differ), yet the
    forces cancel pairwise and only a yaw moment remains."""
    config = "bluerov2" if frame == "vectored" else "bluerov2_heavy"
    sim = Simulator.from_system(load(CONFIG / f"{config}.yaml"))
    ap = ArduSubEmulator(frame)
    ap.arm()
    ap.set_rc([1500, 1500, 1500, 1800, 1500, 1500])
    pwm = ap.update(VehicleState.from_free_joint(sim.state.q, sim.state.v), 0.01)
    assert sim.thrusters.set_motor_pwm(pwm) == 0
    sim.thrusters.advance(0.01)
    w = sim.thrusters.wrenches(sim.data)[0]
    np.testing.assert_allclose(w[:3], 0.0, atol=1e-12)
    assert w[5] > 5.0
    assert abs(w[3]) < 1e-12 and abs(w[4]) < 1e-12


def test_mixing_matches_ardusub_rules():
    # vectored: full forward and full throttle: the rear thrusters' forward share is limited
    # to 1 - FV_CPLNG_K |throttle| = 0 when going forward
    out = mix("vectored", 0, 0, 0, 1.0, 1.0, 0)
    assert out[1] == -1.0 and out[2] == -1.0 and out[3] == 0.0 and out[4] == 0.0
    assert out[5] == -1.0 and out[6] == -1.0
    # vectored_6dof: each group normalised by its largest magnitude
    out = mix("vectored_6dof", 1.0, 1.0, 0, 0, 1.0, 1.0)
    assert out[7] == 1.0 and out[6] == -1.0 and out[5] == 0.0
    assert out[4] == pytest.approx(0.0) and out[3] == pytest.approx(1.0)
    # MOT_n_DIRECTION = -1 flips that motor's output
    assert mix("vectored", 0, 0, 0, 0, 0.5, 0, {1: -1.0})[1] == 0.5
    np.testing.assert_array_equal(thrust_to_pwm([-1.0, 0.0, 0.5, 2.0]), [1100, 1500, 1700, 1900])
    np.testing.assert_array_equal(normalize_rc([1100, 1500, 1700, 2000]), [-1.0, 0.0, 0.5, 1.0])


def test_reversed_thruster_with_mot_direction_flies_the_same():
    """``reversed: true`` (the ESC turns the motor the other way, with the mirror propeller, so
    PWM below 1500 pushes along ``direction``) flown with MOT_1_DIRECTION = -1 gives the
    vehicle exactly the nominal wrench, strong and weak curves included; flown without it, that
    thruster pushes the wrong way. A T200 mounted backwards (direction flipped, same propeller)
    with MOT_1_DIRECTION = -1 pushes the right way on its weaker reverse curve."""
    system = load(CONFIG / "bluerov2.yaml")
    t1 = system.thrusters[0]
    wired = (replace(t1, reversed=True), *system.thrusters[1:])
    backwards = (replace(t1, direction=-t1.direction), *system.thrusters[1:])

    def wrench(thrusters, directions):
        bank = ThrusterBank(system.model, thrusters, [T200_16V] * 6)
        ap = ArduSubEmulator("vectored", directions)
        ap.arm()
        ap.set_rc([1500, 1500, 1500, 1500, 1700, 1600])
        bank.set_motor_pwm(ap.update(VehicleState.from_free_joint(system.initial_q, np.zeros(6)), 0.01))
        bank.advance(0.01)
        return bank.wrenches(system.model.create_data())[0], bank.thrust[0], bank.pwm[0]

    nominal, t_nominal, pwm = wrench(system.thrusters, {})
    assert pwm != 1500.0 and t_nominal == pytest.approx(float(T200_16V.bollard_thrust(pwm)))
    np.testing.assert_allclose(wrench(wired, {1: -1.0})[0], nominal, atol=1e-12)
    wrong = wrench(wired, {})[1]  # the other way, on the other curve
    assert wrong == pytest.approx(float(T200_16V.bollard_thrust(3000.0 - pwm))) and wrong * t_nominal < 0
    flipped, t_flipped, _ = wrench(backwards, {1: -1.0})  # the same thrust along a flipped axis
    assert t_flipped == pytest.approx(float(T200_16V.bollard_thrust(3000.0 - pwm)))
    assert abs(t_flipped) != pytest.approx(abs(t_nominal))
    np.testing.assert_array_equal(np.sign(np.round(flipped, 9)), np.sign(np.round(nominal, 9)))


def test_disarmed_outputs_neutral_and_modes():
    ap = ArduSubEmulator("vectored_6dof")
    ap.set_rc([1900] * 6)
    s = VehicleState(0.0, 0.0, 0.0, np.zeros(3), 1.0, 0.0)
    assert ap.update(s, 0.01) == {m: 1500.0 for m in range(1, 9)}
    assert not ap.set_mode("ACRO_TURBO") and ap.mode == "MANUAL"
    assert ap.set_mode("alt_hold") and ap.mode == "ALT_HOLD"
    # RC override semantics: 65535 keeps, 0 releases (no receiver: keeps), out of range clamps
    assert ap.set_rc([65535, 0, 2100]) == 1
    np.testing.assert_array_equal(ap.rc[:3], [1900, 1900, 1900])
    with pytest.raises(ValueError):
        ap.set_rc([np.nan])
    ap.arm()
    ap.lose_pilot_input()  # FS_PILOT_INPUT: neutral and disarmed
    assert not ap.armed and list(ap.rc[:6]) == [1500] * 6
    with pytest.raises(ValueError, match="unknown ArduSub frame"):
        ArduSubEmulator("hexa")


def fly(config, frame, mode, schedule, seconds, dt=0.01, setup=None, watch=None):
    """Fly a shipped vehicle (or a path) under the emulated autopilot; ``schedule`` is
    [(t, rc), ...]; ``watch(autopilot)`` is called after every autopilot update."""
    system = load(config if isinstance(config, Path) else CONFIG / f"{config}.yaml")
    sim = Simulator.from_system(system)
    if setup:
        setup(sim)
    ap = ArduSubEmulator(frame)
    ap.arm()
    assert ap.set_mode(mode)
    trace = []
    for k in range(round(seconds / dt)):
        for t, rc in schedule:
            if abs(k * dt - t) < dt / 2:
                ap.set_rc(rc)
        s = VehicleState.from_free_joint(sim.state.q[:7], sim.state.v[:6])
        sim.thrusters.set_motor_pwm(ap.update(s, dt))
        if watch:
            watch(ap)
        sim.step(dt)
        trace.append(s)
    return system, sim, trace


def test_full_forward_stick_reaches_the_damping_balance():
    """BlueROV2 Heavy, ALT_HOLD (level, constant depth), forward stick at 1900 us: the steady
    surge speed solves Σ T_j(u) d_xj = |X_u| u + |X_uu| u² with each thrust T_j at its advance
    speed u d_xj (eq. 12). Simulated 30 s; agreement within 0.2 % (the controller keeps a
    fraction of a degree of pitch)."""
    system, sim, _ = fly(
        "bluerov2_heavy", "vectored_6dof", "ALT_HOLD", [(0.0, [1500] * 4 + [1900, 1500])], 30
    )
    m = sim.thrusters.kinds[0]
    Xu, Xuu = system.model.D_lin[0][0, 0], system.model.d_quad[0][0]
    horizontal = [t for t in system.thrusters if abs(t.direction[2]) < 1e-9]
    pwm = {1: 1100.0, 2: 1100.0, 3: 1900.0, 4: 1900.0}  # forward factors -1, -1, +1, +1

    def surplus(u):
        thrust = sum(
            float(m.thrust(m.shaft_speed(pwm[t.motor]), u * t.direction[0])) * t.direction[0]
            for t in horizontal
        )
        return thrust - (Xu * u + Xuu * u * u)

    u_expected = brentq(surplus, 0.1, 5.0)
    assert sim.state.v[0] == pytest.approx(u_expected, rel=2e-3)
    assert abs(sim.state.q[2] - system.initial_q[2]) < 0.02  # depth held


def test_stabilize_and_alt_hold_emulation():
    """STABILIZE returns a rolled, yawed vehicle to level within 1 deg in 4 s and holds the
    heading it had; ALT_HOLD climbs at the stick's rate (1700 us: 200/450 of PILOT_SPEED_UP,
    0.89 m/s, within 1 %), and once the stick is released the vehicle settles within 0.05 m of
    the release depth less the jerk-limited stopping distance at PILOT_ACCEL_Z (it trails its
    target by about 0.04 m while climbing at 1 m/s: the tolerance is the issue's 0.05 m)."""

    def tilt(sim):
        from transforms3d.euler import euler2quat

        sim.state.q[3:7] = euler2quat(0.4, 0.0, 0.3, axes="sxyz")

    _, _, trace = fly("bluerov2", "vectored", "STABILIZE", [(0.0, [1500] * 6)], 4.0, setup=tilt)
    assert abs(trace[-1].roll) < np.radians(1.0)
    assert trace[-1].yaw == pytest.approx(0.3, abs=np.radians(2.0))
    up, neutral = [1500, 1500, 1700, 1500, 1500, 1500], [1500] * 6

    def deep(sim):
        sim.state.q[2] = 12.0  # climbing 6 m stays well below the surface

    _, _, trace = fly(WU2018, "vectored", "ALT_HOLD", [(0.0, up), (6.0, neutral)], 16.0, setup=deep)
    depth = np.array([s.depth for s in trace])
    climb = (depth[300] - depth[600]) / 3.0  # between 3 s and 6 s, after the start-up transient
    assert climb == pytest.approx(climb_rate(ALT_HOLD_DEFAULTS, 1700), rel=0.01)
    stop = depth[600] - stopping_distance(ALT_HOLD_DEFAULTS, -trace[600].depth_rate)
    assert abs(depth[-1] - stop) < 0.05


@pytest.mark.parametrize(("config", "frame"), [("bluerov2", "vectored"), ("bluerov2_heavy", "vectored_6dof")])
@pytest.mark.parametrize("stick", [1400, 1300, 1100])
def test_alt_hold_stops_where_ardusub_stops(config, frame, stick):
    """ALT_HOLD dive on the throttle stick for 6 s from 2 m, then the stick released: the
    vehicle goes no more than 0.05 m past the depth it then holds (ArduSub's shaped target:
    the dive rate brought to zero at PILOT_ACCEL_Z with PSC_JERK_Z, tracked by its position /
    velocity / acceleration cascade), and holds the controller's target within 0.01 m. At
    1400 us (0.37 m/s) the vehicle follows the requested rate and the target stops within
    0.01 m of the kinematic stopping point from where it was at release (the vehicle trails it
    by up to 0.04 m while diving); at 1300 and 1100 us (0.98 and 2 m/s requested) the
    thrusters saturate and the target runs ahead of the vehicle by the position controller's
    error limit, as ArduSub's does."""

    def start(sim):
        sim.state.q[2] = 2.0

    dt = 0.005
    schedule = [(0.0, [1500] * 6), (1.0, [1500, 1500, stick, 1500, 1500, 1500]), (7.0, [1500] * 6)]
    targets = []
    _, _, trace = fly(
        config, frame, "ALT_HOLD", schedule, 20.0, dt=dt, setup=start,
        watch=lambda ap: targets.append((-ap.althold.pos_desired, -ap.althold.vel_desired)),
    )  # fmt: skip
    depth = np.array([s.depth for s in trace])
    release = round(7.0 / dt)
    held = depth[-1]
    assert depth[release:].max() - held < 0.05
    assert abs(depth[-200:] - held).max() < 0.01
    rate = climb_rate(ALT_HOLD_DEFAULTS, stick)
    if rate > -0.5:  # followed: the stop is where the shaped target stops
        assert trace[release].depth_rate == pytest.approx(-rate, rel=0.05)
        target, speed = targets[release]
        assert abs(held - (target - stopping_distance(ALT_HOLD_DEFAULTS, -speed))) < 0.01


def test_alt_hold_shaping_and_stick_mapping_are_ardusubs():
    """The stick's climb rate (the firmware's parameters): +-1 m/s at the ends, zero from 1462 to
    1538 us (THR_DZ 100 x joystick gain 0.5 around the throttle channel's middle 480, in
    control_in units of 0.77 us: RC3_DZ's 30 us come off the bottom of the range), linear in
    between on the integer control_in; the
    shaped stop from speed v with acceleration limit a and jerk limit j is
    v^2/(2a) + v a/(2j) when v > a^2/j (a trapezoidal deceleration), within 2 mm: the square-root
    controller's linear region near zero velocity (gain j/a) ends it on an exponential tail."""
    p = ALT_HOLD_FIRMWARE
    assert climb_rate(p, 1100) == -1.0 and climb_rate(p, 1900) == 1.0
    assert climb_rate(p, 1538) == 0.0 and climb_rate(p, 1462) == 0.0
    assert climb_rate(p, 1539) > 0.0 and climb_rate(p, 1461) < 0.0
    assert climb_rate(p, 1700) == pytest.approx(1.0 * (740 - 530) / 470)  # control_in 740
    assert climb_rate(p, 1300) == pytest.approx(1.0 * (220 - 430) / 430)  # control_in 220
    assert climb_rate(ALT_HOLD_SITL, 1100) == -2.0  # sub.parm's PILOT_SPEED_UP 200 cm/s
    a, j = p.pilot_accel_z, p.jerk_max
    assert j == pytest.approx(min(50.0, 1.0 * 2 * np.pi * 20.0 / 5.0))
    for v in (0.3, 0.6, 1.0):
        assert stopping_distance(p, v) == pytest.approx(v * v / (2 * a) + v * a / (2 * j), abs=2e-3)
        assert stopping_distance(p, -v) == pytest.approx(-stopping_distance(p, v))


def test_depth_as_ardusub_sees_it():
    """``DepthSensing``: scaled, zeroed where calibrated, and leading by the motion over
    ``lead`` (2 x now - ``lead`` ago: exact for a steady speed, the estimate carried forward over
    the delay); the default is the true depth. SITL's scale is 1024 x 9.80665 / 9800."""
    sitl = DepthSensing.sitl(2.0)
    assert sitl.scale == pytest.approx(1024.0 * 9.80665 / 9800.0) and sitl.lead == 0.060
    truth = DepthEstimate(DepthSensing())
    assert truth.update(5.0, 0.3, 0.005) == (5.0, 0.3)
    est = DepthEstimate(DepthSensing(scale=1.02, ground_depth=2.0, lead=0.06))
    dt, speed, accel = 0.005, 0.8, 0.5
    for k in range(100):  # accelerating: depth 3 + v t + a t^2 / 2
        t = k * dt
        d, r = est.update(3.0 + speed * t + 0.5 * accel * t * t, speed + accel * t, dt)
    t = 99 * dt
    depth, rate = 3.0 + speed * t + 0.5 * accel * t * t, speed + accel * t
    back = depth - (speed * (t - 0.06) + 0.5 * accel * (t - 0.06) ** 2 + 3.0)  # moved in the lead
    assert d == pytest.approx(1.02 * (depth - 2.0 + back), abs=1e-9)
    assert r == pytest.approx(1.02 * (rate + accel * 0.06), abs=1e-9)
    est.restart()  # not given the state for a while: no stale past
    assert est.update(9.0, 0.0, dt) == pytest.approx((1.02 * 7.0, 0.0))


def test_surface_limits_the_upward_throttle_as_ardusub():
    """SURFACE_MAX_THR 0.1 at SURFACE_DEPTH (-0.1 m), rising to 1 a metre below it; only the
    vectored 6DOF mixer applies it (AP_Motors6DOF), and only upwards."""
    p = ALT_HOLD_SITL
    assert p.max_throttle(-0.1) == pytest.approx(0.1) and p.max_throttle(0.0) == pytest.approx(0.1)
    assert p.max_throttle(-0.6) == pytest.approx(0.55) and p.max_throttle(-5.0) == 1.0
    up = mix("vectored_6dof", 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, max_throttle=0.55)
    assert max(abs(x) for x in up.values()) == pytest.approx(0.55)
    down = mix("vectored_6dof", 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, max_throttle=0.55)
    assert max(abs(x) for x in down.values()) == pytest.approx(1.0)
    assert mix("vectored", 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, max_throttle=0.55) == mix(
        "vectored", 0.0, 0.0, 0.0, 1.0, 0.0, 0.0
    )
    ap = ArduSubEmulator("vectored_6dof")
    ap.arm()
    ap.set_mode("ALT_HOLD")
    ap.set_rc([1500, 1500, 1900, 1500, 1500, 1500])
    state = VehicleState(0.0, 0.0, 0.0, np.zeros(3), 0.3, 0.0)  # 0.3 m down: 0.1 + 0.9 x 0.2
    for _ in range(400):  # full climb stick: the throttle saturates upwards
        pwm = ap.update(state, 0.005)
    assert ap.max_throttle == pytest.approx(0.28)
    assert max(abs(pwm[m] - 1500) for m in (5, 6, 7, 8)) == pytest.approx(400 * 0.28, abs=1)
    ap.set_mode("MANUAL")  # Sub::exit_mode: full throttle again
    pwm = ap.update(state, 0.005)
    assert ap.max_throttle == 1.0
    assert max(abs(pwm[m] - 1500) for m in (5, 6, 7, 8)) > 400 * 0.28 + 5


# -- joint motors ---------------------------------------------------------------------------
def test_joint_position_pid_tracks_a_step_on_the_leon_gonzalez2024_arm():
    """Arm 1 of the León-González et al. 2024 system, all three joints stepped by 0.3 rad with the vehicle
    floating: within 5 % of the step after 2 s (joint 1 overshoots while the vehicle yaws in
    reaction) and 2e-3 rad after 5 s (gains from the joint-space inertia at the target, 2 Hz,
    critically damped); the torque never exceeds 1.1376 N m."""
    system = load(CONFIG / "heavy_four_arms.yaml")
    sim = Simulator.from_system(system)
    m = system.model
    iq = [m.idx_q[m.body_index(f"arm1_link{j}")] for j in (1, 2, 3)]
    target = system.initial_q.copy()
    target[iq] = 0.3
    sim.joint_motors = JointMotors(m, q=target)
    sim.joint_motors.command("position", {f"arm1_joint{j}": 0.3 for j in (1, 2, 3)})
    peak = 0.0
    for k in range(1000):
        sim.step(0.005)
        peak = max(peak, np.abs(sim.joint_motors.effort).max())
        if k == 399:
            assert np.abs(sim.state.q[iq] - 0.3).max() < 0.05 * 0.3
    assert np.abs(sim.state.q[iq] - 0.3).max() < 2e-3
    assert peak <= 1.1376


def test_leon_gonzalez2024_table5_gains_fail_routh_hurwitz():
    """The printed Table 5 gains for q1 and q2 make kp kd < I ki with the arm's own inertia
    (about 6e-3 and 3e-2 kg m² with the arm out), the Routh-Hurwitz condition of a PID on a
    pure inertia: an unstable loop. Recorded, not used as defaults."""
    system = load(CONFIG / "heavy_four_arms.yaml")
    m = system.model
    q = system.initial_q.copy()
    for j in (1, 2, 3):
        q[m.idx_q[m.body_index(f"arm1_link{j}")]] = 0.3
    tuned = tuned_gains(m, q)
    w = 2 * np.pi * 2.0
    inertia = [tuned[f"arm1_joint{j}"].kp / w**2 for j in (1, 2, 3)]
    g1, g2, g3 = LEON_GONZALEZ_ARM_GAINS
    assert g1.kp * g1.kd < inertia[0] * g1.ki
    assert g2.kp * g2.kd < inertia[1] * g2.ki
    assert g3.kp * g3.kd > inertia[2] * g3.ki


def test_joint_effort_limits_and_bad_targets():
    system = load(CONFIG / "bluerov2_light_arm.yaml")
    motors = JointMotors(system.model)
    motors.command("effort", {"arm_joint1": 50.0, "arm_joint2": -3.0})
    tau = motors.update(system.initial_q, np.zeros(system.model.nv), 0.01)
    np.testing.assert_array_equal(tau[:2], [10.0, -3.0])  # limit 10 N m
    before = motors.target.copy()
    with pytest.raises(ValueError, match="non-finite"):
        motors.command("position", {"arm_joint1": 0.1, "arm_joint2": np.inf})
    np.testing.assert_array_equal(motors.target, before)
    with pytest.raises(KeyError, match="no 1-DOF joint"):
        motors.command("position", {"elbow": 0.1})
    with pytest.raises(ValueError, match="joint mode"):
        motors.command("torque", {"arm_joint1": 0.1})


def test_thruster_model_from_yaml(tmp_path):
    p = tmp_path / "rov.yaml"
    base = WU2018.read_text()
    p.write_text(
        base.replace(
            "    thrusters: &vectored_horizontal",
            "    thruster_model: {preset: t200_12v, time_constant: 0.1}\n    thrusters:",
        )
    )
    sim = Simulator.from_system(load(p))
    assert sim.thrusters.kinds[0] == replace(T200_12V, time_constant=0.1)
    p.write_text(
        base.replace("    thrusters: &vectored_horizontal", "    thruster_model: t300\n    thrusters:")
    )
    with pytest.raises(ValueError, match=r"thruster_model: unknown thruster preset 't300'"):
        load(p)


def test_bad_inputs_warn_throttled(caplog):
    """Each kind of bad input is logged once per second, not once per message."""
    sim = Simulator.from_system(load(CONFIG / "bluerov2.yaml"))
    with caplog.at_level("WARNING", logger="uvms_sim"):
        for _ in range(50):
            sim.set_thruster_pwm([2500, 1500, 1500, 1500, 1500, 1500])
        for _ in range(3):
            with pytest.raises(ValueError):
                sim.set_thruster_pwm([np.nan] * 6)
    msgs = [r.getMessage() for r in caplog.records]
    assert sum("clamped" in m for m in msgs) == 1 and "thruster1" in msgs[0]
    assert sum("non-finite" in m for m in msgs) == 1


def test_set_mode_takes_names_and_custom_mode_numbers_as_mavros_passes_them():
    """MAVROS upper-cases a mode name and otherwise sends the string as ArduSub's custom mode
    number: "19" is MANUAL, "2" ALT_HOLD, "0" STABILIZE; a mode ArduSub has but the emulation
    does not (7, CIRCLE) and an empty string are refused and change nothing."""
    ap = ArduSubEmulator("vectored")
    for request, mode in (("2", "ALT_HOLD"), ("19", "MANUAL"), ("0", "STABILIZE"), ("alt_hold", "ALT_HOLD")):
        assert ap.set_mode(request) and ap.mode == mode
    for request in ("7", "", "GUIDED", "-1"):
        assert not ap.set_mode(request) and ap.mode == "ALT_HOLD"


def test_whole_microsecond_commands_are_looked_up_as_computed():
    """``ThrusterBank.shaft_speed_targets`` looks a command in whole microseconds up in a table
    made from ``shaft_speeds``: whole commands from 1100 to 1900 us, with T200 tables at
    two voltages (a supply change remakes the table), mirrored commands and thrusters of the
    power law, gives the computed targets to 1e-12 relative (rounding of the batched
    polynomials); fractional commands are computed."""
    system = load(CONFIG / "bluerov2_heavy.yaml")
    bank = Simulator.from_system(system).thrusters
    assert bank is not None
    rng = np.random.default_rng(4)
    for kinds in (bank.kinds, [T200_12V] * (len(bank) - 1) + [T200_16V]):
        bank.kinds = kinds
        for voltage in (16.0, 12.5):
            if all(k.voltage is not None for k in kinds):
                bank.set_voltage(voltage)
            for pwm in (*range(1100, 1901, 7), 1900):  # (every seventh, the ends)
                command = np.full(len(bank), float(pwm))
                command[::2] = 3000.0 - pwm
                bank.set_pwm(command)
                expected = bank.shaft_speeds(command)
                np.testing.assert_allclose(bank.shaft_speed_targets(), expected, rtol=1e-12, atol=1e-12)
            fraction = rng.uniform(1100.0, 1900.0, len(bank))
            bank.set_pwm(fraction)
            np.testing.assert_array_equal(bank.shaft_speed_targets(), bank.shaft_speeds(fraction))
