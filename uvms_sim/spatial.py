"""6-D spatial algebra in the Fossen/SNAME (and Pinocchio) ordering.

Motion vectors are ``[v; ω]`` (linear first, as the body velocity ``ν = [u v w p q r]``),
force vectors ``[f; n]``. McMillan et al. 1996 writes spatial vectors angular-first (eq. A4); the algebra
is the same with the 3x3 blocks swapped, so every formula cited from it holds here with that
permutation.

A coordinate transform from frame ``a`` to frame ``b`` is kept as the pair ``(E, r)``: ``E`` is
the rotation ``b_R_a`` (a-coordinates -> b-coordinates) and ``r`` the position of b's origin in
a-coordinates. Its motion matrix is McMillan et al. 1996 eq. A5 in this ordering::

    X = [[E, -E r~], [0, E]]

and ``X.T`` carries forces from b back to a (McMillan et al. 1996 eq. A8).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
Floats = Array | float  # a number, or an array of them (laws written elementwise take either)


def skew(v: Array) -> Array:
    """The 3x3 matrix ``v~`` with ``v~ @ c == cross(v, c)``."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def cross(a: Array, b: Array) -> Array:
    """3-D cross product of two 3-vectors (``np.cross`` costs ~20x more on such small inputs)."""
    a0, a1, a2 = a[0], a[1], a[2]
    b0, b1, b2 = b[0], b[1], b[2]
    return np.array((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0))


def crm(v: Array) -> Array:
    """Motion cross-product matrix ``v×`` (``crm(v) @ m == motion_cross(v, m)``)."""
    out = np.zeros((6, 6))
    w = skew(v[3:])
    out[:3, :3] = w
    out[:3, 3:] = skew(v[:3])
    out[3:, 3:] = w
    return out


def crf(v: Array) -> Array:
    """Force cross-product matrix ``v×* = -crm(v).T``."""
    return -crm(v).T


def motion_cross(v: Array, m: Array) -> Array:
    """``v × m`` for motion vectors: ``[ω×m_v + v×m_ω; ω×m_ω]``."""
    w = v[3:]
    out = np.empty(6)
    out[:3] = cross(w, m[:3]) + cross(v[:3], m[3:])
    out[3:] = cross(w, m[3:])
    return out


def force_cross(v: Array, f: Array) -> Array:
    """``v ×* f`` for a force vector: ``[ω×f; v×f + ω×n]`` (Fossen's C(ν)ν is ``force_cross(ν, Mν)``)."""
    w = v[3:]
    out = np.empty(6)
    out[:3] = cross(w, f[:3])
    out[3:] = cross(v[:3], f[:3]) + cross(w, f[3:])
    return out


def motion_matrix(E: Array, r: Array) -> Array:
    """The 6x6 motion transform ``X`` of ``(E, r)`` (McMillan et al. 1996 eq. A5, linear-first)."""
    X = np.zeros((6, 6))
    X[:3, :3] = E
    X[:3, 3:] = -E @ skew(r)
    X[3:, 3:] = E
    return X


def transform_motion(E: Array, r: Array, m: Array) -> Array:
    """``X @ m`` without forming X: ``[E(m_v - r×m_ω); E m_ω]``."""
    return np.concatenate((E @ (m[:3] - cross(r, m[3:])), E @ m[3:]))


def transform_force_back(E: Array, r: Array, f: Array) -> Array:
    """``X.T @ f`` (child -> parent force): ``[Eᵀf; Eᵀn + r×Eᵀf]`` (McMillan et al. 1996 eq. A8)."""
    fp = E.T @ f[:3]
    return np.concatenate((fp, E.T @ f[3:] + cross(r, fp)))


def compose(E_ab: Array, r_ab: Array, E_bc: Array, r_bc: Array) -> tuple[Array, Array]:
    """Transform a->c from a->b and b->c: ``X_ac = X_bc X_ab``."""
    return E_bc @ E_ab, r_ab + E_ab.T @ r_bc


def spatial_inertia(mass: float, com: Array, inertia_com: Array) -> Array:
    """Rigid-body spatial inertia about the body origin (Fossen's M_RB; McMillan et al. 1996 eq. A9).

    ``[[m 1, -m c~], [m c~, I_c - m c~ c~]]`` with ``c`` the centre of mass and ``I_c`` the
    3x3 inertia about it.
    """
    c = skew(np.asarray(com, dtype=float))
    out = np.zeros((6, 6))
    out[:3, :3] = mass * np.eye(3)
    out[:3, 3:] = -mass * c
    out[3:, :3] = mass * c
    out[3:, 3:] = np.asarray(inertia_com, dtype=float) - mass * c @ c
    return out


def shift_to_origin(M_center: Array, center: Array) -> Array:
    """A 6x6 inertia-like matrix given about ``center`` (body axes) re-expressed about the
    body origin: ``Xᵀ M X`` with X the motion transform origin -> centre."""
    X = motion_matrix(np.eye(3), np.asarray(center, dtype=float))
    return X.T @ M_center @ X
