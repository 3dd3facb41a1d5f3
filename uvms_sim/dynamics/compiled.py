"""Compiled (numba) kernels of the hydrodynamic articulated-body algorithm and the integrators.

The same algorithms as the reference modules, term for term, over the flat tables of
``dynamics.flat``:

- placements and velocities (McMillan et al. 1996 eqs. A1-A5, 9), the hydrodynamic bias of
  ``hydro.forces.body_bias`` (eqs. 4-10, with the per-link cylinder drag of ``hydro.drag``) and
  the thrust of ``actuators.bank.ThrusterBank.wrenches`` (Nielsen et al. 2018 eq. 12) at each stage's
  advance speed;
- the ABA of ``dynamics.aba`` (McMillan et al. 1996 appendix A.3) with the added mass inside the
  articulated inertia;
- the Runge-Kutta-Munthe-Kaas and semi-implicit Euler steps of ``dynamics.integrate``.

Formulation: spatial transforms are used through their structure, never as 6x6 matrices -
``X m = [E(m_v - r x m_ω); E m_ω]``, ``Xᵀ f = [Eᵀf; Eᵀn + r x Eᵀf]`` (McMillan et al. 1996 eqs. A5, A8),
and the articulated-inertia update ``Xᵀ I X = T(r)ᵀ diag(E,E)ᵀ I diag(E,E) T(r)`` with
``T(r) = [[1, -r~], [0, 1]]``: three 3x3 congruences and skew products instead of two 6x6
products. Revolute and prismatic joints (S one axis column) take rank-one updates. Every
quantity is a scalar read from a flat table (no array views, no allocation in the loops).
Quaternion formulas are written out because compiled code cannot call transforms3d; the tests
hold every result equal to the reference implementation (to 1e-10) on the shipped models.

Compiled once per machine into numba's cache (``__pycache__`` or ``NUMBA_CACHE_DIR``);
``make setup`` does it (``python -m uvms_sim.kernels``).
"""

from __future__ import annotations

import functools
import math
import os
from pathlib import Path

import numba
import numpy as np
from numba import carray, njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from .flat import (
    AXIS,
    COB,
    COM,
    DAX,
    DCEN,
    DK,
    DL,
    DQ,
    DS,
    DST,
    ET,
    FOLDED,
    FREE,
    H_BF,
    H_BI,
    H_CF,
    H_CI,
    H_IN,
    H_KF,
    H_KI,
    H_KN,
    H_NB,
    H_NBF,
    H_NC,
    H_NK,
    H_NQ,
    H_NT,
    H_NV,
    H_TF,
    H_TI,
    H_W,
    HAS_DRAG,
    HAS_MA,
    HCEN,
    HCOL,
    HRAD,
    HULL0,
    HVOL,
    IH,
    IHI,
    IQ,
    IRB,
    IV,
    JNV,
    JTYPE,
    MA,
    MASS,
    NBI,
    NCF,
    NHULL,
    NKF,
    NS,
    NTF,
    NW,
    PARENT,
    PRISMATIC,
    REVOLUTE,
    RIGID,
    RT,
    RV,
    S_AC,
    S_AP,
    S_CL,
    S_CLI,
    S_COL,
    S_EJ,
    S_F,
    S_GB,
    S_H,
    S_HV,
    S_IA,
    S_J,
    S_K,
    S_L,
    S_PA,
    S_Q,
    S_R,
    S_RHS,
    S_TMP,
    S_TT,
    S_UD,
    S_VC,
    S_VJ,
    SPHERICAL,
    TARM,
    TDIR,
    TMAX,
    TMIN,
    TNF,
    TNR,
    TNU,
    TPOS,
    WA,
    WBIAS,
    WC,
    WDI,
    WE,
    WIA,
    WIC,
    WPA,
    WPW,
    WR,
    WRW,
    WU,
    WUU,
    WV,
    WVR,
)

# The compiled code is cached next to this file; where that is not writable (an installed ROS
# package) and no NUMBA_CACHE_DIR is set, in the user's cache directory instead.
if not os.access(Path(__file__).parent, os.W_OK) and not os.environ.get("NUMBA_CACHE_DIR"):
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "uvms_sim"
    numba.config.CACHE_DIR = str(cache)  # type: ignore[attr-defined]

# Every kernel: cached, GIL released. Those called only from compiled code go without the
# wrappers that make a function callable from Python and from C (numba options its type stubs
# do not list): 3 s less to compile.
_INTERNAL = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}
kernel = njit(cache=True, nogil=True, error_model="numpy", **_INTERNAL)  # type: ignore[call-overload]
entry_kernel = njit(cache=True, nogil=True, error_model="numpy")  # the entry points from Python


# -- borrowed views -------------------------------------------------------------------------------
# Every view a kernel takes of an array that numpy owns (``WB[i]``, a workspace row) counts a
# reference on it, an atomic increment and decrement: they cost half of an RK4 step of a
# BlueROV2 (5.0 us instead of 2.5). The entry points therefore take borrowed views of their
# arguments (``carray`` over the same memory, without a reference count), valid for the call:
# the caller holds the arrays, and no kernel keeps a view after it returns.
@intrinsic
def _address(typingctx, addr):
    """The integer ``addr`` as a void pointer (for ``carray``)."""

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(types.intp), codegen


# inlined where it is called: numba would otherwise compile it once per literal shape (14 times)
@njit(inline="always", cache=True, **_INTERNAL)  # type: ignore[call-overload]
def _borrow(a, o, shape):
    """A borrowed view (see above) of the C-contiguous ``a`` from element o, of ``shape``."""
    return carray(_address(a.ctypes.data + o * a.itemsize), shape, a.dtype)


@kernel
def _unpack(FB, IB):
    """Borrowed views (BF, BI, TF, TI, CI, CF, KI, KF, KN, W, fluid) of the buffers of
    ``flat.pack`` (FB floats, IB ints), at the offsets its header records."""
    nb, nt, nc, nk = IB[H_NB], IB[H_NT], IB[H_NC], IB[H_NK]
    return (
        _borrow(FB, IB[H_BF], (nb, IB[H_NBF])),
        _borrow(IB, IB[H_BI], (nb, NBI)),
        _borrow(FB, IB[H_TF], (nt, NTF)),
        _borrow(IB, IB[H_TI], nt),
        _borrow(IB, IB[H_CI], (nc, 2)),
        _borrow(FB, IB[H_CF], (nc, NCF)),
        _borrow(IB, IB[H_KI], (nk, 2)),
        _borrow(FB, IB[H_KF], (nk, NKF)),
        _borrow(FB, IB[H_KN], nk),
        _borrow(FB, IB[H_W], IB[H_IN] - IB[H_W]),
        _borrow(FB, 0, (3, 4, 3)),
    )


@kernel
def _bare(a):
    """A borrowed view of all of ``a``."""
    return _borrow(a, 0, a.shape)


# -- rotations (row-major 3x3 at out[o:o+9]) -----------------------------------------------------
@kernel
def _quat2mat(w, x, y, z, out, o):
    """Rotation matrix of a (not necessarily unit) quaternion, as transforms3d.quat2mat."""
    n = w * w + x * x + y * y + z * z
    if n < 2.220446049250313e-16:
        for k in range(9):
            out[o + k] = 1.0 if k % 4 == 0 else 0.0
        return
    s = 2.0 / n
    X, Y, Z = x * s, y * s, z * s
    wX, wY, wZ = w * X, w * Y, w * Z
    xX, xY, xZ = x * X, x * Y, x * Z
    yY, yZ, zZ = y * Y, y * Z, z * Z
    out[o + 0] = 1.0 - (yY + zZ)
    out[o + 1] = xY - wZ
    out[o + 2] = xZ + wY
    out[o + 3] = xY + wZ
    out[o + 4] = 1.0 - (xX + zZ)
    out[o + 5] = yZ - wX
    out[o + 6] = xZ - wY
    out[o + 7] = yZ + wX
    out[o + 8] = 1.0 - (xX + yY)


