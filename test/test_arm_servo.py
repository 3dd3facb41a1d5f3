"""The Reach Alpha 5's joint firmware (uvms_sim.actuators.servo): Blueprint Lab's current-torque
relation, the modes and their limits as the communication protocol states them, and the held
torque against the static load computed by an independent algorithm (RNEA)."""

from __future__ import annotations

import numpy as np
import pytest

from uvms_sim.actuators.servo import JointServos, ServoSpec, alpha5_specs, hold_loaded
from uvms_sim.dynamics.flat import NSV, SV_SAVED
from uvms_sim.dynamics.rnea import rnea
from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.simulator import Simulator

DT = 0.001


@pytest.fixture
def arm():
    system = load(resolve("alpha5"))
    sim = Simulator.from_system(system)
    servos = JointServos(sim.model, alpha5_specs(sim.model), q=system.initial_q)
    sim.joint_motors = servos
    return sim, servos


def run(sim, seconds: float) -> None:
    for _ in range(round(seconds / DT)):
        sim.step(DT)


def position(sim, servos, name: str) -> float:
    return float(sim.state.q[servos.iq[servos.names.index(name)]])


def speed(sim, servos, name: str) -> float:
    return float(sim.state.v[servos.iv[servos.names.index(name)]])


def test_current_to_torque_is_blueprint_labs_relation() -> None:
    """torque = (I - 43 mA sign I) / 90.6 mA/(N m) above the dead band, zero inside it
    (Blueprint Lab 2019 Figure 8: 5.04 N m at 500 mA); the inverse map gives the current back."""
    high = ServoSpec(90.6, 43.0, 90.6 * 9.0 + 43.0)
    assert high.torque(500.0) == pytest.approx((500.0 - 43.0) / 90.6)
    assert high.torque(-500.0) == pytest.approx(-5.044, abs=1e-3)
    assert high.torque(40.0) == 0.0 and high.torque(-43.0) == 0.0
    for tau in (-9.0, -0.1, 0.2, 5.0):
        assert high.torque(high.current(tau)) == pytest.approx(tau)
    assert high.torque(high.current_limit) == pytest.approx(9.0)  # the description's effort limit


def test_specs_are_the_alpha5s_and_only_for_an_alpha5() -> None:
    model = load(resolve("alpha5")).model
    specs = alpha5_specs(model)
    assert specs["alpha_5_axis_e"].kt == 90.6 and specs["alpha_5_axis_b"].kt == 50.0
    assert specs["alpha_5_axis_a"].current_limit == pytest.approx(50.0 * 10.0 + 43.0)
    assert alpha5_specs(load(resolve("bluerov2_light_arm")).model) is None


def test_velocity_mode_tracks_and_is_clamped_to_the_limit(arm) -> None:
    sim, servos = arm
    servos.command("velocity", {"alpha_5_axis_e": 0.3})
    run(sim, 1.0)
    assert speed(sim, servos, "alpha_5_axis_e") == pytest.approx(0.3, abs=0.003)
    servos.command("velocity", {"alpha_5_axis_e": -5.0})  # above the limit: set to the maximum
    run(sim, 1.0)
    assert speed(sim, servos, "alpha_5_axis_e") == pytest.approx(-0.5, abs=0.005)


def test_position_mode_reaches_the_setpoint_at_most_at_the_velocity_limit(arm) -> None:
    sim, servos = arm
    run(sim, 2.0)  # the hold's integrator takes up the arm's weight first
    start = position(sim, servos, "alpha_5_axis_d")
    assert servos.command("position", {"alpha_5_axis_d": start + 0.6}) == []
    fastest = 0.0
    for _ in range(3000):
        sim.step(DT)
        fastest = max(fastest, abs(speed(sim, servos, "alpha_5_axis_d")))
    assert position(sim, servos, "alpha_5_axis_d") == pytest.approx(start + 0.6, abs=1e-3)
    # the demand is clamped to 0.5 rad/s; the PI velocity loop lags the shoulder's changing
    # gravity load while it moves, by up to 10 %
    assert 0.45 < fastest < 0.55


def test_position_outside_the_limits_is_ignored(arm) -> None:
    _, servos = arm
    before = servos.target.copy()
    assert servos.command("position", {"alpha_5_axis_c": 4.0, "alpha_5_axis_b": 3.0}) == ["alpha_5_axis_c"]
    k = servos.names.index("alpha_5_axis_c")
    assert servos.target[k] == before[k]
    with pytest.raises(ValueError, match="non-finite"):
        servos.command("position", {"alpha_5_axis_b": float("nan")})


