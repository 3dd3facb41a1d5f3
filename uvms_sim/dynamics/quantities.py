"""Energy and momentum of the system and of the fluid it carries (Kirchhoff)."""

from __future__ import annotations

import numpy as np

from ..model.kinematics import check_finite
from ..model.model import Data, Model
from ..spatial import Array, cross
from .kinematics import forward_kinematics


def kinetic_energy(model: Model, data: Data, q: Array, v: Array, include_added_mass: bool = True) -> float:
    """``T = ½ Σ ν_iᵀ I_i ν_i`` with ``I = I_H`` (body + entrained fluid) by default.

    With no current, the added-mass part is the kinetic energy of the fluid, so ``T`` is
    conserved without gravity, buoyancy and damping (Kirchhoff's equations)."""
    q = check_finite("q", q, model.nq)
    v = check_finite("v", v, model.nv)
    forward_kinematics(model, data, q, v)
    inertia = model.I_H if include_added_mass else model.I_RB
    return 0.5 * float(np.einsum("ni,nij,nj->", data.v, inertia, data.v))


def momentum_world(model: Model, data: Data, q: Array, v: Array, include_added_mass: bool = True) -> Array:
    """Total ``[linear; angular about the world origin]`` momentum in world axes.

    Each body's ``h_i = I_i ν_i`` (with added mass: the Kirchhoff impulse of body + fluid) is
    rotated to the world and its angular part shifted to the world origin."""
    q = check_finite("q", q, model.nq)
    v = check_finite("v", v, model.nv)
    forward_kinematics(model, data, q, v)
    inertia = model.I_H if include_added_mass else model.I_RB
    total = np.zeros(6)
    for i in range(model.nbodies):
        h = inertia[i] @ data.v[i]
        R, p = data.R_world[i], data.p_world[i]
        lin = R @ h[:3]
        total[:3] += lin
        total[3:] += R @ h[3:] + cross(p, lin)
    return total