@kernel
def _axangle_T(x, y, z, angle, out, o):
    """Transpose of the rotation by ``angle`` about the unit axis (transforms3d.axangle2mat)."""
    c, s = math.cos(angle), math.sin(angle)
    C = 1.0 - c
    xs, ys, zs = x * s, y * s, z * s
    xC, yC, zC = x * C, y * C, z * C
    xyC, yzC, zxC = x * yC, y * zC, z * xC
    out[o + 0] = x * xC + c
    out[o + 3] = xyC - zs
    out[o + 6] = zxC + ys
    out[o + 1] = xyC + zs
    out[o + 4] = y * yC + c
    out[o + 7] = yzC - xs
    out[o + 2] = zxC - ys
    out[o + 5] = yzC + xs
    out[o + 8] = z * zC + c


@kernel
def _quat_exp(t0, t1, t2):
    """``exp(θ/2)`` as a quaternion (transforms3d.axangle2quat of θ/|θ|, |θ|)."""
    angle = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    if angle < 1e-300:
        return 1.0, 0.0, 0.0, 0.0
    s = math.sin(0.5 * angle) / angle
    return math.cos(0.5 * angle), t0 * s, t1 * s, t2 * s


@kernel
def _qmult(w1, x1, y1, z1, w2, x2, y2, z2):
    return (
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 + y1 * w2 + z1 * x2 - x1 * z2,
        w1 * z2 + z1 * w2 + x1 * y2 - y1 * x2,
    )


@kernel
def _dexp_inv(t0, t1, t2, w0, w1, w2, out, o):
    """Inverse right Jacobian of SO(3) times w into out[o:o+3] (integrate.dexp_inv)."""
    angle = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    if angle < 1e-4:
        coef = 1.0 / 12.0 + angle * angle / 720.0
    else:
        coef = 1.0 / (angle * angle) - (1.0 + math.cos(angle)) / (2.0 * angle * math.sin(angle))
    k0 = t1 * w2 - t2 * w1
    k1 = t2 * w0 - t0 * w2
    k2 = t0 * w1 - t1 * w0
    out[o] = w0 + 0.5 * k0 + coef * (t1 * k2 - t2 * k1)
    out[o + 1] = w1 + 0.5 * k1 + coef * (t2 * k0 - t0 * k2)
    out[o + 2] = w2 + 0.5 * k2 + coef * (t0 * k1 - t1 * k0)


# -- spatial transforms of body i (E at WB[i, WE:], r at WB[i, WR:]) ----------------------------
@kernel
def _xmotion(WB, i, src, so, dst, do):
    """dst[do:do+6] = X_i src[so:so+6] = [E(m_v - r x m_ω); E m_ω] (src, dst 1-D rows)."""
    r0, r1, r2 = WB[i, WR], WB[i, WR + 1], WB[i, WR + 2]
    m3, m4, m5 = src[so + 3], src[so + 4], src[so + 5]
    d0 = src[so] - (r1 * m5 - r2 * m4)
    d1 = src[so + 1] - (r2 * m3 - r0 * m5)
    d2 = src[so + 2] - (r0 * m4 - r1 * m3)
    for a in range(3):
        e0, e1, e2 = WB[i, WE + 3 * a], WB[i, WE + 3 * a + 1], WB[i, WE + 3 * a + 2]
        dst[do + a] = e0 * d0 + e1 * d1 + e2 * d2
        dst[do + 3 + a] = e0 * m3 + e1 * m4 + e2 * m5


@kernel
def _outward(WB, i, lam, src, so, add, ao, dst, do):
    """dst[do:do+6] = X_i src[so:so+6] + add[ao:ao+6], or ``add`` alone at a root (lam < 0):
    the outward recursion of velocities and accelerations (McMillan et al. 1996 eqs. 9, A2)."""
    if lam >= 0:
        _xmotion(WB, i, src, so, dst, do)
        for a in range(6):
            dst[do + a] += add[ao + a]
    else:
        for a in range(6):
            dst[do + a] = add[ao + a]


@kernel
def _xforce_add(WB, i, src, so, dst, do):
    """dst[do:do+6] += X_iᵀ src[so:so+6] = [Eᵀf; Eᵀn + r x Eᵀf] (McMillan et al. 1996 eq. A8)."""
    f0, f1, f2 = src[so], src[so + 1], src[so + 2]
    n0, n1, n2 = src[so + 3], src[so + 4], src[so + 5]
    g0 = WB[i, WE] * f0 + WB[i, WE + 3] * f1 + WB[i, WE + 6] * f2
    g1 = WB[i, WE + 1] * f0 + WB[i, WE + 4] * f1 + WB[i, WE + 7] * f2
    g2 = WB[i, WE + 2] * f0 + WB[i, WE + 5] * f1 + WB[i, WE + 8] * f2
    r0, r1, r2 = WB[i, WR], WB[i, WR + 1], WB[i, WR + 2]
    dst[do] += g0
    dst[do + 1] += g1
    dst[do + 2] += g2
    dst[do + 3] += WB[i, WE] * n0 + WB[i, WE + 3] * n1 + WB[i, WE + 6] * n2 + r1 * g2 - r2 * g1
    dst[do + 4] += WB[i, WE + 1] * n0 + WB[i, WE + 4] * n1 + WB[i, WE + 7] * n2 + r2 * g0 - r0 * g2
    dst[do + 5] += WB[i, WE + 2] * n0 + WB[i, WE + 5] * n1 + WB[i, WE + 8] * n2 + r0 * g1 - r1 * g0


@kernel
def _add_congruence(WB, i, Ia, io, dst, do, S):
    """dst[do:do+36] += X_iᵀ Ia X_i for a symmetric 6x6 Ia at Ia[io:io+36] (row-major), with
    X = diag(E, E) T(r): J = diag(E,E)ᵀ Ia diag(E,E) by 3x3 congruences of the blocks
    A, B, C; then top-left A', top-right K = B' - A' r~, bottom-right C' + r~K + (r~B')ᵀ."""
    # 3x3 blocks of J at S[S_J]: row-major 6x6
    for blk in range(3):
        ro = 0 if blk < 2 else 3
        co = 0 if blk == 0 else 3
        for a in range(3):
            base = io + 6 * (ro + a) + co
            x0, x1, x2 = Ia[base], Ia[base + 1], Ia[base + 2]
            for b in range(3):
                S[S_TT + 3 * a + b] = x0 * WB[i, WE + b] + x1 * WB[i, WE + 3 + b] + x2 * WB[i, WE + 6 + b]
        for a in range(3):
            for b in range(3):
                S[S_J + 6 * (ro + a) + co + b] = (
                    WB[i, WE + a] * S[S_TT + b]
                    + WB[i, WE + 3 + a] * S[S_TT + 3 + b]
                    + WB[i, WE + 6 + a] * S[S_TT + 6 + b]
                )
    r0, r1, r2 = WB[i, WR], WB[i, WR + 1], WB[i, WR + 2]
    for a in range(3):
        A0, A1, A2 = S[S_J + 6 * a], S[S_J + 6 * a + 1], S[S_J + 6 * a + 2]
        S[S_K + 3 * a] = S[S_J + 6 * a + 3] - (A1 * r2 - A2 * r1)
        S[S_K + 3 * a + 1] = S[S_J + 6 * a + 4] - (A2 * r0 - A0 * r2)
        S[S_K + 3 * a + 2] = S[S_J + 6 * a + 5] - (A0 * r1 - A1 * r0)
    for b in range(3):
        k0, k1, k2 = S[S_K + b], S[S_K + 3 + b], S[S_K + 6 + b]
        S[S_L + b] = r1 * k2 - r2 * k1  # (r~K)[0, b]
        S[S_L + 3 + b] = r2 * k0 - r0 * k2
        S[S_L + 6 + b] = r0 * k1 - r1 * k0
        c0, c1, c2 = S[S_J + 3 + b], S[S_J + 9 + b], S[S_J + 15 + b]  # column b of B'
        S[S_L + 9 + b] = r1 * c2 - r2 * c1  # (r~B')[0, b]
        S[S_L + 12 + b] = r2 * c0 - r0 * c2
        S[S_L + 15 + b] = r0 * c1 - r1 * c0
    for a in range(3):
        for b in range(3):
            k = S[S_K + 3 * a + b]
            dst[do + 6 * a + b] += S[S_J + 6 * a + b]
            dst[do + 6 * a + 3 + b] += k
            dst[do + 6 * (3 + b) + a] += k
            dst[do + 6 * (3 + a) + 3 + b] += (
                S[S_J + 6 * (3 + a) + 3 + b] + S[S_L + 3 * a + b] + S[S_L + 9 + 3 * b + a]
            )