def test_current_mode_is_clamped_and_the_dead_band_gives_no_torque(arm) -> None:
    sim, servos = arm
    servos.command("current", {"alpha_5_axis_e": 5000.0})
    sim.step(DT)
    k = servos.names.index("alpha_5_axis_e")
    assert servos.current[k] == pytest.approx(servos.specs[k].current_limit)
    assert servos.effort[k] == pytest.approx(9.0)
    servos.command("current", {"alpha_5_axis_e": 40.0})
    sim.step(DT)
    assert servos.effort[k] == 0.0


def test_held_pose_carries_the_static_load_rnea_gives(arm) -> None:
    """Position hold: after 3 s the servos' torques equal the gravity and buoyancy torques RNEA
    computes at that pose with zero velocity and acceleration (1 % of the largest, 2e-3 N m)."""
    sim, servos = arm
    run(sim, 3.0)
    model = sim.model
    static = rnea(model, model.create_data(), sim.state.q, np.zeros(model.nv), np.zeros(model.nv), sim.env)
    expected = static[servos.iv][:4]  # the rotate joints (the jaws' push rod rests on its stop)
    assert np.abs(expected).max() > 0.1  # the shoulder carries the arm
    assert np.allclose(servos.effort[:4], expected, atol=2e-3 + 0.01 * np.abs(expected).max())


def test_velocity_mode_stops_at_the_position_limit(arm) -> None:
    sim, servos = arm
    servos.command("velocity", {"alpha_5_axis_c": -0.5})
    run(sim, 4.0)
    assert position(sim, servos, "alpha_5_axis_c") == pytest.approx(0.0, abs=0.01)
    assert abs(speed(sim, servos, "alpha_5_axis_c")) < 1e-3


def _heavy_with_servos():
    """The Heavy with the Alpha 5 as the node starts it: servos holding the initial pose with
    its static load taken up (RNEA), the jaws resting on their closed stop."""
    system = load(resolve("bluerov2_heavy_alpha5"))
    sim = Simulator.from_system(system)
    model, q0 = sim.model, system.initial_q
    servos = JointServos(model, alpha5_specs(model), q=q0)
    hold_loaded(servos, model, sim.env, q0)
    sim.joint_motors = servos
    return sim, servos


def _drive(sim, servos, t: float) -> None:
    """A controller's update at time t: the rotate joints through a sweep with its velocity
    feed-forward (a trajectory as joint_trajectory_controller samples it); from 1 s the elbow in
    velocity mode into its lower stop (reached near 3 s), from 3.3 s the wrist in current mode
    and the jaws in effort mode, from 3.7 s the wrist in standby."""
    rotate = servos.names[:4]
    if t < 1.0:
        p = [3.14 + 0.4 * np.sin(2.0 * t), 1.5 + 0.3 * t, 1.5 - 0.5 * t, 3.1 + 0.5 * t]
        v = [0.8 * np.cos(2.0 * t), 0.3, -0.5, 0.5]
        servos.command("position", dict(zip(rotate, p, strict=True)), dict(zip(rotate, v, strict=True)))
    elif t < 3.3:
        servos.command("velocity", {servos.names[2]: -0.5})
    elif t < 3.7:
        servos.command("current", {servos.names[3]: 100.0})
        servos.command("effort", {servos.names[4]: 4.0})
    else:
        servos.command("standby", {servos.names[3]: 0.0})


def test_compiled_servos_and_limits_are_the_python_law() -> None:
    """``Simulator.advance`` runs the servos' law and the joint limits inside the compiled steps
    (``dynamics.compiled.servos``, ``.limits``); ``Simulator.step`` runs ``JointServos.update``
    and ``Simulator._enforce_limits`` in Python. Over 4 s of the Heavy with the Alpha 5 at
    1 kHz, commanded at 200 Hz through every mode (position with feed-forward, velocity into
    the elbow's stop, current, effort, standby), with the jaws resting on their stop (an impact
    at every step) and the elbow arriving on its own (a crossing, handed back to Python): the
    same states, servo currents and torques to 1e-12 (relative to their size), and the same
    number of impacts. The servo law is the same operations in the same order, so the
    difference is the impulses' M⁻¹ alone (LAPACK's inverse against a Cholesky factor, 1e-16
    relative, carried through the loop: 6e-15 measured, asserted below 1e-12)."""
    a, sa = _heavy_with_servos()
    b, sb = _heavy_with_servos()
    dt, worst = 0.001, 0.0
    for k in range(800):  # 200 Hz updates, 5 physics steps each
        t = 5 * k * dt
        _drive(a, sa, t)
        _drive(b, sb, t)
        a.advance(dt, 5)
        for _ in range(5):
            b.step(dt)
        # the moment of a crossing (regula falsi) may differ in its last bit, and the time with it
        assert a.state.t == pytest.approx(b.state.t, abs=1e-12)
        for x, y in ((a.state.q, b.state.q), (a.state.v, b.state.v), (sa.current, sb.current),
                     (sa.effort, sb.effort), (a.tau, b.tau), (sa.integral, sb.integral)):  # fmt: skip
            worst = max(worst, float(np.abs(x - y).max() / max(1.0, np.abs(y).max())))
    assert worst < 1e-12, worst
    assert a.limit_impacts == b.limit_impacts > 800  # the jaws on their stop, the elbow on its
    elbow = sb.names[2]
    assert position(b, sb, elbow) == 0.0 and sb.mode[3] == "standby"


