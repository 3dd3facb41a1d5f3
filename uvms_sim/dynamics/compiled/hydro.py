"""The hydrodynamic bias of a body (``hydro.forces.body_bias``; McMillan et al. 1996 eqs. 4-10):
Coriolis terms with the added mass, damping at the damping centre, gravity and buoyancy of the
wet part of the hull at the free surface (``hydro.hull``), the per-link cylinder drag
(``hydro.drag``), and the water's motion and surface in linear waves (``hydro.waves``,
``dynamics.kinematics.wave_water``)."""

from __future__ import annotations

import math

from ..flat import (
    COB,
    COM,
    DAX,
    DCEN,
    DK,
    DL,
    DQ,
    DS,
    DST,
    HAS_DRAG,
    HAS_MA,
    HCEN,
    HCOL,
    HRAD,
    HULL0,
    HVOL,
    IRB,
    MA,
    MASS,
    NHULL,
    RV,
    S_AC,
    S_GB,
    S_H,
    S_HV,
    S_VC,
    WAMP,
    WBIAS,
    WCOS,
    WDEPTH,
    WK,
    WOMEGA,
    WPHASE,
    WPW,
    WRW,
    WSIN,
    WSLOPE,
    WSUM,
    WV,
    WVR,
)
from .buffers import kernel
from .spatial import _force_cross_into


@kernel
def _wet_part(BF, BI, WB, i, n0, n1, zeta, rv, b0, b1, b2):
    """(ρV, centre of buoyancy, wet share) of body i below the surface plane ``n0 x + n1 y + z =
    zeta`` (NED; a flat surface: n0 = n1 = 0, zeta its depth) (kinematics.wet_part,
    hydro.hull.submerged): the full values when the hull's bounding sphere is under it."""
    row = WB[i]
    h = BI[i, HULL0]
    nh = BI[i, NHULL]
    pz = n0 * row[WPW] + n1 * row[WPW + 1] + row[WPW + 2] - zeta
    if nh == 0:
        return 0.0, b0, b1, b2, (1.0 if pz > 0.0 else 0.0)
    # row z of R (body -> world) seen through the plane's normal (n0, n1, 1)
    r0 = row[WRW + 6] + n0 * row[WRW] + n1 * row[WRW + 3]
    r1 = row[WRW + 7] + n0 * row[WRW + 1] + n1 * row[WRW + 4]
    r2 = row[WRW + 8] + n0 * row[WRW + 2] + n1 * row[WRW + 5]
    dc = pz + r0 * BF[i, h + HCEN] + r1 * BF[i, h + HCEN + 1] + r2 * BF[i, h + HCEN + 2]
    reach = BF[i, h + HRAD] * math.sqrt(1.0 + n0 * n0 + n1 * n1)
    if dc >= reach:
        return rv, b0, b1, b2, 1.0
    vol = BF[i, h + HVOL]
    if dc <= -reach:
        return 0.0, b0, b1, b2, 0.0
    V = m0 = m1 = m2 = 0.0
    for k in range(nh):
        o = h + HCOL + 5 * k
        x, y, lo, hi = BF[i, o], BF[i, o + 1], BF[i, o + 2], BF[i, o + 3]
        a = pz + r0 * x + r1 * y
        if r2 == 0.0:
            if a <= 0.0:
                lo = hi
        elif r2 > 0.0:
            lo = max(lo, -a / r2)
        else:
            hi = min(hi, -a / r2)
        L = hi - lo
        if L <= 0.0:
            continue
        wl = BF[i, o + 4] * L
        V += wl
        m0 += wl * x
        m1 += wl * y
        m2 += wl * 0.5 * (lo + hi)
    if V <= 0.0:
        return 0.0, b0, b1, b2, 0.0
    return rv * V / vol, m0 / V, m1 / V, m2 / V, V / vol


