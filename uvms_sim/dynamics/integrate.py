"""Time integration on the configuration manifold (R^n x SO(3) per quaternion joint).

Tangent (increment) vectors have nv entries per joint: an angle or a displacement for
revolute/prismatic joints, a rotation vector in child axes for spherical joints, and for the
free joint a displacement in the body axes *of the start configuration* followed by a rotation
vector in body axes.

- ``integrate(model, q, dq)``: ``q ⊕ dq``; quaternions are advanced by the exponential map
  ``quat ⊗ exp(dθ/2)`` (the Rodrigues update of Schøn et al. 2017 eqs. 95-97) and renormalized, which
  is the unit-norm constraint of Nielsen et al. 2016 eq. 39 imposed exactly.
- ``step_semi_implicit_euler``: ``v⁺ = v + h q̈(q, v)``, ``q⁺ = q ⊕ h v⁺``.
- ``step_rk4``: classical Runge-Kutta in the tangent space (Runge-Kutta-Munthe-Kaas): stage
  rates of the rotation vectors are mapped through the inverse right Jacobian of SO(3) so the
  scheme keeps fourth order on the group.

A non-finite state or acceleration raises ``NonFiniteStateError`` and leaves the caller's
state untouched (nothing is propagated).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from transforms3d.quaternions import axangle2quat, qmult, quat2mat

from ..hydro.environment import Environment
from ..model.model import Data, Model
from ..spatial import Array, skew
from .aba import aba
from .kinematics import ExternalWrench


class NonFiniteStateError(FloatingPointError):
    """The state or its derivative stopped being finite; the message says where."""


def _quat_exp(theta: Array) -> Array:
    angle = float(np.linalg.norm(theta))
    if not np.isfinite(angle):
        return np.full(4, np.nan)  # reported by the caller's finiteness check
    if angle < 1e-300:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return axangle2quat(theta / angle, angle, is_normalized=True)


def integrate(model: Model, q: Array, dq: Array) -> Array:
    """``q ⊕ dq`` (see module doc)."""
    out = np.array(q, dtype=float)
    for i, joint in enumerate(model.joints):
        if joint.nv == 0:
            continue
        iq, iv = model.idx_q[i], model.idx_v[i]
        d = dq[iv : iv + joint.nv]
        if joint.type == "free":
            quat = out[iq + 3 : iq + 7]
            out[iq : iq + 3] += quat2mat(quat) @ d[:3]
            qn = qmult(quat, _quat_exp(d[3:]))
            out[iq + 3 : iq + 7] = qn / np.linalg.norm(qn)
        elif joint.type == "spherical":
            qn = qmult(out[iq : iq + 4], _quat_exp(d))
            out[iq : iq + 4] = qn / np.linalg.norm(qn)
        else:
            out[iq] += d[0]
    return out


def normalize(model: Model, q: Array) -> Array:
    """Project every quaternion of q back to unit norm (Nielsen et al. 2016 eq. 39)."""
    out = np.array(q, dtype=float)
    for i, joint in enumerate(model.joints):
        if joint.has_quaternion:
            s = model.idx_q[i] + (3 if joint.type == "free" else 0)
            out[s : s + 4] /= np.linalg.norm(out[s : s + 4])
    return out


def dexp_inv(theta: Array, w: Array) -> Array:
    """Inverse right Jacobian of SO(3): the rate of the rotation vector θ with
    ``R = R0 exp(θ)`` when the body angular velocity is ``w``."""
    angle = float(np.linalg.norm(theta))
    K = skew(theta)
    if angle < 1e-4:
        coef = 1.0 / 12.0 + angle**2 / 720.0
    else:
        coef = 1.0 / angle**2 - (1.0 + np.cos(angle)) / (2.0 * angle * np.sin(angle))
    return w + 0.5 * (K @ w) + coef * (K @ (K @ w))


def _tangent_rate(model: Model, theta: Array, v: Array) -> Array:
    """Rate of the tangent coordinates θ (about the stage-0 point) for velocity v."""
    out = np.array(v, dtype=float)
    for i, joint in enumerate(model.joints):
        iv = model.idx_v[i]
        if joint.type == "free":
            rot = theta[iv + 3 : iv + 6]
            angle = float(np.linalg.norm(rot))
            R = np.eye(3) if angle == 0 else quat2mat(_quat_exp(rot))
            out[iv : iv + 3] = R @ v[iv : iv + 3]
            out[iv + 3 : iv + 6] = dexp_inv(rot, v[iv + 3 : iv + 6])
        elif joint.type == "spherical":
            out[iv : iv + 3] = dexp_inv(theta[iv : iv + 3], v[iv : iv + 3])
    return out


Accel = Callable[[Array, Array, float], Array]  # (q, v, t) -> q̈


def _check(model: Model, name: str, x: Array, t: float | None = None) -> None:
    if not np.all(np.isfinite(x)):
        bad = np.flatnonzero(~np.isfinite(x))
        where = []
        for k in bad[:6]:
            idx = model.idx_q if name == "q" else model.idx_v
            body = int(np.searchsorted(idx, k, side="right") - 1)
            while body > 0 and (model.joints[body].nq if name == "q" else model.joints[body].nv) == 0:
                body -= 1
            where.append(f"{name}[{k}] ({model.bodies[body].name})")
        at = "" if t is None else f" at t={t:.6g} s"
        raise NonFiniteStateError(f"non-finite {name}{at}: {', '.join(where)}; state not advanced")


def step_semi_implicit_euler(
    model: Model, q: Array, v: Array, h: float, accel: Accel, t: float = 0.0
) -> tuple[Array, Array]:
    """One symplectic (semi-implicit) Euler step of size h from time t."""
    a = accel(q, v, t)
    _check(model, "a", a, t)
    v1 = v + h * a
    q1 = integrate(model, q, h * v1)
    _check(model, "v", v1, t + h)
    _check(model, "q", q1, t + h)
    return q1, v1


def step_rk4(model: Model, q: Array, v: Array, h: float, accel: Accel, t: float = 0.0) -> tuple[Array, Array]:
    """One fourth-order Runge-Kutta-Munthe-Kaas step of size h from time t."""
    zero = np.zeros(model.nv)
    a1 = accel(q, v, t)
    _check(model, "a", a1, t)
    k1 = _tangent_rate(model, zero, v)
    th2 = 0.5 * h * k1
    v2 = v + 0.5 * h * a1
    a2 = accel(integrate(model, q, th2), v2, t + 0.5 * h)
    _check(model, "a", a2, t + 0.5 * h)
    k2 = _tangent_rate(model, th2, v2)
    th3 = 0.5 * h * k2
    v3 = v + 0.5 * h * a2
    a3 = accel(integrate(model, q, th3), v3, t + 0.5 * h)
    _check(model, "a", a3, t + 0.5 * h)
    k3 = _tangent_rate(model, th3, v3)
    th4 = h * k3
    v4 = v + h * a3
    a4 = accel(integrate(model, q, th4), v4, t + h)
    _check(model, "a", a4, t + h)
    k4 = _tangent_rate(model, th4, v4)
    v1 = v + (h / 6.0) * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
    q1 = integrate(model, q, (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4))
    _check(model, "v", v1, t + h)
    _check(model, "q", q1, t + h)
    return q1, v1


INTEGRATORS = {"rk4": step_rk4, "semi_implicit_euler": step_semi_implicit_euler}


def step(
    model: Model,
    data: Data,
    q: Array,
    v: Array,
    tau: Array,
    h: float,
    env: Environment | None = None,
    f_ext: ExternalWrench = None,
    method: str = "rk4",
    t: float = 0.0,
) -> tuple[Array, Array]:
    """Advance ``(q, v)`` from time ``t`` by ``h`` seconds under constant ``tau`` and ``f_ext``
    with ABA (a time-varying current is evaluated at each stage's time)."""
    try:
        stepper = INTEGRATORS[method]
    except KeyError:
        raise ValueError(f"integrator {method!r} is not one of {sorted(INTEGRATORS)}") from None
    return stepper(model, q, v, h, lambda qq, vv, tt: aba(model, data, qq, vv, tau, env, f_ext, tt), t)