def test_compiled_servos_without_an_impact_are_bit_identical() -> None:
    """Away from the joint limits the compiled path is the Python law bit for bit: the jaws
    opened off their stop first, then 1 s of the sweep of the test above."""
    sims = [_heavy_with_servos() for _ in range(2)]
    for sim, servos in sims:
        servos.command("position", {servos.names[4]: 0.0075})
        for _ in range(1500):
            sim.step(0.001)
        assert 0.0 < position(sim, servos, servos.names[4]) < 0.015
    (a, sa), (b, sb) = sims
    impacts = a.limit_impacts
    for k in range(200):
        t = 5 * k * 0.001
        _drive(a, sa, t)
        _drive(b, sb, t)
        a.advance(0.001, 5)
        for _ in range(5):
            b.step(0.001)
    assert a.limit_impacts == impacts == b.limit_impacts
    assert np.array_equal(a.state.q, b.state.q) and np.array_equal(a.state.v, b.state.v)
    state = [c for c in range(NSV) if c != SV_SAVED]  # the compiled path's own copy of the integral aside
    assert np.array_equal(sa.SF[:, state], sb.SF[:, state]) and np.array_equal(a.tau, b.tau)


def test_the_semi_implicit_euler_step_at_1_khz_follows_the_fine_rk4_reference() -> None:
    """The node's ``integrator:=semi_implicit_euler`` on the Heavy with the Alpha 5 at 1 kHz: a
    fast motion (four joints through +-0.8 rad in 3 s, commanded at 200 Hz, then held for 3 s)
    against RK4 at 0.25 ms. Measured: the vehicle's position within 0.14 mm and its attitude
    within 0.018 degrees of the reference over a 0.9 m drift (RK4 at 1 kHz: 0.004 mm, 0.003
    degrees); the semi-implicit Euler step's error is first order (0.07 mm at 0.5 ms, 0.36 mm
    and 0.045 degrees at 2.5 ms). Asserted: 0.3 mm and 0.03 degrees, twice the error at 1 ms
    and below that of a step 2.5 times as long."""
    system = load(resolve("bluerov2_heavy_alpha5"))
    names = ["alpha_5_axis_e", "alpha_5_axis_d", "alpha_5_axis_c", "alpha_5_axis_b"]

    def run(method: str, dt: float) -> np.ndarray:
        sim = Simulator.from_system(system, method)
        servos = JointServos(sim.model, alpha5_specs(sim.model), q=system.initial_q)
        sim.joint_motors = servos
        start = {n: float(sim.state.q[servos.iq[servos.names.index(n)]]) for n in names}
        out = []
        for k in range(1200):
            s = min(k * 0.005 / 3.0, 1.0)
            swing = 0.8 * np.sin(np.pi * s)
            sign = [-1.0, 1.0, -1.0, 1.0]
            servos.command("position", {n: start[n] + sign[i] * swing for i, n in enumerate(names)})
            sim.advance(dt, round(0.005 / dt))
            out.append(sim.state.q[:7].copy())
        return np.array(out)

    reference, euler = run("rk4", 0.00025), run("semi_implicit_euler", DT)
    assert np.abs(reference[:, :3] - reference[0, :3]).max() > 0.5  # the vehicle moves
    assert np.abs(euler[:, :3] - reference[:, :3]).max() < 0.3e-3
    turn = 2.0 * np.arccos(np.clip(np.abs((euler[:, 3:7] * reference[:, 3:7]).sum(axis=1)), 0.0, 1.0))
    assert np.degrees(turn.max()) < 0.03
