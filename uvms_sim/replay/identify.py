"""Damping, thrust, buoyancy, thruster lag and command delay identified from one or several
recordings (integral equation error, bounded linear least squares profiled over the lag and
the delay), with standard errors checked against the spread over runs.

Equations of motion of the vehicle's floating base (McMillan et al. 1996 eq. 2 with the hydrodynamic
inertia; Fossen's model when the vehicle is one body), with the joints of any arm held at their
initial positions:

    M ν̇ + h(q, ν) + Gᵀ(D ν_b + d ∘ |ν_b| ν_b) = k_F f_F(t) + k_R f_R(t) + k_ν f_ν(t) + ΔB f_B(q)

``M`` is the base block of the joint-space inertia (rigid body and added mass, CRBA); ``h`` the
inverse dynamics at zero acceleration of the model with the identified damping removed
(Coriolis and Munk terms, gravity, buoyancy, the damping that is not identified); ``ν_b`` the
velocity of the hull body (the first body with mass; the base itself for a YAML description,
``base_link`` under a URDF's ``base_link_frd``) and ``G`` its constant motion transform from the
base. ``f_F``, ``f_R`` and ``f_ν`` are the thrust wrenches of the three terms of Nielsen et al. 2018
eq. 12 from the recorded PWM: forward bollard ``T_nn⁺|n|n``, reverse bollard ``T_nn⁻|n|n`` and
advance ``T_nu|n|u_a``; ``k_F``, ``k_R``, ``k_ν`` scale them (1 = as described). ``f_B`` is the
wrench of a unit upward force at the centre of buoyancy, and ``ΔB`` (N) the net buoyancy the
description is missing. The shaft speed ``n`` follows the command delayed by ``τ_d`` through a
first-order lag of time constant ``τ`` (``ThrusterModel.time_constant``).

Integrated over windows of the measured samples the derivative of the noisy velocity
disappears (the integral form of the equation error; no differentiation of the data):

    Σ M (ν_{k+1} - ν_k) + ∫h = Σ k ∫f + ΔB ∫f_B - Σ_i Gᵀe_i (D_ii ∫ν_b,i + d_i ∫|ν_b,i| ν_b,i)

Velocities are interpolated linearly between samples; the thrust is integrated on a 2 ms grid
(the lag is exact for commands held between grid points). For a given ``(τ, τ_d)`` the
equation is linear in ``θ`` (damping ``D_ii, d_i >= 0`` on each axis, and what else is asked:
the thrust scales, ``ΔB``), fitted by ``scipy.optimize.lsq_linear`` within bounds, each row
weighted by the inverse RMS of its degree of freedom's residuals in a first fit; ``τ`` and
``τ_d`` are chosen on a grid by the weighted residual (a profile fit).

Standard errors: the formal ``s² (AᵀWA)⁻¹`` assumes independent windows, which the residuals
of a real vehicle are not (a model error lasts for seconds, and runs differ), and on the tank
runs it is 3-5x smaller than the spread between runs. Reported is the larger of the formal
error and a bootstrap's: over recordings (resampled with replacement, the whole profile fit
repeated) when there are at least three, else over blocks of consecutive windows. Parameters
whose estimates are correlated beyond ``COLLINEAR`` (from the bootstrap, else the formal
covariance) are reported as not separately identifiable, and estimates that end on a bound
as set by the bound. Assumes no water current.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from scipy.optimize import lsq_linear
from scipy.signal import lfilter

from ..actuators.bank import ThrusterBank, thruster_bank
from ..actuators.thruster import thrust_terms
from ..dynamics import crba, forward_kinematics, rnea
from ..hydro.params import AXES, FORCES, Hydrodynamics
from ..model.body import Body
from ..model.kinematics import placements
from ..model.model import Model
from ..model.system import System
from .bag import BagContents
from .run import state_from_odometry
from .windows import with_reversed_motors

THRUST_NAMES = ("thrust_forward_scale", "thrust_reverse_scale", "advance_scale")
BUOYANCY = "buoyancy_offset"  # N, net upward force missing from the description
LAG, DELAY = "time_constant", "command_delay"  # s
GROUPS = {"damping": (), "thrust": THRUST_NAMES, "buoyancy": (BUOYANCY,), "lag": (LAG,), "delay": (DELAY,)}
BOUNDS = {
    "thrust_forward_scale": (0.5, 1.5),
    "thrust_reverse_scale": (0.5, 1.5),
    "advance_scale": (0.0, 3.0),
    BUOYANCY: (-30.0, 30.0),
    LAG: (0.0, 0.4),
    DELAY: (0.0, 0.4),
}
GRID_STEP = 0.05  # s, the lag and delay grid
COLLINEAR = 0.95  # |correlation| of two estimates beyond which they are not told apart
RESOLUTION = {
    **dict.fromkeys(THRUST_NAMES, 0.1),
    BUOYANCY: 1.0,
}  # standard errors beyond these: not identified
BLOCKS = 20  # blocks of consecutive windows resampled for one or two recordings
MIN_DISTINCT = 8  # distinct bootstrap resamples below which the bootstrap's spread is not estimated
THRUST_GRID = 0.002  # s


def hull_body(model: Model) -> int:
    """The body whose damping is identified: the first body with mass."""
    return next(i for i, b in enumerate(model.bodies) if b.mass > 0.0 and b.hydro is not None)


def hydrodynamics_of(body: Body) -> Hydrodynamics:
    """A body's hydrodynamics; ValueError for a body without (nothing to identify)."""
    if body.hydro is None:
        raise ValueError(f"body {body.name!r} has no hydrodynamics to identify")
    return body.hydro