# -- forward pass --------------------------------------------------------------------------------
@kernel
def placements(BF, BI, WB, S, q):
    """E_i, r_i (parent -> body) and world poses (kinematics.placements)."""
    for i in range(BI.shape[0]):
        jt = BI[i, JTYPE]
        k = BI[i, IQ]
        rJ0 = rJ1 = rJ2 = 0.0
        if jt == REVOLUTE:
            _axangle_T(BF[i, AXIS], BF[i, AXIS + 1], BF[i, AXIS + 2], q[k], S, S_EJ)
        elif jt in (FREE, SPHERICAL):
            o = k + 3 if jt == FREE else k
            _quat2mat(q[o], q[o + 1], q[o + 2], q[o + 3], S, S_Q)
            for a in range(3):
                for b in range(3):
                    S[S_EJ + 3 * a + b] = S[S_Q + 3 * b + a]
            if jt == FREE:
                rJ0, rJ1, rJ2 = q[k], q[k + 1], q[k + 2]
        else:
            for a in range(9):
                S[S_EJ + a] = 1.0 if a % 4 == 0 else 0.0
            if jt == PRISMATIC:
                rJ0, rJ1, rJ2 = BF[i, AXIS] * q[k], BF[i, AXIS + 1] * q[k], BF[i, AXIS + 2] * q[k]
        for a in range(3):
            x0, x1, x2 = S[S_EJ + 3 * a], S[S_EJ + 3 * a + 1], S[S_EJ + 3 * a + 2]
            for b in range(3):
                WB[i, WE + 3 * a + b] = x0 * BF[i, ET + b] + x1 * BF[i, ET + 3 + b] + x2 * BF[i, ET + 6 + b]
            WB[i, WR + a] = (
                BF[i, RT + a] + BF[i, ET + a] * rJ0 + BF[i, ET + 3 + a] * rJ1 + BF[i, ET + 6 + a] * rJ2
            )
        lam = BI[i, PARENT]
        if lam < 0:
            for a in range(3):
                for b in range(3):
                    WB[i, WRW + 3 * a + b] = WB[i, WE + 3 * b + a]
                WB[i, WPW + a] = WB[i, WR + a]
        else:
            for a in range(3):
                l0, l1, l2 = WB[lam, WRW + 3 * a], WB[lam, WRW + 3 * a + 1], WB[lam, WRW + 3 * a + 2]
                for b in range(3):
                    WB[i, WRW + 3 * a + b] = (
                        l0 * WB[i, WE + 3 * b] + l1 * WB[i, WE + 3 * b + 1] + l2 * WB[i, WE + 3 * b + 2]
                    )
                WB[i, WPW + a] = WB[lam, WPW + a] + l0 * WB[i, WR] + l1 * WB[i, WR + 1] + l2 * WB[i, WR + 2]


@kernel
def _wet_part(BF, BI, WB, i, surface, rv, b0, b1, b2):
    """(ρV, centre of buoyancy, wet share) of body i at the surface (kinematics.wet_part,
    hydro.hull.submerged): the full values when the hull's bounding sphere is under water."""
    row = WB[i]
    h = BI[i, HULL0]
    nh = BI[i, NHULL]
    pz = row[WPW + 2] - surface
    if nh == 0:
        return 0.0, b0, b1, b2, (1.0 if pz > 0.0 else 0.0)
    r0, r1, r2 = row[WRW + 6], row[WRW + 7], row[WRW + 8]  # row z of R (body -> world)
    dc = pz + r0 * BF[i, h + HCEN] + r1 * BF[i, h + HCEN + 1] + r2 * BF[i, h + HCEN + 2]
    if dc >= BF[i, h + HRAD]:
        return rv, b0, b1, b2, 1.0
    vol = BF[i, h + HVOL]
    if dc <= -BF[i, h + HRAD]:
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
def _body_bias(BF, BI, WB, S, i, fluid):
    """Hydrodynamic bias p_i into WB[i, WBIAS:] and ν_r into WB[i, WVR:]
    (hydro.forces.body_bias); fluid = [current, its acceleration, gravity, (surface depth,
    1 if there is a free surface, 0)] (world NED). At the free surface the buoyancy is that
    of the wet part of the hull and the damping is scaled by the wet share
    (kinematics.wet_part)."""
    row = WB[i]
    rv = BF[i, RV]
    b0, b1, b2 = BF[i, COB], BF[i, COB + 1], BF[i, COB + 2]
    wet = 1.0
    if fluid[3, 1] != 0.0:
        rv, b0, b1, b2, wet = _wet_part(BF, BI, WB, i, fluid[3, 0], rv, b0, b1, b2)
    for a in range(3):
        R0, R1, R2 = row[WRW + a], row[WRW + 3 + a], row[WRW + 6 + a]  # column a of R: (Rᵀx)_a
        S[S_GB + a] = R0 * fluid[2, 0] + R1 * fluid[2, 1] + R2 * fluid[2, 2]
        S[S_VC + a] = R0 * fluid[0, 0] + R1 * fluid[0, 1] + R2 * fluid[0, 2]
        S[S_AC + a] = R0 * fluid[1, 0] + R1 * fluid[1, 1] + R2 * fluid[1, 2]
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
def _force_cross_into(v, vo, f, fo, out, oo, add):
    """out[oo:oo+6] (=, or += with add) v x* f = [ω x f; v x f + ω x n]."""
    v0, v1, v2, w0, w1, w2 = v[vo], v[vo + 1], v[vo + 2], v[vo + 3], v[vo + 4], v[vo + 5]
    f0, f1, f2, n0, n1, n2 = f[fo], f[fo + 1], f[fo + 2], f[fo + 3], f[fo + 4], f[fo + 5]
    x0 = w1 * f2 - w2 * f1
    x1 = w2 * f0 - w0 * f2
    x2 = w0 * f1 - w1 * f0
    x3 = (v1 * f2 - v2 * f1) + (w1 * n2 - w2 * n1)
    x4 = (v2 * f0 - v0 * f2) + (w2 * n0 - w0 * n2)
    x5 = (v0 * f1 - v1 * f0) + (w0 * n1 - w1 * n0)
    if add:
        out[oo] += x0
        out[oo + 1] += x1
        out[oo + 2] += x2
        out[oo + 3] += x3
        out[oo + 4] += x4
        out[oo + 5] += x5
    else:
        out[oo] = x0
        out[oo + 1] = x1
        out[oo + 2] = x2
        out[oo + 3] = x3
        out[oo + 4] = x4
        out[oo + 5] = x5


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


@kernel
def _thrust(TF, TI, WB, thrust, n):
    """bias -= thruster wrenches at shaft speeds n (ThrusterBank.wrenches, Nielsen et al. 2018 eq. 12)."""
    for k in range(TI.shape[0]):
        b = TI[k]
        p0, p1, p2 = TF[k, TPOS], TF[k, TPOS + 1], TF[k, TPOS + 2]
        w0, w1, w2 = WB[b, WVR + 3], WB[b, WVR + 4], WB[b, WVR + 5]
        u0 = WB[b, WVR] + (w1 * p2 - w2 * p1)
        u1 = WB[b, WVR + 1] + (w2 * p0 - w0 * p2)
        u2 = WB[b, WVR + 2] + (w0 * p1 - w1 * p0)
        ua = u0 * TF[k, TDIR] + u1 * TF[k, TDIR + 1] + u2 * TF[k, TDIR + 2]
        nk = n[k]
        Tnn = TF[k, TNF] if nk >= 0.0 else TF[k, TNR]
        T = Tnn * abs(nk) * nk + TF[k, TNU] * abs(nk) * ua
        T = min(max(T, TF[k, TMIN]), TF[k, TMAX])
        thrust[k] = T
        for a in range(3):
            WB[b, WBIAS + a] -= T * TF[k, TDIR + a]
            WB[b, WBIAS + 3 + a] -= T * TF[k, TARM + a]


