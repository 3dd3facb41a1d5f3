"""Articulated-body forward dynamics with hydrodynamics (McMillan et al. 1996)."""

from __future__ import annotations

import numpy as np

from ..hydro.environment import Environment
from ..model.kinematics import check_finite
from ..model.model import Data, Model
from ..spatial import Array
from .kinematics import ExternalWrench, forward_kinematics


def aba(
    model: Model,
    data: Data,
    q: Array,
    v: Array,
    tau: Array,
    env: Environment | None = None,
    f_ext: ExternalWrench = None,
    t: float = 0.0,
) -> Array:
    """Joint accelerations ``q̈`` (nv) for generalized forces ``tau`` at state ``(q, v)``.

    The three O(N) recursions of McMillan et al. 1996 (appendix A.3) over a tree numbered parent-first:

    1. forward kinematics: ``v_i``, ``c_i`` and the hydrodynamic bias ``p_i = -β^H_i``
       (eqs. 4-10) with the velocity relative to the fluid (eq. 9);
    2. backward dynamics: articulated inertias starting from the *hydrodynamic* inertia
       ``I^H_i = I_i + I^A_i`` (eq. 3) - the added mass is part of the inertia the recursion
       inverts, never a force built from a previous acceleration -
       ``U = I^A S, D = Sᵀ U, u = τ - Sᵀ p^A``,
       ``I^a = I^A - U D⁻¹ Uᵀ, p^a = p^A + I^a c + U D⁻¹ u`` accumulated into the parent with
       ``Xᵀ (.) X`` and ``Xᵀ (.)`` (eqs. 1, A10);
    3. forward accelerations: ``a' = X a_λ + c``, ``q̈ = D⁻¹ (u - Uᵀ a')``, ``a = a' + S q̈``.

    The world (parent -1) does not accelerate; gravity enters as body forces in ``p_i``. A
    floating base is a free joint on body 0 (S = 1), so the base needs no special case.
    """
    q = check_finite("q", q, model.nq)
    v = check_finite("v", v, model.nv)
    tau = check_finite("tau", tau, model.nv)
    forward_kinematics(model, data, q, v, env, f_ext, t)
    IA, pA = data.IA, data.pA
    IA[:] = model.I_H
    pA[:] = data.bias
    for i in range(model.nbodies - 1, -1, -1):
        joint = model.joints[i]
        lam = model.parents[i]
        if joint.nv:
            U, Dinv, u = data.U[i], data.Dinv[i], data.u[i]  # preallocated in Data, filled in place
            np.matmul(IA[i], joint.S, out=U)
            Dinv[:] = np.linalg.inv(joint.S.T @ U)
            u[:] = tau[model.idx_v[i] : model.idx_v[i] + joint.nv] - joint.S.T @ pA[i]
        if lam < 0:
            continue
        if joint.nv:
            UD = U @ Dinv
            Ia = IA[i] - UD @ U.T
            pa = pA[i] + Ia @ data.c[i] + UD @ u
        else:
            Ia = IA[i]
            pa = pA[i] + Ia @ data.c[i]
        X = data.X[i]
        IA[lam] += X.T @ Ia @ X
        pA[lam] += X.T @ pa
    for i, joint in enumerate(model.joints):
        lam = model.parents[i]
        a = data.c[i] if lam < 0 else data.X[i] @ data.a[lam] + data.c[i]
        if joint.nv:
            ddq = data.Dinv[i] @ (data.u[i] - data.U[i].T @ a)
            data.ddq[model.idx_v[i] : model.idx_v[i] + joint.nv] = ddq
            a = a + joint.S @ ddq
        data.a[i] = a
    return data.ddq.copy()