def _without_damping(model: Model, body: int, axes) -> Model:
    """The model with the diagonal linear and the quadratic damping of ``axes`` of ``body``
    removed (what is identified); everything else stays in ``h``."""
    b = model.bodies[body]
    h = hydrodynamics_of(b)
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


@dataclass
class _Setup:
    """What every recording shares: the base and hull, the inertia and wrench maps at the
    initial configuration, and the thrusters' constant maps (joints held)."""

    system: System
    base: slice
    hull: int
    M: np.ndarray
    G: np.ndarray  # nbodies x 6 x 6 (_wrench_map)
    model0: Model
    bank: ThrusterBank
    J_a: np.ndarray  # n_thr x 6: advance speeds per unit base velocity
    W: np.ndarray  # n_thr x 6: base force of a unit thrust
    cob: np.ndarray  # the hull's centre of buoyancy, hull axes

    def full(self, nu: np.ndarray) -> np.ndarray:
        out = np.zeros(self.system.model.nv)
        out[self.base] = nu
        return out


def _setup(system: System, axes: tuple[int, ...]) -> _Setup:
    model = system.model
    hull = hull_body(model)
    base = next(model.v_slice(i) for i, j in enumerate(model.joints) if j.nv == 6)
    q_ref = system.initial_q
    G = _wrench_map(model, q_ref, base)
    bank = thruster_bank(system)
    if bank is None:
        raise ValueError("the description has no thrusters: identification needs the thrust")
    data = model.create_data()
    zero = np.zeros(model.nv)
    J_a = np.zeros((len(bank), 6))
    for j in range(6):
        e = zero.copy()
        e[base.start + j] = 1.0
        forward_kinematics(model, data, q_ref, e, system.environment)
        bank.wrenches(data)
        J_a[:, j] = bank.u_a
    W = np.einsum("tij,tj->ti", G[bank.body], bank.unit_wrench)
    M = crba(model, model.create_data(), q_ref)[base, base]
    cob = hydrodynamics_of(model.bodies[hull]).center_of_buoyancy
    return _Setup(system, base, hull, M, G, _without_damping(model, hull, axes), bank, J_a, W, cob)


@dataclass
class _Recording:
    """One recording's per-interval integrals that do not depend on the lag or the delay."""

    name: str
    t: np.ndarray
    nu: np.ndarray  # base velocity at the samples
    lhs: np.ndarray  # n_int x 6: M Δν + ∫h
    lin: np.ndarray  # n_int x 6: ∫ν_b
    quad: np.ndarray  # n_int x 6: ∫|ν_b|ν_b
    buoy: np.ndarray  # n_int x 6: ∫ f_B
    t_cmd: np.ndarray
    targets: np.ndarray  # n_cmd x n_thr: commanded shaft speeds
    thrust: dict = field(default_factory=dict)  # (lag, delay, window): windowed thrust integrals


