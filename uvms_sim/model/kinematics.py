"""Kinematics of a model at a configuration: each joint's transform and every body's world
pose (McMillan et al. 1996 eqs. A1, A4, A5), used by the description (placing connected
vehicles), the mass matrix and the dynamics' forward pass."""

from __future__ import annotations

import numpy as np

from ..spatial import Array, compose, motion_matrix
from .model import Data, Model


def check_finite(name: str, x: Array, size: int) -> Array:
    """Validate an input vector: right length, finite. Raises ValueError naming it."""
    arr = np.asarray(x, dtype=float)
    if arr.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = np.flatnonzero(~np.isfinite(arr)).tolist()
        raise ValueError(f"{name} has non-finite entries at indices {bad}")
    return arr


def placements(model: Model, data: Data, q: Array) -> None:
    """Joint transforms and world poses: fills data.E, r, X, R_world, p_world."""
    for i, joint in enumerate(model.joints):
        E_T, r_T = model.tree[i]
        E_J, r_J = joint.transform(q[model.idx_q[i] : model.idx_q[i] + joint.nq])
        E, r = compose(E_T, r_T, E_J, r_J)
        data.E[i] = E
        data.r[i] = r
        data.X[i] = motion_matrix(E, r)
        lam = model.parents[i]
        if lam < 0:
            data.R_world[i] = E.T
            data.p_world[i] = r
        else:
            data.R_world[i] = data.R_world[lam] @ E.T
            data.p_world[i] = data.p_world[lam] + data.R_world[lam] @ r
