"""Recursive Newton-Euler inverse dynamics with joint reaction wrenches."""

from __future__ import annotations

import numpy as np

from ..hydro.environment import Environment
from ..model.kinematics import check_finite
from ..model.model import Data, Model
from ..spatial import Array
from .kinematics import ExternalWrench, forward_kinematics


def rnea(
    model: Model,
    data: Data,
    q: Array,
    v: Array,
    a: Array,
    env: Environment | None = None,
    f_ext: ExternalWrench = None,
    t: float = 0.0,
) -> Array:
    """Generalized forces ``tau`` that produce accelerations ``a`` at state ``(q, v)``.

    Outward pass: ``a_i = X_i a_λ + S_i q̈_i + c_i`` (McMillan et al. 1996 eq. A2). Inward pass: the force
    from the parent ``f_i = I^H_i a_i + p_i + f_i^+`` (McMillan et al. 1996 eq. 2 with the hydrodynamic
    inertia and bias force) accumulated into the parent by ``f_λ += X_iᵀ f_i`` (McMillan et al. 1996
    eqs. 1/A8), and ``τ_i = S_iᵀ f_i``.

    ``data.f[i]`` is then the reaction wrench ``[force; moment]`` that joint i transmits from
    the parent to body i, about body i's origin in its coordinates: the per-joint loads of León-González
    et al.'s (2024) "refined approach". ``f_ext`` are extra wrenches on the bodies (n x 6, body axes).
    """
    q = check_finite("q", q, model.nq)
    v = check_finite("v", v, model.nv)
    a = check_finite("a", a, model.nv)
    forward_kinematics(model, data, q, v, env, f_ext, t)
    for i, joint in enumerate(model.joints):
        lam = model.parents[i]
        aJ = joint.S @ a[model.idx_v[i] : model.idx_v[i] + joint.nv] + data.c[i]
        data.a[i] = aJ if lam < 0 else data.X[i] @ data.a[lam] + aJ
        data.f[i] = model.I_H[i] @ data.a[i] + data.bias[i]
    for i in range(model.nbodies - 1, -1, -1):
        joint = model.joints[i]
        data.tau[model.idx_v[i] : model.idx_v[i] + joint.nv] = joint.S.T @ data.f[i]
        lam = model.parents[i]
        if lam >= 0:
            data.f[lam] += data.X[i].T @ data.f[i]
    return data.tau.copy()


def nonlinear_effects(
    model: Model,
    data: Data,
    q: Array,
    v: Array,
    env: Environment | None = None,
    f_ext: ExternalWrench = None,
    t: float = 0.0,
) -> Array:
    """``h(q, v) = rnea(q, v, 0)``: Coriolis, damping, gravity, buoyancy and fluid terms."""
    return rnea(model, data, q, v, np.zeros(model.nv), env, f_ext, t)