@dataclass
class Prepared:
    """The recordings' integrals that do not depend on what is fitted (``prepare``): computed
    once, shared by the fits of a held-out comparison (``heldout``), which each use some of
    them; the thrust integrals of each (lag, delay) are kept as they are computed."""

    setup: _Setup
    recordings: list[_Recording]
    axes: tuple[int, ...]
    window: int

    def subset(self, keep: list[int]) -> Prepared:
        return Prepared(self.setup, [self.recordings[k] for k in keep], self.axes, self.window)


def prepare(
    system: System,
    bags: list[BagContents],
    axes=(0, 1, 2, 5),
    window: int = 5,
    names: list[str] | None = None,
) -> Prepared:
    """What ``identify`` computes from the recordings before any fit (module doc). Recordings
    that carry their motor directions (``BagContents.reversed_motors``) are taken on the
    description with those motors reversed; ValueError if they differ."""
    names = names or [f"recording {k + 1}" for k in range(len(bags))]
    directions = {b.reversed_motors for b in bags}
    if len(directions) > 1:
        raise ValueError(
            "the recordings were made with different motor directions (MOT_n_DIRECTION): fit them apart"
        )
    reversed_motors = directions.pop()
    if reversed_motors is not None:  # as the recording vehicle was set up
        system = with_reversed_motors(system, reversed_motors)
    axes = tuple(int(a) for a in axes)
    s = _setup(system, axes)
    return Prepared(s, [_recording(s, n, b, window) for n, b in zip(names, bags, strict=True)], axes, window)


def _recording(s: _Setup, name: str, bag: BagContents, window: int) -> _Recording:
    system, model = s.system, s.system.model
    if bag.command_source != "pwm":
        raise ValueError(
            f"{name}: identification needs the PWM the autopilot applied (mavros rc/out, thrusters/pwm, "
            "RCOU); this recording has only the pilot's RC override"
        )
    t, odo = bag.odometry.arrays()
    if len(t) < 4 * window + 1:
        raise ValueError(
            f"{name}: identification needs at least {4 * window + 1} motion samples, it has {len(t)}"
        )
    states = [state_from_odometry(system, row) for row in odo]
    nu = np.array([v[s.base] for _, v in states])
    data0, data = s.model0.create_data(), model.create_data()
    zero = np.zeros(model.nv)
    h = np.empty((len(t), 6))
    f_B = np.empty((len(t), 6))
    for k, ((q, _), n) in enumerate(zip(states, nu, strict=True)):
        h[k] = rnea(s.model0, data0, q, s.full(n), zero, system.environment)[s.base]
        placements(model, data, q)
        up = data.R_world[s.hull].T @ np.array([0.0, 0.0, -1.0])  # NED: up is -z
        f_B[k] = s.G[s.hull] @ np.r_[up, np.cross(s.cob, up)]
    dt = np.diff(t)[:, None]

    def integral(x):
        return 0.5 * dt * (x[:-1] + x[1:])

    nu_hull = nu @ s.G[s.hull]  # ν_b = Gᵀ ν (rows are samples)
    lhs = np.diff(nu, axis=0) @ s.M.T + integral(h)
    t_cmd, pwm = bag.commands.arrays()
    bank = s.bank
    bank.set_pwm(np.full(len(bank), 1500.0))
    targets = np.empty((len(t_cmd), len(bank)))
    for k in range(len(t_cmd)):
        bank.set_motor_pwm(pwm[k])
        targets[k] = bank.shaft_speed_targets()
    return _Recording(
        name,
        t,
        nu,
        lhs,
        integral(nu_hull),
        integral(np.abs(nu_hull) * nu_hull),
        integral(f_B),
        t_cmd,
        targets,
    )