@kernel
def _wave_surface(WT, x, y, t):
    """η and its slopes (∂η/∂x, ∂η/∂y) at (x, y, t) (hydro.waves.WaveField.surface_plane)."""
    eta = gx = gy = 0.0
    for j in range(WT.shape[0]):
        a, k, c, s = WT[j, WAMP], WT[j, WK], WT[j, WCOS], WT[j, WSIN]
        th = k * (x * c + y * s) - WT[j, WOMEGA] * t + WT[j, WPHASE]
        eta += a * math.cos(th)
        g = -a * k * math.sin(th)
        gx += g * c
        gy += g * s
    return eta, gx, gy


@kernel
def _wave_kinematics(WT, x, y, zeta, t):
    """Water velocity and acceleration (NED) at (x, y), zeta above the mean surface, at t
    (hydro.waves.WaveField.kinematics; components with e^(kζ) < e^-30 are left out)."""
    u0 = u1 = u2 = a0 = a1 = a2 = 0.0
    for j in range(WT.shape[0]):
        k, h = WT[j, WK], WT[j, WDEPTH]
        z = min(max(zeta, -h), 0.0)
        if k * z < -30.0:
            continue
        e = math.exp(k * z)
        C = Sz = e
        if h < math.inf:
            e2 = math.exp(-k * (z + 2.0 * h))
            f = 1.0 / (1.0 - math.exp(-2.0 * k * h))
            C, Sz = (e + e2) * f, (e - e2) * f
        w, c, s = WT[j, WOMEGA], WT[j, WCOS], WT[j, WSIN]
        th = k * (x * c + y * s) - w * t + WT[j, WPHASE]
        ct, st = math.cos(th), math.sin(th)
        aw = WT[j, WAMP] * w
        uh = aw * C * ct
        ah = aw * w * C * st
        u0 += uh * c
        u1 += uh * s
        u2 -= aw * Sz * st
        a0 += ah * c
        a1 += ah * s
        a2 += aw * w * Sz * ct
    return u0, u1, u2, a0, a1, a2


@kernel
def _wave_water(BF, BI, WB, i, zs, t, WT, rv, b0, b1, b2):
    """Body i in waves (kinematics.wave_water): (ρV, centre of buoyancy, wet share) below the
    plane tangent to the surface at its hull's centre, and the water's velocity and
    acceleration (NED) at the centroid of its wet part (horizontally: the hull's centre)."""
    row = WB[i]
    h = BI[i, HULL0]
    radius = 0.0
    cx, cy, cz = row[WPW], row[WPW + 1], row[WPW + 2]
    if BI[i, NHULL]:
        radius = BF[i, h + HRAD]
        for a in range(3):
            o = WRW + 3 * a
            d = row[o] * BF[i, h + HCEN] + row[o + 1] * BF[i, h + HCEN + 1] + row[o + 2] * BF[i, h + HCEN + 2]
            if a == 0:
                cx += d
            elif a == 1:
                cy += d
            else:
                cz += d
    wet = 1.0
    slope = WT[0, WSLOPE]
    if cz - zs - WT[0, WSUM] < radius * math.sqrt(1.0 + slope * slope):  # it may meet the surface
        eta, gx, gy = _wave_surface(WT, cx, cy, t)
        rv, b0, b1, b2, wet = _wet_part(BF, BI, WB, i, gx, gy, zs - eta + gx * cx + gy * cy, rv, b0, b1, b2)
    wz = row[WPW + 2] + row[WRW + 6] * b0 + row[WRW + 7] * b1 + row[WRW + 8] * b2
    u0, u1, u2, a0, a1, a2 = _wave_kinematics(WT, cx, cy, zs - wz, t)
    return rv, b0, b1, b2, wet, u0, u1, u2, a0, a1, a2


