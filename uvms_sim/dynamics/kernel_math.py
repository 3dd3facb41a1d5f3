"""Building blocks of the compiled kernels (numba): rotations and quaternions written out
(compiled code cannot call transforms3d; the tests hold them equal to it), spatial transforms
through their structure (McMillan et al. 1996 eqs. A5, A8), small Cholesky inverses, and the
``kernel`` decorator every compiled function uses (cached, GIL released).

Compiled once per machine into numba's cache (``__pycache__`` or ``NUMBA_CACHE_DIR``);
``make setup`` does it (``python -m uvms_sim.kernels``).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numba
from numba import njit

from .flat import (
    S_CL,
    S_CLI,
    S_J,
    S_K,
    S_L,
    S_TT,
    WE,
    WR,
)

# The compiled code is cached next to this file; where that is not writable (an installed ROS
# package) and no NUMBA_CACHE_DIR is set, in the user's cache directory instead.
if not os.access(Path(__file__).parent, os.W_OK) and not os.environ.get("NUMBA_CACHE_DIR"):
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "uvms_sim"
    numba.config.CACHE_DIR = str(cache)  # type: ignore[attr-defined]

kernel = njit(cache=True, nogil=True, error_model="numpy")  # every kernel: cached, GIL released


@kernel
def quat2mat(w, x, y, z, out, o):
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
def axangle_T(x, y, z, angle, out, o):
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
def quat_exp(t0, t1, t2):
    """``exp(θ/2)`` as a quaternion (transforms3d.axangle2quat of θ/|θ|, |θ|)."""
    angle = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    if angle < 1e-300:
        return 1.0, 0.0, 0.0, 0.0
    s = math.sin(0.5 * angle) / angle
    return math.cos(0.5 * angle), t0 * s, t1 * s, t2 * s


@kernel
def qmult(w1, x1, y1, z1, w2, x2, y2, z2):
    return (
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 + y1 * w2 + z1 * x2 - x1 * z2,
        w1 * z2 + z1 * w2 + x1 * y2 - y1 * x2,
    )


@kernel
def dexp_inv(t0, t1, t2, w0, w1, w2, out, o):
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


@kernel
def xmotion(WB, i, src, so, dst, do):
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
def outward(WB, i, lam, src, so, add, ao, dst, do):
    """dst[do:do+6] = X_i src[so:so+6] + add[ao:ao+6], or ``add`` alone at a root (lam < 0):
    the outward recursion of velocities and accelerations (McMillan et al. 1996 eqs. 9, A2)."""
    if lam >= 0:
        xmotion(WB, i, src, so, dst, do)
        for a in range(6):
            dst[do + a] += add[ao + a]
    else:
        for a in range(6):
            dst[do + a] = add[ao + a]


@kernel
def xforce_add(WB, i, src, so, dst, do):
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
def add_congruence(WB, i, Ia, io, dst, do, S):
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


@kernel
def chol_inv(D, do, n, out, oo, S):
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
def mat2quat(R):
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
def rotate(S, o, x, xo, out, oo, add):
    """out[oo:oo+3] (=, or += with add) R x[xo:xo+3], R the row-major 3x3 at S[o:o+9]."""
    x0, x1, x2 = x[xo], x[xo + 1], x[xo + 2]
    for a in range(3):
        r = S[o + 3 * a] * x0 + S[o + 3 * a + 1] * x1 + S[o + 3 * a + 2] * x2
        out[oo + a] = out[oo + a] + r if add else r


@kernel
def advance_quat(q, o, dq, d, out):
    """out[o:o+4] = q[o:o+4] ⊗ exp(dq[d:d+3] / 2), renormalised (integrate.integrate)."""
    e0, e1, e2, e3 = quat_exp(dq[d], dq[d + 1], dq[d + 2])
    w, x, y, z = qmult(q[o], q[o + 1], q[o + 2], q[o + 3], e0, e1, e2, e3)
    nrm = math.sqrt(w * w + x * x + y * y + z * z)
    out[o], out[o + 1], out[o + 2], out[o + 3] = w / nrm, x / nrm, y / nrm, z / nrm


@kernel
def finite(x):
    for a in range(x.shape[0]):
        if not math.isfinite(x[a]):
            return False
    return True