def _thrust_integrals(s: _Setup, rec: _Recording, lag: float, delay: float) -> np.ndarray:
    """n_int x 3 x 6: the integrals over each sample interval of the base wrenches of the three
    thrust terms, the shaft speeds following the commands delayed by ``delay`` through the lag
    (exact for commands held over each grid cell; midpoint rule)."""
    t = rec.t
    grid = np.arange(t[0], t[-1], THRUST_GRID)
    grid = np.r_[grid, t[-1]]
    width = np.diff(grid)
    mid = grid[:-1] + 0.5 * width
    c = np.searchsorted(rec.t_cmd, mid - delay, side="right") - 1
    target = np.where((c >= 0)[:, None], rec.targets[np.maximum(c, 0)], 0.0)
    if lag > 0.0:
        a = np.exp(-THRUST_GRID / lag)
        after, _ = lfilter([1.0 - a], [1.0, -a], target, axis=0, zi=(a * target[0])[None, :])
        start = np.vstack([target[:1], after[:-1]])
        n = target + (start - target) * np.sqrt(a)
    else:
        n = target
    nu_mid = np.stack([np.interp(mid, t, rec.nu[:, j]) for j in range(6)], axis=1)
    bank = s.bank
    terms = thrust_terms(n, nu_mid @ s.J_a.T, bank.T_nn_forward, bank.T_nn_reverse, bank.T_nu)
    total = terms.sum(axis=0)
    hi, lo = total > bank.T_max, total < bank.T_min
    terms[:, hi | lo] = 0.0
    terms[0][hi] = np.broadcast_to(bank.T_max, hi.shape)[hi]
    terms[1][lo] = np.broadcast_to(bank.T_min, lo.shape)[lo]
    force = (terms @ s.W) * width[None, :, None]  # 3 x cells x 6
    cumulative = np.concatenate([np.zeros((3, 1, 6)), np.cumsum(force, axis=1)], axis=1)
    at = np.stack(
        [[np.interp(t, grid, cumulative[k, :, j]) for j in range(6)] for k in range(3)]
    )  # 3 x 6 x samples
    return np.diff(at, axis=2).transpose(2, 0, 1)


@dataclass
class _Rows:
    """One recording's weighted-least-squares rows at one (lag, delay): A θ = b."""

    A: np.ndarray
    b: np.ndarray
    dof: np.ndarray  # base degree of freedom of each row
    window: np.ndarray  # window index of each row


def _rows(
    s: _Setup, rec: _Recording, axes, fitted: tuple[str, ...], lag: float, delay: float, window: int
) -> _Rows:
    n_win = (len(rec.t) - 1) // window
    cut = n_win * window

    def windows(x):
        return x[:cut].reshape(n_win, window, *x.shape[1:]).sum(axis=1)

    key = (lag, delay, window)
    if key not in rec.thrust:
        rec.thrust[key] = windows(_thrust_integrals(s, rec, lag, delay))
    L, TH = windows(rec.lhs), rec.thrust[key]
    Vl, Vq = windows(rec.lin), windows(rec.quad)
    columns = []
    for i in axes:
        g = s.G[s.hull][:, i]  # base force of a unit hull force on axis i
        columns += [-Vl[:, i, None] * g, -Vq[:, i, None] * g]
    target = L.copy()
    if THRUST_NAMES[0] in fitted:
        columns += [TH[:, 0], TH[:, 1], TH[:, 2]]
    else:
        target -= TH.sum(axis=1)
    if BUOYANCY in fitted:
        columns.append(windows(rec.buoy))
    A = np.stack([c.reshape(-1) for c in columns], axis=1)  # rows: window x base dof
    b = target.reshape(-1)
    used = np.any(A != 0.0, axis=1)
    return _Rows(A[used], b[used], np.tile(np.arange(6), n_win)[used], np.repeat(np.arange(n_win), 6)[used])


def _weights(rows: list[_Rows], lower, upper) -> np.ndarray:
    """Per base dof, the inverse RMS residual of an unweighted fit."""
    A, b, dof = (np.concatenate([getattr(r, k) for r in rows]) for k in ("A", "b", "dof"))
    r = A @ lsq_linear(A, b, bounds=(lower, upper), method="bvls").x - b
    sigma = np.array([np.sqrt(np.mean(r[dof == d] ** 2)) if np.any(dof == d) else 1.0 for d in range(6)])
    return 1.0 / np.maximum(sigma, 1e-12 * max(1.0, float(np.abs(b).max())))


