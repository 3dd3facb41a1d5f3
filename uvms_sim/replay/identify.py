"""Damping and thrust identification from a bag (integral equation error, linear least squares).

Equations of motion of the vehicle's floating base (McMillan et al. 1996 eq. 2 with the hydrodynamic
inertia; Fossen's model when the vehicle is one body), with the joints of any arm held at their
initial positions:

    M ν̇ + h(q, ν) + Gᵀ(D ν_b + d ∘ |ν_b| ν_b) = k_F f_F(t) + k_R f_R(t) + k_ν f_ν(t)

``M`` is the base block of the joint-space inertia (rigid body and added mass, CRBA); ``h`` the
inverse dynamics at zero acceleration of the model with the identified damping removed
(Coriolis and Munk terms, gravity, buoyancy, the damping that is not identified); ``ν_b`` the
velocity of the hull body (the first body with mass; the base itself for a YAML description,
``base_link`` under a URDF's ``base_link_frd``) and ``G`` its constant motion transform from the
base. ``f_F``, ``f_R`` and ``f_ν`` are the thrust wrenches of the three terms of Nielsen et al. 2018
eq. 12 from the bag's PWM: forward bollard ``T_nn⁺|n|n``, reverse bollard ``T_nn⁻|n|n`` and
advance ``T_nu|n|u_a``; ``k_F``, ``k_R``, ``k_ν`` scale them (1 = as described).

Integrated over windows of the measured samples the derivative of the noisy velocity
disappears (the integral form of the equation error; no differentiation of the data):

    Σ M (ν_{k+1} - ν_k) + ∫h = Σ k ∫f - Σ_i Gᵀe_i (D_ii ∫ν_b,i + d_i ∫|ν_b,i| ν_b,i)

Velocities are interpolated linearly between samples; the thrust integrals are split at the
command changes (each command held until the next, as the replay holds it). The result is
linear in ``θ = (D_ii, d_i for each axis[, k_F, k_R, k_ν])``; ``scipy.optimize.lsq_linear`` fits it
with ``θ >= 0``, each equation row weighted by the inverse RMS of its residuals in a first fit,
and the standard errors are ``s² (AᵀWA)⁻¹`` over non-overlapping windows. Without ``thrust``
the thrust is taken as described (``k = 1``). Assumes no water current and a static thrust map
(the spin-up lag is not identified).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import cast

import numpy as np
from scipy.optimize import lsq_linear

from ..actuators.thruster import thrust_terms
from ..dynamics import crba, forward_kinematics, rnea
from ..hydro.params import AXES, FORCES, Hydrodynamics
from ..model.body import Body
from ..model.model import Model
from ..model.system import System
from ..simulator import Simulator
from .bag import BagContents
from .run import state_from_odometry

THRUST_NAMES = ("thrust_forward_scale", "thrust_reverse_scale", "advance_scale")


def hull_body(model: Model) -> int:
    """The body whose damping is identified: the first body with mass."""
    return next(i for i, b in enumerate(model.bodies) if b.mass > 0.0 and b.hydro is not None)


def _hydrodynamics(body: Body) -> Hydrodynamics:
    """A body's hydrodynamics; ValueError for a body without (nothing to identify)."""
    if body.hydro is None:
        raise ValueError(f"body {body.name!r} has no hydrodynamics to identify")
    return body.hydro


def _without_damping(model: Model, body: int, axes) -> Model:
    """The model with the diagonal linear and the quadratic damping of ``axes`` of ``body``
    removed (what is identified); everything else stays in ``h``."""
    b = model.bodies[body]
    h = _hydrodynamics(b)
    lin, quad = h.linear_damping.copy(), h.quadratic_damping.copy()
    for i in axes:
        lin[i, i] = 0.0
        quad[i] = 0.0
    bodies = list(model.bodies)
    bodies[body] = replace(b, hydro=replace(h, linear_damping=lin, quadratic_damping=quad))
    return Model(bodies, name=model.name)


def _wrench_map(model: Model, q: np.ndarray, base: slice) -> np.ndarray:
    """``G[b]`` (nbodies x 6 x 6): base generalized force of a unit wrench on body b (body axes),
    from the linearity of RNEA in the external wrenches (joints held, so it is constant)."""
    data = model.create_data()
    zero = np.zeros(model.nv)
    ref = rnea(model, data, q, zero, zero)[base]
    G = np.zeros((model.nbodies, 6, 6))
    for b in range(model.nbodies):
        for j in range(6):
            w = np.zeros((model.nbodies, 6))
            w[b, j] = 1.0
            G[b, :, j] = ref - rnea(model, data, q, zero, zero, None, w)[base]
    return G


