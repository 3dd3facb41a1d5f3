"""Spatial transforms of body i used through their structure, never as 6x6 matrices (E at
``WB[i, WE:]``, r at ``WB[i, WR:]``): ``X m = [E(m_v - r x m_ω); E m_ω]``,
``Xᵀ f = [Eᵀf; Eᵀn + r x Eᵀf]`` (McMillan et al. 1996 eqs. A5, A8), the congruence
``Xᵀ I X = T(r)ᵀ diag(E,E)ᵀ I diag(E,E) T(r)`` with ``T(r) = [[1, -r~], [0, 1]]`` (three 3x3
congruences and skew products instead of two 6x6 products), and the force cross product."""

from __future__ import annotations

from ..flat import S_J, S_K, S_L, S_TT, WE, WR
from .buffers import kernel


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