def _solve(
    rows: list[_Rows], w: np.ndarray, lower, upper
) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """Weighted bounded fit: ``(θ, weighted RSS, Aw, residuals)``."""
    A, b, dof = (np.concatenate([getattr(r, k) for r in rows]) for k in ("A", "b", "dof"))
    Aw, bw = A * w[dof][:, None], b * w[dof]
    x = lsq_linear(Aw, bw, bounds=(lower, upper), method="bvls").x
    r = Aw @ x - bw
    return x, float(r @ r), Aw, r


class Identification(dict):
    """``{name: (value, standard error)}`` with the standard error the larger of the formal
    and the bootstrap one (module doc); the details as attributes."""

    formal: dict[str, float]
    spread: dict[str, float]
    warnings: list[str]
    refused: dict[str, str]  # estimates that are not a result, and why (``_warnings``)
    condition: float  # of the equilibrated Fisher information of the final fit
    bootstrap: str
    profile: dict[tuple[float, float], float]

    def accepted(self) -> dict[str, tuple[float, float]]:
        """The estimates that are a result: all but the refused ones."""
        return {k: v for k, v in self.items() if k not in getattr(self, "refused", {})}


def _grid(name: str, wanted: bool, bounds: dict) -> np.ndarray:
    if not wanted:
        return np.zeros(1)
    lo, hi = bounds[name]
    return np.round(np.arange(lo, hi + 1e-9, GRID_STEP), 6)


def identify(
    system: System,
    bags: BagContents | list[BagContents],
    axes=(0, 1, 2, 5),
    thrust: bool = False,
    buoyancy: bool = False,
    lag: bool = False,
    delay: bool = False,
    bounds: dict[str, tuple[float, float]] | None = None,
    window: int = 5,
    bootstrap: int = 100,
    seed: int = 0,
    names: list[str] | None = None,
    prepared: Prepared | None = None,
) -> Identification:
    """Fit the hull's linear and quadratic damping on ``axes`` (0..5 = u v w p q r) and what
    else is asked (module doc) from one or several recordings' commands and measured motion.
    Returns ``{name: (value, standard error)}``: damping in Fossen's sign convention
    (``X_u = -D``), scales as ``thrust_forward_scale``, ``thrust_reverse_scale``,
    ``advance_scale``, ``buoyancy_offset`` in N, ``time_constant`` and ``command_delay`` in s.
    ``bounds`` replaces entries of ``BOUNDS``; ``window`` is the number of sample intervals
    integrated into one equation; ``bootstrap`` the number of resamples (0: formal errors
    only). Recordings that carry their motor directions (``BagContents.reversed_motors``) are
    fitted on the description with those motors reversed. ``prepared`` (``prepare``) stands
    for the recordings when it is given (``bags`` is then not read)."""
    if prepared is None:
        bags = [bags] if isinstance(bags, BagContents) else list(bags)
        prepared = prepare(system, bags, axes, window, names)
    elif prepared.axes != tuple(int(a) for a in axes) or prepared.window != window:
        raise ValueError("identify: prepared for other axes or another window")
    bounds = {**BOUNDS, **(bounds or {})}
    axes, s, recordings = prepared.axes, prepared.setup, prepared.recordings
    fitted = (THRUST_NAMES if thrust else ()) + ((BUOYANCY,) if buoyancy else ())
    names_out = [f"{FORCES[i]}_{a}" for i in axes for a in (AXES[i], AXES[i] * 2)] + list(fitted)
    lower = np.array([0.0] * (2 * len(axes)) + [bounds[n][0] for n in fitted])
    upper = np.array([np.inf] * (2 * len(axes)) + [bounds[n][1] for n in fitted])
    lags, delays = _grid(LAG, lag, bounds), _grid(DELAY, delay, bounds)
    table: dict[tuple[float, float], list[_Rows]] = {}

    def rows_at(point: tuple[float, float]) -> list[_Rows]:
        if point not in table:
            table[point] = [_rows(s, r, axes, fitted, *point, window) for r in recordings]
        return table[point]

    w = _weights(rows_at((0.0, 0.0)), lower, upper)  # one weighting: the profile compares like with like
    profile: dict[tuple[float, float], float] = {}

    def cost(point: tuple[float, float]) -> float:
        if point not in profile:
            profile[point] = _solve(rows_at(point), w, lower, upper)[1]
        return profile[point]

    best = _search(cost, lags, delays)
    rows = table[best]
    w = _weights(rows, lower, upper)
    x, rss, Aw, _ = _solve(rows, w, lower, upper)
    m, p = Aw.shape
    formal = np.sqrt(np.clip(np.diag(rss / max(1, m - p) * np.linalg.pinv(Aw.T @ Aw)), 0.0, None))
    units, how = _units(rows)
    near = [
        (a, d)
        for a in lags[np.abs(lags - best[0]) <= GRID_STEP + 1e-9]
        for d in delays[np.abs(delays - best[1]) <= GRID_STEP + 1e-9]
    ]
    samples, distinct = _bootstrap(rows_at, near, units, bootstrap, seed, w, lower, upper)
    all_names = [*names_out, LAG, DELAY]
    values = np.r_[x, best]
    spread = _spread(samples, distinct, len(values))
    formal_all = np.r_[formal, [GRID_STEP / np.sqrt(12.0)] * 2]  # the grid's resolution
    out = Identification()
    out.formal, out.spread, out.warnings, out.refused = {}, {}, [], {}
    out.bootstrap = f"{len(samples)} resamples {how}" if samples else "none"
    if samples and distinct < MIN_DISTINCT:
        out.bootstrap += f" (only {distinct} distinct: its errors are not estimated)"
    out.profile = profile
    asked = set(names_out) | ({LAG} if lag else set()) | ({DELAY} if delay else set())
    for k, name in enumerate(all_names):
        if name not in asked:
            continue
        sign = -1.0 if k < 2 * len(axes) else 1.0
        known = [e for e in (formal_all[k], spread[k]) if np.isfinite(e)]
        se = max(known) if known else np.nan
        out[name] = (sign * float(values[k]) + 0.0, float(se) if se > 0.0 else np.nan)  # + 0.0: no -0
        out.formal[name] = float(formal_all[k]) if formal_all[k] > 0.0 else np.nan
        out.spread[name] = float(spread[k])
    fisher = _fisher(Aw, names_out)
    out.condition = fisher[0]
    out.warnings, out.refused = _warnings(
        out, all_names, asked, values, samples, fisher, bounds, lower, upper, lags, delays
    )
    return out