@njit(inline="always", cache=True, nogil=True, error_model="numpy", **_INTERNAL)  # type: ignore[call-overload]
def forward_pass(BF, BI, TF, TI, KI, KF, KN, WB, S, thrust, q, v, f_ext, n, fluid):
    """Placements, velocities, c_i and the biases (kinematics.forward_kinematics) with the
    external wrenches ``f_ext`` (nb x 6), the thrust at shaft speeds ``n`` and the contact
    forces of the points in KI/KF (normal forces into KN)."""
    placements(BF, BI, WB, S, q)
    for i in range(BI.shape[0]):
        jt = BI[i, JTYPE]
        k = BI[i, IV]
        for a in range(6):
            S[S_VJ + a] = 0.0
        if jt == REVOLUTE:
            for a in range(3):
                S[S_VJ + 3 + a] = BF[i, AXIS + a] * v[k]
        elif jt == PRISMATIC:
            for a in range(3):
                S[S_VJ + a] = BF[i, AXIS + a] * v[k]
        elif jt == SPHERICAL:
            for a in range(3):
                S[S_VJ + 3 + a] = v[k + a]
        elif jt == FREE:
            for a in range(6):
                S[S_VJ + a] = v[k + a]
        lam = BI[i, PARENT]
        row = WB[i]
        _outward(
            WB, i, lam, WB[lam], WV, S, S_VJ, row, WV
        )  # v_i = X_i v_λ + S q̇ (McMillan et al. 1996 eq. 9)
        # c = v x vJ (motion cross product)
        x0, x1, x2, x3, x4, x5 = row[WV], row[WV + 1], row[WV + 2], row[WV + 3], row[WV + 4], row[WV + 5]
        j0, j1, j2 = S[S_VJ], S[S_VJ + 1], S[S_VJ + 2]
        j3, j4, j5 = S[S_VJ + 3], S[S_VJ + 4], S[S_VJ + 5]
        row[WC] = (x4 * j2 - x5 * j1) + (x1 * j5 - x2 * j4)
        row[WC + 1] = (x5 * j0 - x3 * j2) + (x2 * j3 - x0 * j5)
        row[WC + 2] = (x3 * j1 - x4 * j0) + (x0 * j4 - x1 * j3)
        row[WC + 3] = x4 * j5 - x5 * j4
        row[WC + 4] = x5 * j3 - x3 * j5
        row[WC + 5] = x3 * j4 - x4 * j3
        _body_bias(BF, BI, WB, S, i, fluid)
        for a in range(6):
            row[WBIAS + a] -= f_ext[i, a]
    _thrust(TF, TI, WB, thrust, n)
    _contacts(KI, KF, KN, WB)


@kernel
def _contacts(KI, KF, KN, WB):
    """bias -= contact wrenches (dynamics.contact.Contacts.wrenches): per point (KI: body,
    kind 0 seabed / 1 anchor; KF: r (3), seabed depth or anchor point (3), k, c, μ, v_s) the
    spring-damper normal force that never pulls with regularised Coulomb friction, or the
    anchor spring-damper; forces act at the point, KN gets the seabed normal forces."""
    for k in range(KI.shape[0]):
        b = KI[k, 0]
        r0, r1, r2 = KF[k, 0], KF[k, 1], KF[k, 2]
        w0, w1, w2 = WB[b, WV + 3], WB[b, WV + 4], WB[b, WV + 5]
        u0 = WB[b, WV] + (w1 * r2 - w2 * r1)
        u1 = WB[b, WV + 1] + (w2 * r0 - w0 * r2)
        u2 = WB[b, WV + 2] + (w0 * r1 - w1 * r0)
        # the point's world position x and velocity xd (world rotation WRW, row-major)
        x0 = WB[b, WPW] + WB[b, WRW + 0] * r0 + WB[b, WRW + 1] * r1 + WB[b, WRW + 2] * r2
        x1 = WB[b, WPW + 1] + WB[b, WRW + 3] * r0 + WB[b, WRW + 4] * r1 + WB[b, WRW + 5] * r2
        x2 = WB[b, WPW + 2] + WB[b, WRW + 6] * r0 + WB[b, WRW + 7] * r1 + WB[b, WRW + 8] * r2
        xd0 = WB[b, WRW + 0] * u0 + WB[b, WRW + 1] * u1 + WB[b, WRW + 2] * u2
        xd1 = WB[b, WRW + 3] * u0 + WB[b, WRW + 4] * u1 + WB[b, WRW + 5] * u2
        xd2 = WB[b, WRW + 6] * u0 + WB[b, WRW + 7] * u1 + WB[b, WRW + 8] * u2
        stiff, damp = KF[k, 6], KF[k, 7]
        if KI[k, 1] == 0:
            d = x2 - KF[k, 3]
            fn = max(0.0, stiff * d + damp * xd2) if d > 0.0 else 0.0
            KN[k] = fn
            if fn == 0.0:
                continue
            scale = -KF[k, 8] * fn / math.sqrt(xd0 * xd0 + xd1 * xd1 + KF[k, 9] * KF[k, 9])
            F0, F1, F2 = scale * xd0, scale * xd1, -fn
        else:
            F0 = -stiff * (x0 - KF[k, 3]) - damp * xd0
            F1 = -stiff * (x1 - KF[k, 4]) - damp * xd1
            F2 = -stiff * (x2 - KF[k, 5]) - damp * xd2
        f0 = WB[b, WRW] * F0 + WB[b, WRW + 3] * F1 + WB[b, WRW + 6] * F2
        f1 = WB[b, WRW + 1] * F0 + WB[b, WRW + 4] * F1 + WB[b, WRW + 7] * F2
        f2 = WB[b, WRW + 2] * F0 + WB[b, WRW + 5] * F1 + WB[b, WRW + 8] * F2
        WB[b, WBIAS] -= f0
        WB[b, WBIAS + 1] -= f1
        WB[b, WBIAS + 2] -= f2
        WB[b, WBIAS + 3] -= r1 * f2 - r2 * f1
        WB[b, WBIAS + 4] -= r2 * f0 - r0 * f2
        WB[b, WBIAS + 5] -= r0 * f1 - r1 * f0


# -- articulated-body algorithm -------------------------------------------------------------------
@kernel
def _chol_inv(D, do, n, out, oo, S):
    """out[oo:] = D⁻¹ (n x n, row stride 6) for a symmetric positive definite D at D[do:]."""
    for j in range(n):
        s = D[do + 7 * j]
        for k in range(j):
            s -= S[S_CL + 6 * j + k] ** 2
        S[S_CL + 7 * j] = math.sqrt(s)
        for i in range(j + 1, n):
            s = D[do + 6 * i + j]
            for k in range(j):
                s -= S[S_CL + 6 * i + k] * S[S_CL + 6 * j + k]
            S[S_CL + 6 * i + j] = s / S[S_CL + 7 * j]
    for j in range(n):
        S[S_CLI + 7 * j] = 1.0 / S[S_CL + 7 * j]
        for i in range(j + 1, n):
            s = 0.0
            for k in range(j, i):
                s -= S[S_CL + 6 * i + k] * S[S_CLI + 6 * k + j]
            S[S_CLI + 6 * i + j] = s / S[S_CL + 7 * i]
    for i in range(n):
        for j in range(i + 1):
            s = 0.0
            for k in range(i, n):
                s += S[S_CLI + 6 * k + i] * S[S_CLI + 6 * k + j]
            out[oo + 6 * i + j] = s
            out[oo + 6 * j + i] = s


