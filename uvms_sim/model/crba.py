"""Composite-rigid-body algorithm: the joint-space inertia matrix including added mass."""

from __future__ import annotations

from ..model.kinematics import check_finite
from ..spatial import Array
from .kinematics import placements
from .model import Data, Model


def crba(model: Model, data: Data, q: Array) -> Array:
    """Joint-space inertia ``M(q)`` built from the hydrodynamic inertias ``I^H = I + I^A``
    (McMillan et al. 1996 eq. 3): composite inertias ``I^c_λ += X_iᵀ I^c_i X_i`` accumulated inward as
    McMillan et al. 1996 eq. 1 accumulates forces, then ``M_ij = S_iᵀ (X_{i..j})ᵀ I^c_i S_j`` along each
    branch (Featherstone's CRBA). Symmetric positive definite for any q.
    """
    q = check_finite("q", q, model.nq)
    placements(model, data, q)
    data.Ic[:] = model.I_H
    data.M[:] = 0.0
    for i in range(model.nbodies - 1, -1, -1):
        joint = model.joints[i]
        lam = model.parents[i]
        if lam >= 0:
            data.Ic[lam] += data.X[i].T @ data.Ic[i] @ data.X[i]
        if joint.nv == 0:
            continue
        vi = model.v_slice(i)
        F = data.Ic[i] @ joint.S
        data.M[vi, vi] = joint.S.T @ F
        j = i
        while model.parents[j] >= 0:
            F = data.X[j].T @ F
            j = model.parents[j]
            if model.joints[j].nv:
                vj = model.v_slice(j)
                data.M[vi, vj] = F.T @ model.joints[j].S
                data.M[vj, vi] = data.M[vi, vj].T
    return data.M.copy()
