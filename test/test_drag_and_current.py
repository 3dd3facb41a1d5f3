"""Per-link cylinder drag against closed forms, and time-varying currents against the analytic
motion of a body in an accelerating flow."""

from __future__ import annotations

import numpy as np
import pytest

from uvms_sim.dynamics import nonlinear_effects
from uvms_sim.hydro import Environment, Hydrodynamics
from uvms_sim.hydro.current import SinusoidalCurrent, TabulatedCurrent
from uvms_sim.hydro.drag import CylinderDrag, cylinder_drag_wrench
from uvms_sim.model import Body, ConfigError, Joint, Model, load
from uvms_sim.simulator import Simulator

RHO, CD, R, L = 1000.0, 1.1, 0.02, 0.3
K = 0.5 * RHO * CD * 2.0 * R  # drag per unit length and unit |v_n| v_n


def test_broadside_translation_matches_closed_form():
    """F = -½ ρ C_d (2r) L |V| V for a link moving across its axis; axial speed adds nothing."""
    drag = CylinderDrag(L, R, axis=[1, 0, 0], start=[0.1, 0, 0], drag_coefficient=CD)
    V = 0.7
    w = cylinder_drag_wrench(drag, np.array([0.0, V, 0.0, 0, 0, 0]), RHO)
    F = -K * L * V * abs(V)
    np.testing.assert_allclose(w[:3], [0.0, F, 0.0], rtol=1e-14)
    # the force acts at the middle of the segment (x = 0.1 + L/2): moment about z = x F
    np.testing.assert_allclose(w[3:], [0.0, 0.0, (0.1 + L / 2) * F], rtol=1e-14, atol=1e-15)
    w_axial = cylinder_drag_wrench(drag, np.array([0.4, V, 0.0, 0, 0, 0]), RHO)
    np.testing.assert_allclose(w_axial, w, rtol=1e-14, atol=1e-15)


def test_rotation_about_one_end_matches_closed_form():
    """v_n(s) = ω s: F = -k ω|ω| L³/3 and M = -k ω|ω| L⁴/4 (exact with Gauss-Legendre)."""
    drag = CylinderDrag(L, R, drag_coefficient=CD, points=2)
    wz = -1.3
    w = cylinder_drag_wrench(drag, np.array([0, 0, 0, 0, 0, wz]), RHO)
    np.testing.assert_allclose(w[1], -K * wz * abs(wz) * L**3 / 3, rtol=1e-13)
    np.testing.assert_allclose(w[5], -K * wz * abs(wz) * L**4 / 4, rtol=1e-13)
    assert w[0] == 0 and w[2] == 0


def test_rotation_about_the_middle_quadrature_error():
    """v_n changes sign at the middle: F = 0 and M = -k ω|ω| L⁴/32; eight Gauss points give M
    to 2e-3 (the kink of |s|s at the middle is what quadrature cannot resolve exactly)."""
    drag = CylinderDrag(L, R, start=[-L / 2, 0, 0], drag_coefficient=CD)
    wz = 2.0
    w = cylinder_drag_wrench(drag, np.array([0, 0, 0, 0, 0, wz]), RHO)
    exact = -K * wz * abs(wz) * L**4 / 32
    assert abs(w[1]) < 1e-14
    assert w[5] == pytest.approx(exact, rel=2e-3)


def _cylinder_body(drag_model: bool = True) -> Model:
    mass = RHO * np.pi * R**2 * L  # neutrally buoyant
    hydro = Hydrodynamics(
        added_mass=np.diag([0.0, mass, mass, 0.0, 0.0, 0.0]),
        volume=np.pi * R**2 * L,
        center_of_buoyancy=[L / 2, 0, 0],
        drag=CylinderDrag(L, R, drag_coefficient=CD) if drag_model else None,
    )
    inertia = np.diag([0.5 * mass * R**2, mass * (3 * R**2 + L**2) / 12, mass * (3 * R**2 + L**2) / 12])
    return Model([Body("link", -1, Joint("free"), mass, com=[L / 2, 0, 0], inertia=inertia, hydro=hydro)])