@kernel
def aba_pass(BF, BI, WB, S, tau, ddq):
    """Backward and forward passes of the ABA (dynamics.aba) after ``forward_pass``."""
    nb = BI.shape[0]
    for i in range(nb):
        row = WB[i]
        for a in range(6):
            row[WPA + a] = row[WBIAS + a]
        for a in range(36):
            row[WIA + a] = BF[i, IH + a]
    for i in range(nb - 1, -1, -1):
        row = WB[i]
        jt = BI[i, JTYPE]
        nv = BI[i, JNV]
        k = BI[i, IV]
        if jt in (REVOLUTE, PRISMATIC):
            off = 3 if jt == REVOLUTE else 0
            x0, x1, x2 = BF[i, AXIS], BF[i, AXIS + 1], BF[i, AXIS + 2]
            for a in range(6):
                b = WIA + 6 * a + off
                row[WU + 6 * a] = row[b] * x0 + row[b + 1] * x1 + row[b + 2] * x2
            row[WDI] = 1.0 / (
                x0 * row[WU + 6 * off] + x1 * row[WU + 6 * (off + 1)] + x2 * row[WU + 6 * (off + 2)]
            )
            row[WUU] = tau[k] - (x0 * row[WPA + off] + x1 * row[WPA + off + 1] + x2 * row[WPA + off + 2])
        elif jt == SPHERICAL:
            for a in range(6):
                for b in range(3):
                    row[WU + 6 * a + b] = row[WIA + 6 * a + 3 + b]
            _chol_inv(row, WIA + 21, 3, row, WDI, S)
            for b in range(3):
                row[WUU + b] = tau[k + b] - row[WPA + 3 + b]
        elif jt == FREE:
            for a in range(36):
                row[WU + a] = row[WIA + a]
            for a in range(6):
                row[WUU + a] = tau[k + a] - row[WPA + a]
            if BI[i, RIGID]:  # I^A is the constant composite inertia: its inverse is in the table
                for a in range(36):
                    row[WDI + a] = BF[i, IHI + a]
            else:
                _chol_inv(row, WIA, 6, row, WDI, S)
        lam = BI[i, PARENT]
        if lam < 0:
            continue
        if BI[i, FOLDED]:  # its inertia is in the free ancestor's constant; c = 0: pa = pA
            _xforce_add(WB, i, row, WPA, WB[lam], WPA)
            continue
        # Ia = IA - U D⁻¹ Uᵀ at S[S_IA];  pa = pA + Ia c + U D⁻¹ u at S[S_PA]
        if nv == 1:
            dinv, uu = row[WDI], row[WUU]
            for a in range(6):
                ua = row[WU + 6 * a] * dinv
                S[S_PA + a] = row[WPA + a] + ua * uu
                for b in range(6):
                    S[S_IA + 6 * a + b] = row[WIA + 6 * a + b] - ua * row[WU + 6 * b]
        elif nv > 1:
            for a in range(6):
                for b in range(nv):
                    s = 0.0
                    for kk in range(nv):
                        s += row[WU + 6 * a + kk] * row[WDI + 6 * kk + b]
                    S[S_UD + 6 * a + b] = s
            for a in range(6):
                s = 0.0
                for kk in range(nv):
                    s += S[S_UD + 6 * a + kk] * row[WUU + kk]
                S[S_PA + a] = row[WPA + a] + s
                for b in range(6):
                    s = 0.0
                    for kk in range(nv):
                        s += S[S_UD + 6 * a + kk] * row[WU + 6 * b + kk]
                    S[S_IA + 6 * a + b] = row[WIA + 6 * a + b] - s
        else:
            for a in range(6):
                S[S_PA + a] = row[WPA + a]
            for a in range(36):
                S[S_IA + a] = row[WIA + a]
        c0, c1, c2, c3, c4, c5 = row[WC], row[WC + 1], row[WC + 2], row[WC + 3], row[WC + 4], row[WC + 5]
        for a in range(6):
            b = S_IA + 6 * a
            S[S_PA + a] += (
                S[b] * c0 + S[b + 1] * c1 + S[b + 2] * c2 + S[b + 3] * c3 + S[b + 4] * c4 + S[b + 5] * c5
            )
        _add_congruence(WB, i, S, S_IA, WB[lam], WIA, S)
        _xforce_add(WB, i, S, S_PA, WB[lam], WPA)
    for i in range(nb):
        row = WB[i]
        lam = BI[i, PARENT]
        _outward(WB, i, lam, WB[lam], WA, row, WC, S, S_AP)  # a' = X_i a_λ + c_i
        nv = BI[i, JNV]
        k = BI[i, IV]
        jt = BI[i, JTYPE]
        if nv:
            for kk in range(nv):
                s = row[WUU + kk]
                for a in range(6):
                    s -= row[WU + 6 * a + kk] * S[S_AP + a]
                S[S_RHS + kk] = s
            for kk in range(nv):
                s = 0.0
                for ll in range(nv):
                    s += row[WDI + 6 * kk + ll] * S[S_RHS + ll]
                ddq[k + kk] = s
            if jt == REVOLUTE:
                for a in range(3):
                    S[S_AP + 3 + a] += BF[i, AXIS + a] * ddq[k]
            elif jt == PRISMATIC:
                for a in range(3):
                    S[S_AP + a] += BF[i, AXIS + a] * ddq[k]
            elif jt == SPHERICAL:
                for a in range(3):
                    S[S_AP + 3 + a] += ddq[k + a]
            else:
                for a in range(6):
                    S[S_AP + a] += ddq[k + a]
        for a in range(6):
            row[WA + a] = S[S_AP + a]


# -- workspace carving ---------------------------------------------------------------------------
@kernel
def _carve(W, nb, nq, nv, nt):
    """(WB, WQ, WV, thrust, S, CS): borrowed views of a workspace buffer at the offsets of
    ``flat.workspace`` (written out here: compiled code takes them as scalar sums); CS, the
    connections' scratch, is the rest."""
    o_wq = nb * NW
    o_wv = o_wq + 4 * nq
    o_t = o_wv + 13 * nv
    o_s = o_t + nt
    return (
        _borrow(W, 0, (nb, NW)),
        _borrow(W, o_wq, (4, nq)),
        _borrow(W, o_wv, (13, nv)),
        _borrow(W, o_t, nt),
        _borrow(W, o_s, NS),
        _borrow(W, o_s + NS, W.shape[0] - o_s - NS),
    )


# inlined where it is called (numba IR): a call passing 19 arrays costs 100 ns, a quarter of a
# BlueROV2's derivative evaluation
@njit(inline="always", cache=True, nogil=True, error_model="numpy", **_INTERNAL)  # type: ignore[call-overload]
def _accel(BF, BI, TF, TI, CI, CF, KI, KF, KN, WB, S, CS, thrust, q, v, tau, f_ext, n, fluid, ddq):
    """q̈: forward pass, ABA, and with rigid connections (rows of CI/CF) the Udwadia-Kalaba
    correction (``constraints.constrained_aba``)."""
    forward_pass(BF, BI, TF, TI, KI, KF, KN, WB, S, thrust, q, v, f_ext, n, fluid)
    aba_pass(BF, BI, WB, S, tau, ddq)
    if CI.shape[0]:
        _constrain(BF, BI, CI, CF, WB, S, CS, v, ddq)


# -- rigid connections (Udwadia-Kalaba, Nielsen et al. 2018 eq. 20; dynamics.constraints) -------
@kernel
def _s_column(BF, BI, i, k, out, o):
    """Column k of joint i's motion subspace S (child coordinates) into out[o:o+6]."""
    for a in range(6):
        out[o + a] = 0.0
    jt = BI[i, JTYPE]
    if jt == REVOLUTE:
        for a in range(3):
            out[o + 3 + a] = BF[i, AXIS + a]
    elif jt == PRISMATIC:
        for a in range(3):
            out[o + a] = BF[i, AXIS + a]
    elif jt == SPHERICAL:
        out[o + 3 + k] = 1.0
    else:
        out[o + k] = 1.0


@kernel
def _crba(BF, BI, WB, S, M):
    """Joint-space inertia with added mass (dynamics.crba): composite inertias accumulated
    inward with the structured ``Xᵀ I X`` (in each body row's WIC), then
    ``M_ij = S_iᵀ (X...)ᵀ I^c_i S_j``; allocates nothing (S_F, S_COL, S_TMP of the scratch)."""
    nb, nv = BI.shape[0], M.shape[0]
    for i in range(nb):
        for a in range(36):
            WB[i, WIC + a] = BF[i, IH + a]
    for i in range(nb - 1, 0, -1):
        lam = BI[i, PARENT]
        if lam >= 0:
            _add_congruence(WB, i, WB[i], WIC, WB[lam], WIC, S)
    for a in range(nv):
        for b in range(nv):
            M[a, b] = 0.0
    for i in range(nb):
        nvi = BI[i, JNV]
        for k in range(nvi):
            _s_column(BF, BI, i, k, S, S_COL)
            for a in range(6):
                s = 0.0
                for b in range(6):
                    s += WB[i, WIC + 6 * a + b] * S[S_COL + b]
                S[S_F + a] = s
            j = i
            while True:
                nvj = BI[j, JNV]
                for kk in range(nvj):
                    _s_column(BF, BI, j, kk, S, S_COL)
                    s = 0.0
                    for a in range(6):
                        s += S[S_F + a] * S[S_COL + a]
                    M[BI[i, IV] + k, BI[j, IV] + kk] = s
                    M[BI[j, IV] + kk, BI[i, IV] + k] = s
                lam = BI[j, PARENT]
                if lam < 0:
                    break
                for a in range(6):
                    S[S_TMP + a] = 0.0
                _xforce_add(WB, j, S, S_F, S, S_TMP)
                for a in range(6):
                    S[S_F + a] = S[S_TMP + a]
                j = lam