def _thrust_terms(bank, data) -> np.ndarray:
    """Per-body wrenches (3 x nbodies x 6) of the three terms of the thrust (Nielsen et al. 2018 eq. 12):
    forward bollard ``T_nn⁺|n|n``, reverse bollard ``T_nn⁻|n|n`` and advance ``T_nu|n|u_a``
    (saturated thrust goes to the bollard term whose limit it hit)."""
    bank.wrenches(data)
    terms = thrust_terms(bank.n, bank.u_a, bank.T_nn_forward, bank.T_nn_reverse, bank.T_nu)
    total = terms.sum(axis=0)
    hi, lo = total > bank.T_max, total < bank.T_min
    terms[:, hi | lo] = 0.0
    terms[0, hi] = bank.T_max[hi]
    terms[1, lo] = bank.T_min[lo]
    return np.einsum("bt,ktj->kbj", bank.incidence, terms[:, :, None] * bank.unit_wrench)


def identify(
    system: System,
    bag: BagContents,
    axes=(0, 1, 2, 5),
    thrust: bool = False,
    window: int = 5,
) -> dict[str, tuple[float, float]]:
    """Fit the hull's linear and quadratic damping on ``axes`` (0..5 = u v w p q r) and, with
    ``thrust``, scales of the three terms of the thrust model (forward and reverse bollard
    thrust, advance-speed term ``T_nu``), from the bag's commands and measured motion. Returns
    ``{name: (value, standard error)}``: damping in Fossen's sign convention (``X_u = -D``),
    scales as ``thrust_forward_scale``, ``thrust_reverse_scale``, ``advance_scale``.
    ``window`` is the number of sample intervals integrated into one equation."""
    model = system.model
    if bag.command_source != "pwm":
        raise ValueError(
            "identification needs the PWM the autopilot applied (mavros rc/out or thrusters/pwm); "
            "this bag has only the pilot's RC override"
        )
    t, odo = bag.odometry.arrays()
    if len(t) < 4 * window + 1:
        raise ValueError(
            f"identification needs at least {4 * window + 1} motion samples, the bag has {len(t)}"
        )
    axes = tuple(int(a) for a in axes)
    hull = hull_body(model)
    base = next(model.v_slice(i) for i, j in enumerate(model.joints) if j.nv == 6)
    states = [state_from_odometry(system, row) for row in odo]
    q_ref = states[0][0]
    model0 = _without_damping(model, hull, axes)
    data0 = model0.create_data()
    M = crba(model, model.create_data(), q_ref)[base, base]
    G = _wrench_map(model, q_ref, base)
    sim = Simulator.from_system(system)
    bank = sim.thrusters
    if bank is None:
        raise ValueError("the description has no thrusters: identification needs the thrust")
    t_cmd, pwm = bag.commands.arrays()
    nv = model.nv

    def full(nu):
        out = np.zeros(nv)
        out[base] = nu
        return out

    nu = np.array([s[1][base] for s in states])
    nu_hull = nu @ G[hull]  # ν_b = Gᵀ ν (rows are samples)
    h = np.array(
        [
            rnea(model0, data0, q, full(n), np.zeros(nv), system.environment)[base]
            for (q, _), n in zip(states, nu, strict=True)
        ]
    )

    def thrust_at(s, k_cmd, q, n):
        if k_cmd >= 0:
            bank.set_motor_pwm(pwm[k_cmd])
        bank.advance(1e3)  # the static map
        forward_kinematics(model, sim.data, q, full(n), system.environment)
        return np.einsum("bij,kbj->ki", G, _thrust_terms(bank, sim.data))

    # per sample interval: the left side and the integrals of every regressor
    n_int = len(t) - 1
    lhs = np.zeros((n_int, 6))
    thrust_int = np.zeros((n_int, 3, 6))  # integrals of the three thrust terms
    for k in range(n_int):
        ta, tb = t[k], t[k + 1]
        lhs[k] = M @ (nu[k + 1] - nu[k]) + 0.5 * (tb - ta) * (h[k] + h[k + 1])
        inside = t_cmd[(t_cmd > ta) & (t_cmd < tb)]
        edges = np.concatenate(([ta], inside, [tb]))
        q = states[k][0]
        for s0, s1 in itertools.pairwise(edges):
            k_cmd = int(np.searchsorted(t_cmd, s0, side="right")) - 1
            ends = []
            for s in (s0, s1):
                x = (s - ta) / (tb - ta)
                ends.append(thrust_at(s, k_cmd, q, (1 - x) * nu[k] + x * nu[k + 1]))
            thrust_int[k] += 0.5 * (s1 - s0) * (ends[0] + ends[1])
    dt = np.diff(t)[:, None]
    lin_int = 0.5 * dt * (nu_hull[:-1] + nu_hull[1:])
    sq = np.abs(nu_hull) * nu_hull
    quad_int = 0.5 * dt * (sq[:-1] + sq[1:])

    # windows of `window` intervals -> one 6-row equation each
    n_win = n_int // window
    cut = n_win * window

    def windows(x):
        return x[:cut].reshape(n_win, window, *x.shape[1:]).sum(axis=1)

    L, TH = windows(lhs), windows(thrust_int)
    Vl, Vq = windows(lin_int), windows(quad_int)
    columns, names = [], []
    for i in axes:
        g = G[hull][:, i]  # base force of a unit hull force on axis i
        columns.append(-Vl[:, i, None] * g)
        columns.append(-Vq[:, i, None] * g)
        names += [f"{FORCES[i]}_{AXES[i]}", f"{FORCES[i]}_{AXES[i]}{AXES[i]}"]
    target = L.copy()
    if thrust:
        columns += [TH[:, 0], TH[:, 1], TH[:, 2]]
        names += list(THRUST_NAMES)
    else:
        target -= TH.sum(axis=1)
    A = np.stack([c.reshape(-1) for c in columns], axis=1)  # rows: window x base dof
    b = target.reshape(-1)
    dof_of_row = np.tile(np.arange(6), n_win)
    used = np.any(A != 0.0, axis=1)
    A, b, dof_of_row = A[used], b[used], dof_of_row[used]
    first = lsq_linear(A, b, bounds=(0.0, np.inf))
    r = A @ first.x - b
    sigma = np.array(
        [np.sqrt(np.mean(r[dof_of_row == d] ** 2)) if np.any(dof_of_row == d) else 1.0 for d in range(6)]
    )
    w = 1.0 / np.maximum(sigma[dof_of_row], 1e-12 * max(1.0, float(np.abs(b).max())))
    Aw, bw = A * w[:, None], b * w
    fit = lsq_linear(Aw, bw, bounds=(0.0, np.inf))
    m, p = Aw.shape
    s2 = float(np.sum((Aw @ fit.x - bw) ** 2) / max(1, m - p))
    se = np.sqrt(np.clip(np.diag(s2 * np.linalg.pinv(Aw.T @ Aw)), 0.0, None))
    result = {}
    for name, value, err in zip(names, fit.x, se, strict=True):
        sign = 1.0 if name in THRUST_NAMES else -1.0
        result[name] = (sign * float(value), float(err))
    return result