@kernel
def _body_bias(BF, BI, WB, S, i, fluid, WT):
    """Hydrodynamic bias p_i into WB[i, WBIAS:] and ν_r into WB[i, WVR:]
    (hydro.forces.body_bias); fluid = [current, its acceleration, gravity, (surface depth,
    1 if there is a free surface, time)] (world NED), WT the wave components. At the free
    surface the buoyancy is that of the wet part of the hull and the damping is scaled by the
    wet share (kinematics.wet_part); in waves the surface moves and the water's velocity and
    acceleration at the body add to the current's (_wave_water)."""
    row = WB[i]
    rv = BF[i, RV]
    b0, b1, b2 = BF[i, COB], BF[i, COB + 1], BF[i, COB + 2]
    wet = 1.0
    u0 = u1 = u2 = a0 = a1 = a2 = 0.0
    if fluid[3, 1] != 0.0:
        if WT.shape[0]:
            rv, b0, b1, b2, wet, u0, u1, u2, a0, a1, a2 = _wave_water(
                BF, BI, WB, i, fluid[3, 0], fluid[3, 2], WT, rv, b0, b1, b2
            )
        else:
            rv, b0, b1, b2, wet = _wet_part(BF, BI, WB, i, 0.0, 0.0, fluid[3, 0], rv, b0, b1, b2)
    c0, c1, c2 = fluid[0, 0] + u0, fluid[0, 1] + u1, fluid[0, 2] + u2
    f0, f1, f2 = fluid[1, 0] + a0, fluid[1, 1] + a1, fluid[1, 2] + a2
    for a in range(3):
        R0, R1, R2 = row[WRW + a], row[WRW + 3 + a], row[WRW + 6 + a]  # column a of R: (Rᵀx)_a
        S[S_GB + a] = R0 * fluid[2, 0] + R1 * fluid[2, 1] + R2 * fluid[2, 2]
        S[S_VC + a] = R0 * c0 + R1 * c1 + R2 * c2
        S[S_AC + a] = R0 * f0 + R1 * f1 + R2 * f2
    for a in range(6):
        row[WVR + a] = row[WV + a]
    for a in range(3):
        row[WVR + a] -= S[S_VC + a]
    # p = v x* (I_RB v)
    for a in range(6):
        s = 0.0
        for b in range(6):
            s += BF[i, IRB + 6 * a + b] * row[WV + b]
        S[S_H + a] = s
    _force_cross_into(row, WV, S, S_H, row, WBIAS, False)
    if BI[i, HAS_MA]:
        for a in range(6):
            s = 0.0
            for b in range(6):
                s += BF[i, MA + 6 * a + b] * row[WVR + b]
            S[S_HV + a] = s
        _force_cross_into(row, WVR, S, S_HV, row, WBIAS, True)
        w0, w1, w2 = row[WV + 3], row[WV + 4], row[WV + 5]
        vc0, vc1, vc2 = S[S_VC], S[S_VC + 1], S[S_VC + 2]
        n0 = S[S_AC] - (w1 * vc2 - w2 * vc1)
        n1 = S[S_AC + 1] - (w2 * vc0 - w0 * vc2)
        n2 = S[S_AC + 2] - (w0 * vc1 - w1 * vc0)
        for a in range(6):
            row[WBIAS + a] -= BF[i, MA + 6 * a] * n0 + BF[i, MA + 6 * a + 1] * n1 + BF[i, MA + 6 * a + 2] * n2
    # damping at the damping centre c: ν_c = [v_r + ω × c; ω] (hydro.forces.damping_wrench)
    d0, d1, d2 = BF[i, DCEN], BF[i, DCEN + 1], BF[i, DCEN + 2]
    w0, w1, w2 = row[WVR + 3], row[WVR + 4], row[WVR + 5]
    S[S_H] = row[WVR] + (w1 * d2 - w2 * d1)
    S[S_H + 1] = row[WVR + 1] + (w2 * d0 - w0 * d2)
    S[S_H + 2] = row[WVR + 2] + (w0 * d1 - w1 * d0)
    S[S_H + 3], S[S_H + 4], S[S_H + 5] = w0, w1, w2
    for a in range(6):
        s = 0.0
        for b in range(6):
            s += BF[i, DL + 6 * a + b] * S[S_H + b]
        va = S[S_H + a]
        S[S_HV + a] = wet * (s + BF[i, DQ + a] * abs(va) * va)
        row[WBIAS + a] += S[S_HV + a]
    f0, f1, f2 = S[S_HV], S[S_HV + 1], S[S_HV + 2]
    row[WBIAS + 3] += d1 * f2 - d2 * f1
    row[WBIAS + 4] += d2 * f0 - d0 * f2
    row[WBIAS + 5] += d0 * f1 - d1 * f0
    mass = BF[i, MASS]
    g0, g1, g2 = S[S_GB], S[S_GB + 1], S[S_GB + 2]
    fg0, fg1, fg2 = mass * g0, mass * g1, mass * g2
    fb0, fb1, fb2 = rv * (S[S_AC] - g0), rv * (S[S_AC + 1] - g1), rv * (S[S_AC + 2] - g2)
    c0, c1, c2 = BF[i, COM], BF[i, COM + 1], BF[i, COM + 2]
    row[WBIAS] -= fg0 + fb0
    row[WBIAS + 1] -= fg1 + fb1
    row[WBIAS + 2] -= fg2 + fb2
    row[WBIAS + 3] -= (c1 * fg2 - c2 * fg1) + (b1 * fb2 - b2 * fb1)
    row[WBIAS + 4] -= (c2 * fg0 - c0 * fg2) + (b2 * fb0 - b0 * fb2)
    row[WBIAS + 5] -= (c0 * fg1 - c1 * fg0) + (b0 * fb1 - b1 * fb0)
    if BI[i, HAS_DRAG] and wet > 0.0:
        _drag(BF, i, row, (BI[i, HULL0] - DS) // 2, wet)


@kernel
def _drag(BF, i, row, P, wet):
    """bias -= wet x cylinder drag wrench (hydro.drag.cylinder_drag_wrench, closed form along
    the link; P quadrature columns)."""
    e0, e1, e2 = BF[i, DAX], BF[i, DAX + 1], BF[i, DAX + 2]
    s0, s1, s2 = BF[i, DST], BF[i, DST + 1], BF[i, DST + 2]
    w0, w1, w2 = row[WVR + 3], row[WVR + 4], row[WVR + 5]
    a0 = row[WVR] + (w1 * s2 - w2 * s1)
    a1 = row[WVR + 1] + (w2 * s0 - w0 * s2)
    a2 = row[WVR + 2] + (w0 * s1 - w1 * s0)
    b0 = w1 * e2 - w2 * e1
    b1 = w2 * e0 - w0 * e2
    b2 = w0 * e1 - w1 * e0
    ae = a0 * e0 + a1 * e1 + a2 * e2
    be = b0 * e0 + b1 * e1 + b2 * e2
    A0, A1, A2 = a0 - ae * e0, a1 - ae * e1, a2 - ae * e2
    B0, B1, B2 = b0 - be * e0, b1 - be * e1, b2 - be * e2
    AA = A0 * A0 + A1 * A1 + A2 * A2
    AB = A0 * B0 + A1 * B1 + A2 * B2
    BB = B0 * B0 + B1 * B1 + B2 * B2
    c0 = c1 = c2 = 0.0
    k = -BF[i, DK] * wet
    for n in range(P):
        wn = BF[i, DS + P + n]
        if wn == 0.0:
            continue
        s = BF[i, DS + n]
        cn = k * wn * math.sqrt(max(AA + s * (2.0 * AB) + s * s * BB, 0.0))
        c0 += cn
        c1 += cn * s
        c2 += cn * s * s
    f0, f1, f2 = c0 * A0 + c1 * B0, c0 * A1 + c1 * B1, c0 * A2 + c1 * B2
    g0, g1, g2 = c1 * A0 + c2 * B0, c1 * A1 + c2 * B1, c1 * A2 + c2 * B2
    row[WBIAS] -= f0
    row[WBIAS + 1] -= f1
    row[WBIAS + 2] -= f2
    row[WBIAS + 3] -= (s1 * f2 - s2 * f1) + (e1 * g2 - e2 * g1)
    row[WBIAS + 4] -= (s2 * f0 - s0 * f2) + (e2 * g0 - e0 * g2)
    row[WBIAS + 5] -= (s0 * f1 - s1 * f0) + (e0 * g1 - e1 * g0)
