"""Hydrodynamic bias force of one body (McMillan et al. 1996 eqs. 4-8) in Fossen's terms.

With ``ν`` the body spatial velocity, ``ν_r = ν - [R^T v_c; 0]`` the velocity relative to the
(irrotational) fluid (McMillan et al. 1996 eq. 9) and ``ν̇_c = [R^T a_f - ω × R^T v_c; 0]`` the rate of the
fluid velocity seen in body axes, the force a body's joint must supply is
``f = I_H a + p`` (McMillan et al. 1996 eq. 2, with ``p = -β^H``), where ``I_H = I_RB + M_A`` (eq. 3) and

    p = ν ×* I_RB ν                  rigid-body Coriolis/centripetal (β, eq. A7; Fossen C_RB)
      + ν_r ×* M_A ν_r - M_A ν̇_c     added-mass bias β^A(ω, v_r, a_f) (eq. 5; Fossen C_A, M_A ν̇_c)
      + (D_l + diag(d_q |ν_r|)) ν_r  damping f^D(ω, v_r) (eq. 6) at the damping centre c
                                     (ν_r there: v_r + ω × c), moved to the origin, times
                                     the wet share at the free surface
      - m R^T g        at the centre of gravity
      + ρ V R^T g      buoyancy f^B (eq. 7) at the centre of buoyancy
      - ρ V R^T a_f    fluid-acceleration (Froude-Krylov) force f^F (eq. 8), also at the CoB
      - f_drag(ν_r)    per-link strip-theory drag, if the link has one (``hydro.drag``)
      - f_ext.

For one free body this is term for term Fossen's
``M ν̇ + C_RB(ν)ν + C_A(ν_r)ν_r + D(ν_r)ν_r + g(η) = τ`` with ``M = M_RB + M_A``.
"""

from __future__ import annotations

import numpy as np

from ..spatial import Array, cross, force_cross
from .drag import CylinderDrag, cylinder_drag_wrench


def damping_wrench(D_lin: Array, d_quad: Array, vr: Array, center: Array | None = None) -> Array:
    """``(D_l + diag(d_q |ν_c|)) ν_c`` with ``ν_c = [v_r + ω × c; ω]`` the relative velocity
    of the damping centre c, as a wrench about the body origin (``[f; n + c × f]``)."""
    if center is None or not center.any():
        return D_lin @ vr + d_quad * np.abs(vr) * vr
    nu = vr.copy()
    nu[:3] += cross(vr[3:], center)
    f = D_lin @ nu + d_quad * np.abs(nu) * nu
    f[3:] += cross(center, f[:3])
    return f


def body_bias(
    I_RB: Array,
    M_A: Array,
    D_lin: Array,
    d_quad: Array,
    mass: float,
    com: Array,
    rho_volume: float,
    cob: Array,
    R: Array,
    v: Array,
    gravity: Array,
    current: Array,
    current_accel: Array,
    out_vrel: Array,
    out_wrench: Array,
    drag: CylinderDrag | None = None,
    rho: float = 0.0,
    wet: float = 1.0,
    damping_center: Array | None = None,
) -> Array:
    """Bias ``p`` of one body; writes ``ν_r`` into ``out_vrel`` and the wrench of gravity,
    buoyancy, fluid acceleration and per-link ``drag`` on the body into ``out_wrench``.
    ``wet`` (0-1) scales the damping and drag: the wetted share of a body at the free surface
    (``rho_volume`` and ``cob`` are then those of its wet part, ``hydro.hull.submerged``)."""
    g_b = R.T @ gravity
    vc_b = R.T @ current
    w = v[3:]
    vr = out_vrel
    vr[:] = v
    vr[:3] -= vc_b
    p = force_cross(v, I_RB @ v)
    if M_A.any():
        nuc_dot = np.zeros(6)
        nuc_dot[:3] = R.T @ current_accel - cross(w, vc_b)
        p += force_cross(vr, M_A @ vr) - M_A @ nuc_dot
    p += wet * damping_wrench(D_lin, d_quad, vr, damping_center)
    fg = mass * g_b
    fb = rho_volume * (R.T @ current_accel - g_b)
    ext = out_wrench
    ext[:3] = fg + fb
    ext[3:] = cross(com, fg) + cross(cob, fb)
    if drag is not None:
        ext += wet * cylinder_drag_wrench(drag, vr, rho)
    p -= ext
    return p