def _spread(samples: list[np.ndarray], distinct: int, size: int) -> np.ndarray:
    """The bootstrap's standard deviation of each estimate; NaN (not estimated) with fewer than
    ``MIN_DISTINCT`` distinct resamples, or for an estimate that took fewer than three values
    over the resamples (a bound or a grid point every time: a spread of 0 says nothing about
    its error)."""
    if len(samples) < 2 or distinct < MIN_DISTINCT:
        return np.full(size, np.nan)
    S = np.asarray(samples)
    out = np.std(S, axis=0, ddof=1)
    for k in range(size):
        if len(np.unique(S[:, k])) < 3:
            out[k] = np.nan
    return out


def _fisher(Aw: np.ndarray, names: list[str]) -> tuple[float, np.ndarray, list[str]]:
    """The weighted fit's Fisher information ``AwᵀAw`` (the Jacobian of the linear residual is
    ``Aw``), equilibrated to unit diagonal: its condition number, and the correlation of the
    estimates it implies (its inverse, normalised), over the columns the data excite."""
    F = Aw.T @ Aw
    d = np.sqrt(np.diag(F))
    keep = np.flatnonzero(d > 0.0)
    E = F[np.ix_(keep, keep)] / np.outer(d[keep], d[keep])
    condition = float(np.linalg.cond(E)) if len(keep) else np.inf
    C = np.linalg.pinv(E)
    c = np.sqrt(np.clip(np.diag(C), 1e-300, None))
    return condition, C / np.outer(c, c), [names[k] for k in keep]