def _scaled_thruster_spec(system: System, fitted: dict) -> tuple[tuple[str, object], ...]:
    """The first vehicle's ``thruster_model`` with the fitted full-command thrusts."""
    from ..actuators.thruster import thruster_model

    spec = dict(system.vehicles[0].thruster_model)
    kind = thruster_model(spec)
    k_f, k_r, k_nu = (fitted[name][0] for name in THRUST_NAMES)
    spec["thrust_forward"] = round(kind.thrust_forward * k_f, 4)
    spec["thrust_reverse"] = round(kind.thrust_reverse * k_r, 4)
    # T_nu = -T_nn⁺ / (J0 D): scaling T_nn⁺ by k_f and T_nu by k_nu moves J0 to J0 k_f / k_nu
    if k_nu > 0.0:
        spec["zero_thrust_advance_ratio"] = round(kind.zero_thrust_advance_ratio * k_f / k_nu, 4)
    return tuple(spec.items())


def apply_identified(system: System, fitted: dict) -> System:
    """The system with the fitted damping in its hull and, if fitted, the scaled thrusts in its
    first vehicle's thruster model (``model.export.save_yaml`` writes it as a description)."""
    model = system.model
    hull = hull_body(model)
    b = model.bodies[hull]
    h = _hydrodynamics(b)
    lin, quad = h.linear_damping.copy(), h.quadratic_damping.copy()
    for i, (f, a) in enumerate(zip(FORCES, AXES, strict=True)):
        if f"{f}_{a}" in fitted:
            lin[i, i] = -fitted[f"{f}_{a}"][0]
        if f"{f}_{a}{a}" in fitted:
            quad[i] = -fitted[f"{f}_{a}{a}"][0]
    bodies = list(model.bodies)
    bodies[hull] = replace(b, hydro=replace(h, linear_damping=lin, quadratic_damping=quad))
    vehicles = list(system.vehicles)
    if THRUST_NAMES[0] in fitted and vehicles:
        vehicles[0] = replace(vehicles[0], thruster_model=_scaled_thruster_spec(system, fitted))
    return replace(system, model=Model(bodies, name=model.name), vehicles=tuple(vehicles))


def overlay_yaml(system: System, fitted: dict) -> str:
    """A YAML overlay for the vehicle: the hull's ``hydrodynamics`` block of
    ``apply_identified`` (the fitted damping, the other terms as described) and, if thrust
    scales were fitted, its ``thruster_model``. Its keys are those of a ``vehicles[]`` entry
    (or of ``load(urdf, overlay=...)``'s file for the hydrodynamics)."""
    import yaml

    from ..model.export import _hydro

    identified = apply_identified(system, fitted)
    model = identified.model
    hull = model.bodies[hull_body(model)]
    h = _hydrodynamics(hull)
    block = _hydro(h)
    names = list(enumerate(zip(FORCES, AXES, strict=True)))
    block["linear_damping"] = {f"{f}_{a}": -float(h.linear_damping[k, k]) for k, (f, a) in names}
    block["quadratic_damping"] = {f"{f}_{a}{a}": -float(h.quadratic_damping[k]) for k, (f, a) in names}
    out: dict = {"hydrodynamics": {hull.name: block}}
    if THRUST_NAMES[0] in fitted and identified.vehicles:
        spec = identified.vehicles[0].thruster_model
        out["thruster_model"] = {k: (str(v) if k == "preset" else float(cast(float, v))) for k, v in spec}
    return yaml.safe_dump(out, sort_keys=False)