@kernel
def _jacobian(BF, BI, WB, S, i, J):
    """6 x nv body Jacobian of body i in its own axes (constraints.body_jacobian): column of
    ancestor k's joint = X_{i<-k} S_k, carried down the chain from k to i (the body p steps
    above i found by walking up; trees are shallow). Allocates nothing."""
    nv = J.shape[1]
    for a in range(6):
        for b in range(nv):
            J[a, b] = 0.0
    k = i
    while k >= 0:
        m = 0  # bodies below k on the path to i
        j = i
        while j != k:
            m += 1
            j = BI[j, PARENT]
        for c in range(BI[k, JNV]):
            _s_column(BF, BI, k, c, S, S_COL)
            for p in range(m - 1, -1, -1):  # the body p steps above i, from k's child down to i
                j = i
                for _ in range(p):
                    j = BI[j, PARENT]
                _xmotion(WB, j, S, S_COL, S, S_TMP)
                for a in range(6):
                    S[S_COL + a] = S[S_TMP + a]
            for a in range(6):
                J[a, BI[k, IV] + c] = S[S_COL + a]
        k = BI[k, PARENT]


@kernel
def _mat2quat(R):
    """Unit quaternion [w x y z] (w >= 0) of a rotation matrix (Shepperd's method; the same
    quaternion transforms3d.mat2quat returns for an orthonormal matrix)."""
    t = R[0, 0] + R[1, 1] + R[2, 2]
    if t > 0.0:
        s = 2.0 * math.sqrt(t + 1.0)
        w, x, y, z = 0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        w, x, y, z = (R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        w, x, y, z = (R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        w, x, y, z = (R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s
    if w < 0.0:
        return -w, -x, -y, -z
    return w, x, y, z


@kernel
def _constrain(BF, BI, CI, CF, WB, S, CS, v, ddq):
    """ddq <- q̈_u + L⁻ᵀ (A L⁻ᵀ)⁺ (b - A q̈_u) with M = L Lᵀ (constraints.udwadia_kalaba);
    rows ``A = J_c - X J_p``, ``b = X a⁰_p - a⁰_c - 2α ė - β² e`` per connection
    (constraints.constraint_equations). CF rows: E (9, child_R_parent), r (3), α, β. Works in
    CS, cut at the offsets of ``flat.connection_scratch`` (written out here); allocates
    nothing. The pseudo-inverse is ``_pinv_solve``'s."""
    nb, nv, nc = BI.shape[0], ddq.shape[0], CI.shape[0]
    m = 6 * nc
    o_A = 6 * nb
    o_b = o_A + m * nv
    o_jp = o_b + m
    o_jc = o_jp + 6 * nv
    o_M = o_jc + 6 * nv
    o_G = o_M + nv * nv
    o_res = o_G + m * nv
    o_V = o_res + m
    o_corr = o_V + m * m
    o_rt = o_corr + nv
    a0 = _borrow(CS, 0, (nb, 6))
    A = _borrow(CS, o_A, (m, nv))
    b = _borrow(CS, o_b, m)
    Jp = _borrow(CS, o_jp, (6, nv))
    Jc = _borrow(CS, o_jc, (6, nv))
    L = _borrow(CS, o_M, (nv, nv))  # M, then its Cholesky factor in place
    G = _borrow(CS, o_G, (m, nv))
    res = _borrow(CS, o_res, m)
    V = _borrow(CS, o_V, (m, m))
    corr = _borrow(CS, o_corr, nv)
    Rt = _borrow(CS, o_rt, (3, 3))
    Rc = _borrow(CS, o_rt + 9, (3, 3))
    for i in range(nb):
        lam = BI[i, PARENT]
        _outward(WB, i, lam, a0[lam], 0, WB[i], WC, a0[i], 0)  # a⁰_i = X_i a⁰_λ + c_i
    for a in range(m):
        b[a] = 0.0
    for k in range(nc):
        p, c = CI[k, 0], CI[k, 1]
        E = CF[k, 0:9].reshape((3, 3))
        r = CF[k, 9:12]
        alpha, beta = CF[k, 12], CF[k, 13]
        _jacobian(BF, BI, WB, S, p, Jp)
        _jacobian(BF, BI, WB, S, c, Jc)
        # X = [[E, -E r~], [0, E]] applied to columns / vectors
        for col in range(nv):
            m0, m1, m2 = Jp[0, col], Jp[1, col], Jp[2, col]
            w0, w1, w2 = Jp[3, col], Jp[4, col], Jp[5, col]
            d0 = m0 - (r[1] * w2 - r[2] * w1)
            d1 = m1 - (r[2] * w0 - r[0] * w2)
            d2 = m2 - (r[0] * w1 - r[1] * w0)
            for a in range(3):
                A[6 * k + a, col] = Jc[a, col] - (E[a, 0] * d0 + E[a, 1] * d1 + E[a, 2] * d2)
                A[6 * k + 3 + a, col] = Jc[3 + a, col] - (E[a, 0] * w0 + E[a, 1] * w1 + E[a, 2] * w2)
        # X a⁰_p and X v_p
        for which in range(2):
            src = a0[p] if which == 0 else WB[p, WV : WV + 6]
            m0, m1, m2, w0, w1, w2 = src[0], src[1], src[2], src[3], src[4], src[5]
            d0 = m0 - (r[1] * w2 - r[2] * w1)
            d1 = m1 - (r[2] * w0 - r[0] * w2)
            d2 = m2 - (r[0] * w1 - r[1] * w0)
            for a in range(3):
                lin = E[a, 0] * d0 + E[a, 1] * d1 + E[a, 2] * d2
                ang = E[a, 0] * w0 + E[a, 1] * w1 + E[a, 2] * w2
                if which == 0:
                    b[6 * k + a] = lin - a0[c, a]
                    b[6 * k + 3 + a] = ang - a0[c, 3 + a]
                else:  # ė = v_c - X v_p
                    b[6 * k + a] -= 2.0 * alpha * (WB[c, WV + a] - lin)
                    b[6 * k + 3 + a] -= 2.0 * alpha * (WB[c, WV + 3 + a] - ang)
        # pose error e = [Rcᵀ(p_c - p_p - R_p r); 2 sign(w) vec(q_t⁻¹ ⊗ q_c)], R_t = R_p Eᵀ
        for a in range(3):
            for bb in range(3):
                Rc[a, bb] = WB[c, WRW + 3 * a + bb]
                s = 0.0
                for kk in range(3):
                    s += WB[p, WRW + 3 * a + kk] * E[bb, kk]
                Rt[a, bb] = s
        # p_c - p_p - R_p r (R_p row-major at WRW)
        dp0 = WB[c, WPW] - WB[p, WPW] - (WB[p, WRW] * r[0] + WB[p, WRW + 1] * r[1] + WB[p, WRW + 2] * r[2])
        dp1 = (
            WB[c, WPW + 1]
            - WB[p, WPW + 1]
            - (WB[p, WRW + 3] * r[0] + WB[p, WRW + 4] * r[1] + WB[p, WRW + 5] * r[2])
        )
        dp2 = (
            WB[c, WPW + 2]
            - WB[p, WPW + 2]
            - (WB[p, WRW + 6] * r[0] + WB[p, WRW + 7] * r[1] + WB[p, WRW + 8] * r[2])
        )
        for a in range(3):
            ep = Rc[0, a] * dp0 + Rc[1, a] * dp1 + Rc[2, a] * dp2
            b[6 * k + a] -= beta * beta * ep
        tw, tx, ty, tz = _mat2quat(Rt)
        cw, cx, cy, cz = _mat2quat(Rc)
        ew, ex, ey, ez = _qmult(tw, -tx, -ty, -tz, cw, cx, cy, cz)
        sg = 1.0 if ew >= 0.0 else -1.0
        if ew == 0.0:
            sg = 1.0
        b[6 * k + 3] -= beta * beta * 2.0 * sg * ex
        b[6 * k + 4] -= beta * beta * 2.0 * sg * ey
        b[6 * k + 5] -= beta * beta * 2.0 * sg * ez
    _crba(BF, BI, WB, S, L)
    # M = L Lᵀ in place (lower triangle; a matrix that is not positive definite gives NaN,
    # which the step reports as a non-finite state)
    for j in range(nv):
        d = L[j, j]
        for kk in range(j):
            d -= L[j, kk] * L[j, kk]
        d = math.sqrt(d)
        L[j, j] = d
        for i in range(j + 1, nv):
            s = L[i, j]
            for kk in range(j):
                s -= L[i, kk] * L[j, kk]
            L[i, j] = s / d
    # G = A L⁻ᵀ  (rows of A solved against L: L gᵀ = aᵀ)
    for row in range(m):
        for j in range(nv):
            s = A[row, j]
            for kk in range(j):
                s -= L[j, kk] * G[row, kk]
            G[row, j] = s / L[j, j]
    for row in range(m):
        s = b[row]
        for j in range(nv):
            s -= A[row, j] * ddq[j]
        res[row] = s
    _pinv_solve(G, V, res, corr, 1e-10)  # corr = G⁺ res (nv)
    # ddq += L⁻ᵀ corr, in place from the last entry up
    for j in range(nv - 1, -1, -1):
        s = corr[j]
        for kk in range(j + 1, nv):
            s -= L[kk, j] * corr[kk]
        corr[j] = s / L[j, j]
    for j in range(nv):
        ddq[j] += corr[j]


@kernel
def _pinv_solve(G, V, r, z, rcond):
    """z = G⁺ r for G (m x n), as ``numpy.linalg.pinv(G, rcond) @ r``: singular values below
    rcond times the largest are dropped. One-sided Jacobi SVD (Hestenes 1958; Demmel and
    Veselić 1992) on the rows of G, in place: rotations V (m x m) make the rows w_k = (Vᵀ G)_k
    orthogonal, so G = V Σ Uᵀ with σ_k = |w_k| and z = Σ_k w_k (v_kᵀ r) / σ_k². G is
    overwritten."""
    m, n = G.shape[0], G.shape[1]
    for a in range(m):
        for bb in range(m):
            V[a, bb] = 1.0 if a == bb else 0.0
    for _ in range(60):
        rotated = False
        for p in range(m - 1):
            for q in range(p + 1, m):
                alpha = beta = gamma = 0.0
                for j in range(n):
                    alpha += G[p, j] * G[p, j]
                    beta += G[q, j] * G[q, j]
                    gamma += G[p, j] * G[q, j]
                if abs(gamma) <= 1e-15 * math.sqrt(alpha * beta):
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                for j in range(n):
                    gp, gq = G[p, j], G[q, j]
                    G[p, j] = c * gp - s * gq
                    G[q, j] = s * gp + c * gq
                for j in range(m):
                    vp, vq = V[j, p], V[j, q]
                    V[j, p] = c * vp - s * vq
                    V[j, q] = s * vp + c * vq
        if not rotated:
            break
    largest = 0.0
    for k in range(m):
        s2 = 0.0
        for j in range(n):
            s2 += G[k, j] * G[k, j]
        largest = max(largest, s2)
    for j in range(n):
        z[j] = 0.0
    cutoff = rcond * rcond * largest  # on σ², as pinv's rcond is on σ
    for k in range(m):
        s2 = 0.0
        for j in range(n):
            s2 += G[k, j] * G[k, j]
        if s2 <= cutoff or s2 == 0.0:
            continue
        vr = 0.0
        for a in range(m):
            vr += V[a, k] * r[a]
        f = vr / s2
        for j in range(n):
            z[j] += f * G[k, j]


# -- integration ----------------------------------------------------------------------------------
@kernel
def _rotate(S, o, x, xo, out, oo, add):
    """out[oo:oo+3] (=, or += with add) R x[xo:xo+3], R the row-major 3x3 at S[o:o+9]."""
    x0, x1, x2 = x[xo], x[xo + 1], x[xo + 2]
    for a in range(3):
        r = S[o + 3 * a] * x0 + S[o + 3 * a + 1] * x1 + S[o + 3 * a + 2] * x2
        out[oo + a] = out[oo + a] + r if add else r


@kernel
def _advance_quat(q, o, dq, d, out):
    """out[o:o+4] = q[o:o+4] ⊗ exp(dq[d:d+3] / 2), renormalised (integrate.integrate)."""
    e0, e1, e2, e3 = _quat_exp(dq[d], dq[d + 1], dq[d + 2])
    w, x, y, z = _qmult(q[o], q[o + 1], q[o + 2], q[o + 3], e0, e1, e2, e3)
    nrm = math.sqrt(w * w + x * x + y * y + z * z)
    out[o], out[o + 1], out[o + 2], out[o + 3] = w / nrm, x / nrm, y / nrm, z / nrm


@kernel
def integrate(BI, S, q, dq, out):
    """out = q ⊕ dq (integrate.integrate)."""
    for a in range(q.shape[0]):
        out[a] = q[a]
    for i in range(BI.shape[0]):
        jt = BI[i, JTYPE]
        if BI[i, JNV] == 0:
            continue
        iq, iv = BI[i, IQ], BI[i, IV]
        if jt == FREE:
            _quat2mat(q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6], S, S_R)
            _rotate(S, S_R, dq, iv, out, iq, True)
            _advance_quat(q, iq + 3, dq, iv + 3, out)
        elif jt == SPHERICAL:
            _advance_quat(q, iq, dq, iv, out)
        else:
            out[iq] += dq[iv]


@kernel
def _tangent_rate(BI, S, theta, v, out):
    """Rate of the tangent coordinates about the stage-0 point (integrate._tangent_rate)."""
    for a in range(v.shape[0]):
        out[a] = v[a]
    for i in range(BI.shape[0]):
        jt = BI[i, JTYPE]
        iv = BI[i, IV]
        if jt == FREE:
            t0, t1, t2 = theta[iv + 3], theta[iv + 4], theta[iv + 5]
            if t0 != 0.0 or t1 != 0.0 or t2 != 0.0:
                e0, e1, e2, e3 = _quat_exp(t0, t1, t2)
                _quat2mat(e0, e1, e2, e3, S, S_R)
                _rotate(S, S_R, v, iv, out, iv, False)
            _dexp_inv(t0, t1, t2, v[iv + 3], v[iv + 4], v[iv + 5], out, iv + 3)
        elif jt == SPHERICAL:
            _dexp_inv(theta[iv], theta[iv + 1], theta[iv + 2], v[iv], v[iv + 1], v[iv + 2], out, iv)


@kernel
def _finite(x):
    for a in range(x.shape[0]):
        if not math.isfinite(x[a]):
            return False
    return True


@kernel
def _step(BF, BI, TF, TI, CI, CF, KI, KF, KN, W, method, q, v, tau, f_ext, n, fluid, h, q_out, v_out):
    """One RKMK4 step (method 0, integrate.step_rk4) or semi-implicit Euler step (method 1);
    fluid[s] = (current, acceleration, gravity, surface) at t, t+h/2, t+h. False on a non-finite value
    (q_out, v_out then hold garbage)."""
    nv = v.shape[0]
    WB, WQ, WV, thrust, S, CS = _carve(W, BI.shape[0], q.shape[0], nv, TI.shape[0])
    th = WV[12]
    if method == 1:
        acc = WV[4]
        _accel(BF, BI, TF, TI, CI, CF, KI, KF, KN, WB, S, CS, thrust, q, v, tau, f_ext, n, fluid[0], acc)
        if not _finite(acc):
            return False
        for a in range(nv):
            v_out[a] = v[a] + h * acc[a]
            th[a] = h * v_out[a]
        integrate(BI, S, q, th, q_out)
        return _finite(v_out) and _finite(q_out)
    for a in range(nv):
        th[a] = 0.0
    _accel(BF, BI, TF, TI, CI, CF, KI, KF, KN, WB, S, CS, thrust, q, v, tau, f_ext, n, fluid[0], WV[4])
    if not _finite(WV[4]):
        return False
    _tangent_rate(BI, S, th, v, WV[8])
    for s in range(1, 4):
        c = 0.5 * h if s < 3 else h
        for a in range(nv):
            th[a] = c * WV[7 + s, a]
            WV[s, a] = v[a] + c * WV[3 + s, a]
        integrate(BI, S, q, th, WQ[s])
        _accel(
            BF,
            BI,
            TF,
            TI,
            CI,
            CF,
            KI,
            KF,
            KN,
            WB,
            S,
            CS,
            thrust,
            WQ[s],
            WV[s],
            tau,
            f_ext,
            n,
            fluid[1 if s < 3 else 2],
            WV[4 + s],
        )
        if not _finite(WV[4 + s]):
            return False
        _tangent_rate(BI, S, th, WV[s], WV[8 + s])
    for a in range(nv):
        v_out[a] = v[a] + (h / 6.0) * (WV[4, a] + 2.0 * WV[5, a] + 2.0 * WV[6, a] + WV[7, a])
        th[a] = (h / 6.0) * (WV[8, a] + 2.0 * WV[9, a] + 2.0 * WV[10, a] + WV[11, a])
    integrate(BI, S, q, th, q_out)
    return _finite(v_out) and _finite(q_out)


# -- entry points from Python ---------------------------------------------------------------------
# Each takes the buffers FB, IB of ``flat.pack`` and the state and inputs; ``fluid`` is FB's.
@entry_kernel
def aba(FB, IB, q, v, tau, f_ext, n, ddq):
    """q̈ into ``ddq`` at (q, v) for tau, body wrenches f_ext (nb x 6), thruster shaft speeds n,
    in the fluid of stage 0. Thrusts are left in the workspace."""
    BF, BI, TF, TI, CI, CF, KI, KF, KN, W, fluid = _unpack(FB, IB)
    WB, _, _, thrust, S, CS = _carve(W, BI.shape[0], IB[H_NQ], IB[H_NV], TI.shape[0])
    _accel(BF, BI, TF, TI, CI, CF, KI, KF, KN, WB, S, CS, thrust,
           _bare(q), _bare(v), _bare(tau), _bare(f_ext), _bare(n), fluid[0], _bare(ddq))  # fmt: skip


@entry_kernel
def aba_bound(FB, IB):
    """``aba`` of the state and inputs held in FB itself, at the offsets of ``flat.inputs``
    (written out here, as in ``_carve``): a prepared call takes two arguments."""
    nb, nq, nv, nt = IB[H_NB], IB[H_NQ], IB[H_NV], IB[H_NT]
    o = IB[H_IN]
    q = _borrow(FB, o, nq)
    v = _borrow(FB, o + nq, nv)
    tau = _borrow(FB, o + nq + nv, nv)
    f_ext = _borrow(FB, o + nq + 2 * nv, (nb, 6))
    n = _borrow(FB, o + nq + 2 * nv + 6 * nb, nt)
    ddq = _borrow(FB, o + nq + 2 * nv + 6 * nb + nt, nv)
    BF, BI, TF, TI, CI, CF, KI, KF, KN, W, fluid = _unpack(FB, IB)
    WB, _, _, thrust, S, CS = _carve(W, nb, nq, nv, nt)
    _accel(BF, BI, TF, TI, CI, CF, KI, KF, KN, WB, S, CS, thrust, q, v, tau, f_ext, n, fluid[0], ddq)


@entry_kernel
def step(FB, IB, method, q, v, tau, f_ext, n, h, q_out, v_out, thrust_out):
    """One step (see ``_step``); when it is finite, the thrusts of its last evaluation also
    into ``thrust_out`` (where the thruster bank keeps them)."""
    BF, BI, TF, TI, CI, CF, KI, KF, KN, W, fluid = _unpack(FB, IB)
    ok = _step(BF, BI, TF, TI, CI, CF, KI, KF, KN, W, method, _bare(q), _bare(v), _bare(tau),
               _bare(f_ext), _bare(n), fluid, h, _bare(q_out), _bare(v_out))  # fmt: skip
    if ok:
        thrust = _carve(W, BI.shape[0], IB[H_NQ], IB[H_NV], TI.shape[0])[3]
        out = _bare(thrust_out)
        for k in range(TI.shape[0]):
            out[k] = thrust[k]
    return ok


@entry_kernel
def step_many(FB, IB, method, q, v, tau, f_ext, n, h, steps, q_out, v_out):
    """``steps`` steps with the inputs and the fluid held (``Simulator.advance``); returns the
    number of steps done (fewer on a non-finite value: q_out, v_out then hold the last finite
    state)."""
    BF, BI, TF, TI, CI, CF, KI, KF, KN, W, fluid = _unpack(FB, IB)
    tau, f_ext, n, q_out, v_out = _bare(tau), _bare(f_ext), _bare(n), _bare(q_out), _bare(v_out)
    qa, va = np.empty(q.shape[0]), np.empty(v.shape[0])
    qa[:] = q
    va[:] = v
    qb, vb = _bare(qa), _bare(va)
    for k in range(steps):
        if not _step(
            BF, BI, TF, TI, CI, CF, KI, KF, KN, W, method, qb, vb, tau, f_ext, n, fluid, h, q_out, v_out
        ):
            q_out[:] = qb
            v_out[:] = vb
            return k
        qb[:] = q_out
        vb[:] = v_out
    return steps


@entry_kernel
def aba_repeat(FB, IB, q, v, tau, f_ext, n, ddq, repeat):
    """``aba`` called ``repeat`` times inside compiled code (benchmarks: the cost without the
    Python call)."""
    for _ in range(repeat):
        aba(FB, IB, q, v, tau, f_ext, n, ddq)


# The one signature Python calls each entry point with (C-contiguous float64 vectors, the int
# buffer, f_ext nb x 6).
_VEC, _MAT, _INT = types.float64[::1], types.float64[:, ::1], types.int64[::1]
SIGNATURES = {
    "aba": (_VEC, _INT, _VEC, _VEC, _VEC, _MAT, _VEC, _VEC),
    "aba_bound": (_VEC, _INT),
    "step": (_VEC, _INT, types.int64, _VEC, _VEC, _VEC, _MAT, _VEC, types.float64, _VEC, _VEC, _VEC),
}


@functools.cache  # once per process: a closed dispatcher refuses even to look its signature up again
def closed(name: str):
    """The entry point ``name`` (``aba`` or ``step``) compiled for ``SIGNATURES[name]`` (or
    loaded from numba's cache) and closed to other types: called with any other argument
    types it raises TypeError instead of compiling them for half a minute. Numba checks the
    types in C, faster than Python can."""
    dispatcher = globals()[name]
    dispatcher.compile(SIGNATURES[name])
    dispatcher.disable_compile()
    return dispatcher


def entry(name: str):
    """The compiled function itself of ``name`` for ``SIGNATURES[name]``, without numba's
    dispatch on the argument types: for arguments the caller made itself (``aba_bound``), since
    it converts them unchecked."""
    return globals()[name].compile(SIGNATURES[name])


@njit(cache=True, nogil=True, parallel=True)
def batch_step(BF, BI, TF, TI, CI, CF, KI, KF, KN, WS, method, Q, V, TAU, F_EXT, N, fluid, h, steps, ok):
    """``steps`` steps of every copy k (rows of Q, V, TAU, N; F_EXT[k] is nb x 6), in place.
    Copies are split over the threads, each with its own workspace row ``WS[t]``; a copy whose
    state stops being finite keeps its last finite state and gets ``ok[k] = False``. (KN, the
    contact normal forces, is shared by the threads: it is not a result here.)"""
    ncopies = Q.shape[0]
    nthreads = WS.shape[0]
    per = (ncopies + nthreads - 1) // nthreads
    for t in prange(nthreads):
        qn = np.empty(Q.shape[1])
        vn = np.empty(V.shape[1])
        for k in range(t * per, min(ncopies, (t + 1) * per)):
            for _ in range(steps):
                if not ok[k]:
                    break
                if _step(
                    BF,
                    BI,
                    TF,
                    TI,
                    CI,
                    CF,
                    KI,
                    KF,
                    KN,
                    WS[t],
                    method,
                    Q[k],
                    V[k],
                    TAU[k],
                    F_EXT[k],
                    N[k],
                    fluid,
                    h,
                    qn,
                    vn,
                ):
                    Q[k, :] = qn
                    V[k, :] = vn
                else:
                    ok[k] = False