def test_drag_enters_the_dynamics():
    """Through RNEA: the generalized force to hold a broadside-moving link at zero acceleration
    is minus its drag (no gravity, no other damping)."""
    model = _cylinder_body()
    q = model.neutral()
    V = 0.5
    v = np.array([0, 0, V, 0, 0, 0.0])
    h = nonlinear_effects(model, model.create_data(), q, v, Environment(gravity=0.0))
    assert h[2] == pytest.approx(K * L * V * V, rel=1e-12)
    # the same relative velocity from a current instead of motion
    h2 = nonlinear_effects(
        model, model.create_data(), q, np.zeros(6), Environment(gravity=0.0, current=[0, 0, -V])
    )
    assert h2[2] == pytest.approx(K * L * V * V, rel=1e-12)


def test_broadside_terminal_velocity():
    """A constant broadside force F drives the link to V = sqrt(F / (k L))."""
    model = _cylinder_body()
    sim = Simulator(model, Environment(gravity=0.0))
    F = 2.0
    sim.set_generalized_forces(np.array([0, 0, F, 0, -F * L / 2, 0]))  # at the centre: no spin
    for _ in range(2000):
        sim.step(0.01)
    assert sim.state.v[2] == pytest.approx(np.sqrt(F / (K * L)), rel=1e-6)
    assert np.abs(sim.state.v[3:]).max() < 1e-9


@pytest.mark.parametrize("body_density_ratio", [1.0, 0.3, 2.5])
def test_body_in_a_sinusoidal_current(body_density_ratio):
    """No damping, no gravity: (m + M_A) v̇ = (ρV + M_A) v̇_c (McMillan et al. 1996 eqs. 5 and 8), so
    v(t) = v(0) + k (v_c(t) - v_c(0)) with k = (ρV + M_A)/(m + M_A); a neutrally buoyant body
    (k = 1) moves with the water. RK4 at 10 ms over 10 s: error below 1e-9 m/s."""
    V = 0.002
    ma = 0.5 * RHO * V  # a sphere's added mass
    m = body_density_ratio * RHO * V
    inertia = 0.4 * m * 0.078**2
    hydro = Hydrodynamics(added_mass=np.diag([ma, ma, ma, 0, 0, 0]), volume=V)
    model = Model([Body("ball", -1, Joint("free"), m, inertia=np.eye(3) * inertia, hydro=hydro)])
    profile = SinusoidalCurrent(
        mean=[0.1, 0, 0], amplitude=[0.3, 0.2, 0.05], period=4.0, phase=[0.0, 1.0, 2.0]
    )
    sim = Simulator(model, Environment(gravity=0.0, current_profile=profile))
    k = (RHO * V + ma) / (m + ma)
    for _ in range(1000):
        sim.step(0.01)
    expected = k * (profile.velocity(sim.state.t) - profile.velocity(0.0))
    np.testing.assert_allclose(sim.state.v[:3], expected, rtol=0, atol=1e-9)


def test_tabulated_current():
    t = [0.0, 1.0, 2.0, 4.0]
    vel = [[0, 0, 0], [0.2, 0, 0], [0.3, 0.1, 0], [0.3, 0.1, 0.05]]
    c = TabulatedCurrent(t, vel)
    np.testing.assert_allclose(c.velocity(1.0), [0.2, 0, 0])
    np.testing.assert_allclose(c.velocity(-5.0), vel[0])
    np.testing.assert_allclose(c.velocity(9.0), vel[-1])
    np.testing.assert_array_equal(c.acceleration(9.0), np.zeros(3))
    h = 1e-6
    for tt in (0.3, 1.5, 3.2):
        np.testing.assert_allclose(
            c.acceleration(tt), (c.velocity(tt + h) - c.velocity(tt - h)) / (2 * h), atol=1e-6
        )
    with pytest.raises(ValueError, match="strictly increasing"):
        TabulatedCurrent([0.0, 0.0], [[0, 0, 0], [1, 0, 0]])
    with pytest.raises(ValueError, match="not both"):
        Environment(current=[0.1, 0, 0], current_profile=c)
    with pytest.raises(ValueError, match="m/s\\^2 between t = 0 and 1e-06"):
        TabulatedCurrent([0.0, 1e-6, 1.0], [[0, 0, 0], [1, 0, 0], [1, 0, 0]])
    with pytest.raises(ValueError, match="within \\+-10 m/s"):
        TabulatedCurrent([0.0, 1.0], [[0, 0, 0], [1e300, 0, 0]])


