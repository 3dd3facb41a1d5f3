"""One free body against Fossen's matrix equation and closed-form results."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from transforms3d.euler import quat2euler
from transforms3d.quaternions import axangle2quat

from uvms_sim.dynamics import aba, step
from uvms_sim.hydro import Environment, Hydrodynamics
from uvms_sim.model import Model
from uvms_sim.model.library import bluerov2_body
from uvms_sim.spatial import skew


def fossen_acceleration(body, q, nu, tau, env: Environment) -> np.ndarray:
    """ν̇ from Fossen (2011) eqs. 3.57, 6.43, 7.12, 4.6, 10.x, written independently:
    M_RB ν̇ + C_RB(ν)ν + M_A ν̇_r + C_A(ν_r)ν_r + D(ν_r)ν_r + g(η) = τ, ν̇_c = [-ω×v_c^b; 0]."""
    m, rg, Io = body.mass, body.com, body.inertia - body.mass * skew(body.com) @ skew(body.com)
    h = body.hydro
    W = m * env.gravity
    B = env.density * h.volume * env.gravity
    rb = h.center_of_buoyancy
    M_RB = np.block([[m * np.eye(3), -m * skew(rg)], [m * skew(rg), Io]])
    MA = h.added_mass
    v1, v2 = nu[:3], nu[3:]
    C_RB = np.block(
        [
            [np.zeros((3, 3)), -m * skew(v1) - m * skew(skew(v2) @ rg)],
            [-m * skew(v1) - m * skew(skew(v2) @ rg), m * skew(skew(v1) @ rg) - skew(Io @ v2)],
        ]
    )
    phi, theta, _psi = quat2euler(q[3:7], "sxyz")
    R = np.eye(3)
    from transforms3d.quaternions import quat2mat

    R = quat2mat(q[3:7])
    vc_b = R.T @ env.current
    nu_r = nu - np.concatenate((vc_b, np.zeros(3)))
    a1 = MA[:3, :3] @ nu_r[:3] + MA[:3, 3:] @ nu_r[3:]
    a2 = MA[3:, :3] @ nu_r[:3] + MA[3:, 3:] @ nu_r[3:]
    C_A = np.block([[np.zeros((3, 3)), -skew(a1)], [-skew(a1), -skew(a2)]])
    D = h.linear_damping + np.diag(h.quadratic_damping * np.abs(nu_r))
    xg, yg, zg = rg
    xb, yb, zb = rb
    s, c = np.sin, np.cos
    g = np.array(
        [
            (W - B) * s(theta),
            -(W - B) * c(theta) * s(phi),
            -(W - B) * c(theta) * c(phi),
            -(yg * W - yb * B) * c(theta) * c(phi) + (zg * W - zb * B) * c(theta) * s(phi),
            (zg * W - zb * B) * s(theta) + (xg * W - xb * B) * c(theta) * c(phi),
            -(xg * W - xb * B) * c(theta) * s(phi) - (yg * W - yb * B) * s(theta),
        ]
    )
    nuc_dot = np.concatenate((-np.cross(v2, vc_b), np.zeros(3)))
    rhs = tau - C_RB @ nu - C_A @ nu_r - D @ nu_r - g + MA @ nuc_dot
    return np.linalg.solve(M_RB + MA, rhs)


def random_pose(rng) -> np.ndarray:
    quat = rng.normal(size=4)
    return np.concatenate((rng.normal(size=3), quat / np.linalg.norm(quat)))


@pytest.mark.parametrize("seed", range(10))
def test_free_body_matches_fossen_matrix_equation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(6, 6))
    body = bluerov2_body()
    if seed % 2:  # a full, coupled 6x6 added mass and an off-centre CoB
        body = replace(
            body,
            hydro=replace(body.hydro, added_mass=A @ A.T, center_of_buoyancy=rng.normal(size=3) * 0.05),
        )
    model = Model([body])
    env = Environment(current=rng.normal(size=3) * 0.5)
    q, nu, tau = random_pose(rng), rng.normal(size=6), rng.normal(size=6) * 20
    ours = aba(model, model.create_data(), q, nu, tau, env)
    ref = fossen_acceleration(body, q, nu, tau, env)
    # two exact formulations in double precision: agreement to rounding
    assert np.allclose(ours, ref, rtol=1e-10, atol=1e-10)


def test_terminal_velocity_matches_damping_coefficients() -> None:
    """Surge force F balances X_u u + X_uu u|u| at u* = (-X_u + sqrt(X_u² + 4 X_uu F)) / (2 X_uu)."""
    # CoG moved to the origin and gravity off isolate surge: with r_g below the thrust line and
    # no restoring moment, a surge force would also pitch the vehicle.
    model = Model([replace(bluerov2_body(), com=np.zeros(3))])
    data = model.create_data()
    env = Environment(gravity=0.0)
    F = 40.0
    Xu, Xuu = 4.03, 18.18
    u_star = (-Xu + np.sqrt(Xu**2 + 4 * Xuu * F)) / (2 * Xuu)
    q, v = model.neutral(), np.zeros(6)
    tau = np.array([F, 0, 0, 0, 0, 0])
    for _ in range(3000):  # 30 s, > 20 time constants of the linearised surge dynamics
        q, v = step(model, data, q, v, tau, 0.01, env)
    assert v[0] == pytest.approx(u_star, rel=1e-6)
    assert np.allclose(v[1:], 0, atol=1e-9)


def test_neutral_buoyancy_roll_period() -> None:
    """Small roll of a neutrally buoyant body with B above G is a pendulum.

    Linearised sway/roll with no damping: M2 [v̇, ṗ] = [0, -W z_BG φ] where M2 is the (v, p)
    block of M_RB + M_A (sway couples to roll through -m z_g), so the period is
    T = 2π sqrt((M_pp - M_pv²/M_vv) / (W z_BG)).
    """
    base = bluerov2_body()
    m, zg = base.mass, base.com[2]
    hydro = Hydrodynamics(added_mass=base.hydro.added_mass, volume=m / 1000.0)  # no damping, B = W
    model = Model([replace(base, hydro=hydro)])
    data = model.create_data()
    env = Environment(density=1000.0)
    M = model.I_H[0]
    M_vv, M_pv, M_pp = M[1, 1], M[3, 1], M[3, 3]
    assert M_pv == pytest.approx(-m * zg)
    period = 2 * np.pi * np.sqrt((M_pp - M_pv**2 / M_vv) / (m * env.gravity * zg))
    phi0 = np.deg2rad(1.0)
    q = np.concatenate((np.zeros(3), axangle2quat([1, 0, 0], phi0)))
    v = np.zeros(6)
    h, t, roll, times = 0.002, 0.0, [], []
    while t < 3.2 * period:
        q, v = step(model, data, q, v, np.zeros(6), h, env)
        t += h
        roll.append(quat2euler(q[3:], "sxyz")[0])
        times.append(t)
    roll = np.array(roll)
    # upward zero crossings, linearly interpolated
    idx = np.flatnonzero((roll[:-1] < 0) & (roll[1:] >= 0))
    crossings = [times[k] - roll[k] * (times[k + 1] - times[k]) / (roll[k + 1] - roll[k]) for k in idx]
    measured = np.mean(np.diff(crossings))
    # amplitude correction at 1 deg is (φ0²/16 ≈ 2e-5); interpolation error O(h²/T²) ≈ 1e-5
    assert measured == pytest.approx(period, rel=5e-4)
    assert np.max(np.abs(roll)) == pytest.approx(phi0, rel=0.02)


def test_body_in_accelerating_fluid_follows_it() -> None:
    """Neutrally buoyant sphere (M_A = ½ρV) released with the fluid: the Froude-Krylov force
    ρV a_f plus the added-mass reaction M_A a_f accelerate m + M_A exactly at a_f (eqs. 5, 8)."""
    rho, V = 1000.0, 0.004
    m = rho * V
    sphere = replace(
        bluerov2_body(),
        mass=m,
        com=np.zeros(3),
        inertia=np.eye(3) * 0.4 * m * 0.1**2,
        hydro=Hydrodynamics(added_mass=np.diag([0.5 * m] * 3 + [0.0] * 3), volume=V),
    )
    model = Model([sphere])
    a_f = np.array([0.3, -0.2, 0.1])
    env = Environment(current=[0.5, 0.0, 0.0], current_acceleration=a_f)
    q = model.neutral()
    v = np.array([0.5, 0, 0, 0, 0, 0.0])  # moving with the water
    ddq = aba(model, model.create_data(), q, v, np.zeros(6), env)
    assert np.allclose(ddq[:3], a_f, atol=1e-12)
    assert np.allclose(ddq[3:], 0, atol=1e-12)