def _bootstrap(rows_at, near, units, n: int, seed: int, w, lower, upper) -> tuple[list[np.ndarray], int]:
    """``n`` resamples of the recordings' independent units (drawn with replacement), each
    fitted again at every grid point ``near`` the best and kept at its least cost: the spread
    of these fits (parameters, lag, delay) is the bootstrap error. Also returns how many of
    the resamples differ (as multisets: three recordings allow only ten)."""
    rng = np.random.default_rng(seed)
    samples = []
    distinct = set()
    for _ in range(n if len(units) > 1 else 0):
        pick = rng.integers(0, len(units), len(units))
        distinct.add(tuple(sorted(pick.tolist())))
        fits = []
        for point in near:
            xb, rss_b, _, _ = _solve([_unit(rows_at(point), units[i]) for i in pick], w, lower, upper)
            fits.append((rss_b, np.r_[xb, point]))
        samples.append(min(fits, key=lambda f: f[0])[1])
    return samples, len(distinct)


def _search(cost, lags: np.ndarray, delays: np.ndarray) -> tuple[float, float]:
    """The grid point of least cost: a coordinate search (lag, then delay), then steps to the
    best of the eight neighbours until none is better (a lag and a delay trade against each
    other along a diagonal ridge that coordinate steps alone stop on). The profile is smooth,
    and the full grid would cost its square."""
    best = (float(lags[0]), float(delays[0]))
    for _ in range(4):
        start = best
        best = min(((float(a), best[1]) for a in lags), key=cost)
        best = min(((best[0], float(d)) for d in delays), key=cost)
        if best == start:
            break
    while True:
        i, j = int(np.argmin(np.abs(lags - best[0]))), int(np.argmin(np.abs(delays - best[1])))
        around = [
            (float(lags[a]), float(delays[d]))
            for a in range(max(0, i - 1), min(len(lags), i + 2))
            for d in range(max(0, j - 1), min(len(delays), j + 2))
        ]
        step = min(around, key=cost)
        if cost(step) >= cost(best):
            return best
        best = step


def _units(rows: list[_Rows]) -> tuple[list[tuple[int, tuple[int, int] | None]], str]:
    """What the bootstrap resamples: whole recordings when there are three or more, else
    ``BLOCKS`` blocks of consecutive windows; and how to say so."""
    if len(rows) >= 3:
        return [(k, None) for k in range(len(rows))], f"over the {len(rows)} recordings"
    units: list[tuple[int, tuple[int, int] | None]] = []
    for k, r in enumerate(rows):
        n_win = int(r.window.max()) + 1
        size = max(1, int(np.ceil(n_win * len(rows) / BLOCKS)))
        units += [(k, (a, a + size)) for a in range(0, n_win, size)]
    return units, f"over {len(units)} blocks of consecutive windows"


def _unit(rows: list[_Rows], unit: tuple[int, tuple[int, int] | None]) -> _Rows:
    k, span = unit
    r = rows[k]
    if span is None:
        return r
    keep = (r.window >= span[0]) & (r.window < span[1])
    return _Rows(r.A[keep], r.b[keep], r.dof[keep], r.window[keep])