def test_currents_beyond_water_are_refused_where_they_are_made(tmp_path):
    """A sinusoidal current of period 1e-300 s (or 1 ms) is refused when it is made, with the
    reason, in the Python API and in a description (one line naming the key); a sinusoid at
    the limits (0.1 s, 10 m/s) runs finitely for the BlueROV2 Heavy at the node's 2 ms step."""
    for period in (1e-300, 1e-3, 0.0999, float("nan"), -1.0):
        with pytest.raises(ValueError, match=r"period must be at least 0\.1 s"):
            SinusoidalCurrent([0, 0, 0], [0.1, 0, 0], period)
    with pytest.raises(ValueError, match="at most 10 m/s"):
        SinusoidalCurrent([6.0, 0, 0], [-5.0, 0, 0], 10.0)
    base = "vehicles:\n  - name: a\n    links: [{name: a, mass: 1.0, inertia: [0.1, 0.1, 0.1]}]\n"
    p = tmp_path / "s.yaml"
    p.write_text("environment:\n  current: {type: sinusoidal, mean: [0, 0, 0], amplitude: [0.2, 0, 0], "
                 "period: 1.0e-300}\n" + base)  # fmt: skip
    with pytest.raises(ConfigError, match=r"s.yaml:2: environment.current: period must be at least 0.1 s"):
        load(p)
    from dataclasses import replace

    from uvms_sim.model.configs import resolve

    heavy = load(resolve("bluerov2_heavy"))
    fastest = SinusoidalCurrent([0, 0, 0], [10.0, 10.0, 10.0], 0.1)
    environment = replace(heavy.environment, current_profile=fastest)
    sim = Simulator.from_system(replace(heavy, environment=environment))
    for _ in range(1000):
        sim.step(0.002)
    assert np.all(np.isfinite(sim.state.q)) and np.all(np.isfinite(sim.state.v))


def test_current_from_yaml(tmp_path):
    base = "vehicles:\n  - name: a\n    links: [{name: a, mass: 1.0, inertia: [0.1, 0.1, 0.1]}]\n"
    p = tmp_path / "s.yaml"
    p.write_text(
        "environment:\n  current: {type: sinusoidal, mean: [0.1, 0, 0], amplitude: [0.2, 0, 0], period: 5}\n"
        + base
    )
    env = load(p).environment
    np.testing.assert_allclose(env.fluid_state(1.25)[0], [0.3, 0, 0])
    p.write_text(
        "environment:\n  current: {type: table, time: [0, 10], velocity: [[0, 0, 0], [1, 0, 0]]}\n" + base
    )
    np.testing.assert_allclose(load(p).environment.fluid_state(5.0)[0], [0.5, 0, 0])
    p.write_text("environment:\n  current: [0.5, 0.0, 0.0]\n" + base)
    np.testing.assert_allclose(load(p).environment.current, [0.5, 0, 0])
    p.write_text("environment:\n  current: {type: table, time: [0, 10], velocity: [[0, 0, 0]]}\n" + base)
    with pytest.raises(ValueError, match=r"environment\.current\.velocity: expected 2 rows of 3 numbers"):
        load(p)