def _warnings(
    out, all_names, asked, values, samples, fisher, bounds, lower, upper, lags, delays
) -> tuple[list[str], dict[str, str]]:
    """What the numbers do not say by themselves (estimates that cannot be told apart, ends
    on a bound or a grid, formal errors that the bootstrap shows to be too small), and the
    estimates refused as results (``{name: why}``; ``apply_identified`` keeps the described
    values of those): any estimate set by a bound or a grid end; a thrust scale or buoyancy
    offset correlated beyond ``COLLINEAR`` with another estimate in the Fisher information,
    or with a standard error beyond its ``RESOLUTION``; and all three thrust scales when one
    of them is refused (they are one thrust model: a forward scale on its bound beside a
    fitted advance scale is not a result)."""
    notes: list[str] = []
    refused: dict[str, str] = {}
    n_lin = len(lower)
    condition, fisher_corr, fisher_names = fisher
    spread_known = any(np.isfinite(v) for v in out.spread.values())
    if len(samples) > 2 and spread_known:
        S = np.asarray(samples)
        keep = [k for k in range(S.shape[1]) if all_names[k] in asked and np.std(S[:, k]) > 0]
        corr = np.corrcoef(S[:, keep].T) if len(keep) > 1 else np.eye(len(keep))
        names = [all_names[k] for k in keep]
        source = "bootstrap"
    else:
        corr, names, source = fisher_corr, fisher_names, "Fisher information"
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            weak = [n for n in (names[a], names[b]) if abs(out[n][0]) < 3.0 * _se(out[n][1])]
            if abs(corr[a, b]) > COLLINEAR and weak:
                notes.append(
                    f"{names[a]} and {names[b]} cannot both be identified from these data ({source} "
                    f"correlation of their estimates {corr[a, b]:+.2f}; {', '.join(weak)} within 3 standard "
                    "errors of 0): only a combination of them is; fit one (--axes) or record more varied "
                    "motion"
                )
    for a, name in enumerate(fisher_names):
        if name not in RESOLUTION and name != BUOYANCY:
            continue
        partners = [
            (other, fisher_corr[a, b]) for b, other in enumerate(fisher_names)
            if b != a and abs(fisher_corr[a, b]) > COLLINEAR
        ]  # fmt: skip
        if partners:
            other, r = max(partners, key=lambda pr: abs(pr[1]))
            refused[name] = f"correlated {r:+.2f} with {other}"
            notes.append(
                f"{name} cannot be told apart from {other} in these data (correlation {r:+.2f} in the "
                f"Fisher information, condition number {condition:.3g}): not identified, the described "
                "value is kept"
            )
    for k in range(n_lin):
        name = all_names[k]
        for bound, label in ((lower[k], "lower"), (upper[k], "upper")):
            if name in out and np.isfinite(bound) and abs(values[k] - bound) <= 1e-6 * max(1.0, abs(bound)):
                refused[name] = f"on its {label} bound ({bound:g})"
                notes.append(
                    f"{name} ended on its {label} bound ({bound:g}): the data push it beyond, so it is set "
                    "by the bound, not identified; the described value is kept"
                )
    for name, grid in ((LAG, lags), (DELAY, delays)):
        if name not in out or len(grid) < 2:
            continue
        for end, label in ((grid[0], "bottom"), (grid[-1], "top")):
            if abs(out[name][0] - end) <= 1e-9:
                refused[name] = f"at the {label} of its grid ({end:g} s)"
                hint = "widen its bound" if label == "top" else "the data show none, or a bound excludes it"
                notes.append(
                    f"{name} ended at the {label} of its grid ({end:g} s): set by the grid, not identified "
                    f"({hint}); the described value is kept"
                )
    paired = {n for note in notes for n in all_names if note.startswith(n + " and") or f" and {n} " in note}
    for name, (value, se) in out.items():
        if name in paired or name in (LAG, DELAY) or value == 0.0:
            continue
        if not np.isfinite(se):
            notes.append(f"{name} = {value:.4g}: its standard error is not estimated (no formal error and "
                         "no bootstrap spread)")  # fmt: skip
            continue
        # damping: an error as large as the value; the others have a scale of their own (a
        # buoyancy offset of 0.05 +- 0.1 N is a sharp estimate of about nothing)
        if se > RESOLUTION.get(name, abs(value)):
            what = f"more than {RESOLUTION[name]:g}" if name in RESOLUTION else "larger than the value"
            notes.append(f"{name} = {value:.4g} +- {se:.3g} is not identified from these data (standard "
                         f"error {what})")  # fmt: skip
            if name in RESOLUTION:
                refused.setdefault(name, f"standard error {se:.3g}")
    thrust_refused = [n for n in THRUST_NAMES if n in refused]
    if thrust_refused:
        why = "; ".join(f"{n} {refused[n]}" for n in thrust_refused)
        for n in THRUST_NAMES:
            refused.setdefault(n, f"one thrust model with {thrust_refused[0]}")
        notes.append(
            f"the thrust scales are not a result ({why}): the three scales make one thrust model, so "
            "none is used and the described thrust is kept"
        )
    big = [n for n in out.formal if out.formal[n] > 0 and out.spread[n] > 3.0 * out.formal[n]]
    if big:
        notes.append(
            "the formal standard errors are more than 3x too small for "
            + ", ".join(big)
            + " (the bootstrap's are reported): the residuals are correlated, or the runs differ"
        )
    return notes, refused


def _se(se: float) -> float:
    return se if np.isfinite(se) else 0.0
