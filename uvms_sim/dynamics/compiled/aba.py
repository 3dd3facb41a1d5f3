"""The articulated-body algorithm with the added mass inside the articulated inertia
(``dynamics.aba``; McMillan et al. 1996 appendix A.3)."""

from __future__ import annotations

import math

from ..flat import (
    FOLDED,
    IH,
    IHI,
    IV,
    JNV,
    LEADS,
    MIMIC,
    PARENT,
    RIGID,
    S_AP,
    S_CL,
    S_CLI,
    S_F,
    S_IA,
    S_PA,
    S_RHS,
    S_UD,
    SAX,
    SID,
    SM,
    WA,
    WBIAS,
    WC,
    WDI,
    WIA,
    WPA,
    WU,
    WUU,
)
from .buffers import inlined, kernel
from .couplings import _coupling_rhs
from .spatial import _add_congruence, _outward, _xforce_add, _xmotion


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


@inlined
def _joint_acceleration(row, nv, u, uo, ap, ao, S, out, oo):
    """out[oo:oo+nv] = D⁻¹ (u - Uᵀ a') for the U, D⁻¹ of body ``row`` (WU, WDI), u at
    u[uo:] and a' = X a_λ + c at ap[ao:] (McMillan et al. 1996 appendix A.3); u is read whole
    before out is written (they may be the same)."""
    for c in range(nv):
        s = u[uo + c]
        for a in range(6):
            s -= row[WU + 6 * a + c] * ap[ao + a]
        S[S_RHS + c] = s
    for c in range(nv):
        s = 0.0
        for d in range(nv):
            s += row[WDI + 6 * c + d] * S[S_RHS + d]
        out[oo + c] = s


@inlined
def _coupled_backward(BF, BI, CI, CF, WB, S, q, v, tau, i):
    """The backward step of body i, a joint of a coupled group (``flat.mimic_groups``: a leader
    and its followers, 1-DOF siblings sharing one DOF). With q̈_k = m_k q̈_L + β_k (m_L = 1,
    β_L = 0; β_k the coupling's Baumgarte term) and ĉ_k = c_k + S_k β_k, the leader's joint
    equation is the virtual work of the group, Σ m_k S_kᵀ f_k = Σ m_k τ_k with
    f_k = Iᴬ_k (X_k a_λ + ĉ_k + S_k m_k q̈_L) + pᴬ_k, so
    ``q̈_L = D⁻¹ (ũ - Wᵀ a_λ)`` with ``W = Σ m_k X_kᵀ U_k`` (U_k = Iᴬ_k S_k, in the parent's axes),
    ``D = Σ m_k² S_kᵀ U_k`` and ``ũ = Σ m_k (τ_k - S_kᵀ pᴬ_k - U_kᵀ ĉ_k)``, and the parent takes
    ``Σ X_kᵀ Iᴬ_k X_k - W D⁻¹ Wᵀ`` and ``Σ X_kᵀ (pᴬ_k + Iᴬ_k ĉ_k) + W D⁻¹ ũ``: the ABA's own
    step (McMillan et al. 1996 appendix A.3) with the group's rank-one update in place of each
    joint's. That is the explicit constraint ``q̈ = G ÿ + g`` (Featherstone 2008 §3.2, eq. 3.20)
    embedded in the ABA, the group as one generalised joint (Chignoli et al. 2025): the same q̈
    as the Udwadia-Kalaba correction of the same rows, to rounding. Each member adds its terms
    into its leader's row (W at WU[0:6], D at WDI, ũ at WUU, zeroed by ``aba_pass``); the
    leader, last of its group in this pass, updates the parent. A follower keeps β_k at its WUU
    for the forward pass."""
    row = WB[i]
    lam = BI[i, PARENT]
    g = BI[i, MIMIC]
    if g >= 0:
        m = CF[g, 0]
        lead = WB[-1 - CI[g, 0]]
        beta = _coupling_rhs(BI, CI, CF, g, q, v)
        row[WUU] = beta
    else:
        m = 1.0
        lead = row
        beta = 0.0
    d = 0.0
    sp = 0.0
    for a in range(6):  # U = Iᴬ S (m U at S_F), ĉ = c + S β (at S_AP)
        s = 0.0
        for b in range(6):
            s += row[WIA + 6 * a + b] * BF[i, SM + b]
        S[S_F + a] = m * s
        S[S_AP + a] = row[WC + a] + BF[i, SM + a] * beta
        d += BF[i, SM + a] * s
        sp += BF[i, SM + a] * row[WPA + a]
    uc = 0.0
    for a in range(6):
        uc += S[S_F + a] * S[S_AP + a]
        s = row[WPA + a]
        for b in range(6):
            s += row[WIA + 6 * a + b] * S[S_AP + b]
        S[S_PA + a] = s
    lead[WDI] += m * m * d
    lead[WUU] += m * (tau[BI[i, IV]] - sp) - uc
    _xforce_add(WB, i, S, S_F, lead, WU)
    _add_congruence(WB, i, row, WIA, WB[lam], WIA, S)
    _xforce_add(WB, i, S, S_PA, WB[lam], WPA)
    if g < 0:  # the leader, last of its group: the rank-one update of the parent
        row[WDI] = 1.0 / row[WDI]
        dinv, uu = row[WDI], row[WUU]
        P = WB[lam]
        for a in range(6):
            wa = row[WU + a] * dinv
            P[WPA + a] += wa * uu
            for b in range(6):
                P[WIA + 6 * a + b] -= wa * row[WU + b]


# The joint enters the ABA only through its motion subspace S, read from the table (``flat.SM``,
# ``Joint.S``): these passes never branch on the joint's type, and nv = 0 (a fixed joint) is the
# general formula with empty sums (McMillan et al. 1996 appendix A.3, with S as a matrix).
@kernel
def aba_pass(BF, BI, CI, CF, WB, S, q, v, tau, ddq):
    """Backward and forward passes of the ABA (dynamics.aba) after ``forward_pass``. A FOLDED
    body passes only its bias on: its inertia is in its free root's constant, and c = 0 there.
    The joints of a coupled group (``flat.mimic_groups``; rows of CI, CF) move as one DOF
    (``_coupled_backward``); q and v give their couplings' Baumgarte terms."""
    nb = BI.shape[0]
    for i in range(nb):
        row = WB[i]
        for a in range(6):
            row[WPA + a] = row[WBIAS + a]
        for a in range(36):
            row[WIA + a] = BF[i, IH + a]
        if BI[i, LEADS]:  # the group's sums (``_coupled_backward``)
            for a in range(6):
                row[WU + a] = 0.0
            row[WDI] = 0.0
            row[WUU] = 0.0
    for i in range(nb - 1, -1, -1):
        row = WB[i]
        if BI[i, MIMIC] >= 0 or BI[i, LEADS]:
            _coupled_backward(BF, BI, CI, CF, WB, S, q, v, tau, i)
            continue
        nv = BI[i, JNV]
        k = BI[i, IV]
        # U = Iᴬ S, u = τ - Sᵀ pᴬ, D⁻¹ = (Sᵀ U)⁻¹ (from the table for a RIGID body)
        h = BI[i, SAX]
        if BI[i, SID]:
            for a in range(36):
                row[WU + a] = row[WIA + a]
            for a in range(6):
                row[WUU + a] = tau[k + a] - row[WPA + a]
        elif h >= 0:  # S is one axis x at rows h..h+2
            x0, x1, x2 = BF[i, SM + h], BF[i, SM + h + 1], BF[i, SM + h + 2]
            for a in range(6):
                b = WIA + 6 * a + h
                row[WU + 6 * a] = row[b] * x0 + row[b + 1] * x1 + row[b + 2] * x2
            row[WUU] = tau[k] - (x0 * row[WPA + h] + x1 * row[WPA + h + 1] + x2 * row[WPA + h + 2])
        else:
            for c in range(nv):
                o = SM + 6 * c
                s0, s1, s2 = BF[i, o], BF[i, o + 1], BF[i, o + 2]
                s3, s4, s5 = BF[i, o + 3], BF[i, o + 4], BF[i, o + 5]
                for a in range(6):
                    b = WIA + 6 * a
                    row[WU + 6 * a + c] = (
                        row[b] * s0 + row[b + 1] * s1 + row[b + 2] * s2
                        + row[b + 3] * s3 + row[b + 4] * s4 + row[b + 5] * s5
                    )  # fmt: skip
                row[WUU + c] = tau[k + c] - (
                    s0 * row[WPA] + s1 * row[WPA + 1] + s2 * row[WPA + 2]
                    + s3 * row[WPA + 3] + s4 * row[WPA + 4] + s5 * row[WPA + 5]
                )  # fmt: skip
        if BI[i, RIGID]:
            for a in range(6 * nv):  # nv rows of stride 6
                row[WDI + a] = BF[i, IHI + a]
        elif BI[i, SID]:
            _chol_inv(row, WIA, 6, row, WDI, S)
        elif h >= 0:
            x0, x1, x2 = BF[i, SM + h], BF[i, SM + h + 1], BF[i, SM + h + 2]
            row[WDI] = 1.0 / (x0 * row[WU + 6 * h] + x1 * row[WU + 6 * (h + 1)] + x2 * row[WU + 6 * (h + 2)])
        elif nv:
            for c in range(nv):
                for d in range(nv):
                    s = 0.0
                    for a in range(6):
                        s += BF[i, SM + 6 * c + a] * row[WU + 6 * a + d]
                    row[WDI + 6 * c + d] = s
            if nv == 1:
                row[WDI] = 1.0 / row[WDI]
            else:
                _chol_inv(row, WDI, nv, row, WDI, S)  # reads D whole before it writes D⁻¹
        lam = BI[i, PARENT]
        if lam < 0:
            continue
        if BI[i, FOLDED]:
            _xforce_add(WB, i, row, WPA, WB[lam], WPA)
            continue
        # Iᵃ = Iᴬ - U D⁻¹ Uᵀ, pᵃ = pᴬ + Iᵃ c + U D⁻¹ u (at S_IA, S_PA), into the parent through X_iᵀ
        if nv == 1:  # a rank-one update
            dinv, uu = row[WDI], row[WUU]
            for a in range(6):
                ua = row[WU + 6 * a] * dinv
                S[S_PA + a] = row[WPA + a] + ua * uu
                for b in range(6):
                    S[S_IA + 6 * a + b] = row[WIA + 6 * a + b] - ua * row[WU + 6 * b]
        else:
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
        c0, c1, c2, c3, c4, c5 = row[WC], row[WC + 1], row[WC + 2], row[WC + 3], row[WC + 4], row[WC + 5]
        for a in range(6):
            b = S_IA + 6 * a
            S[S_PA + a] += (
                S[b] * c0 + S[b + 1] * c1 + S[b + 2] * c2 + S[b + 3] * c3 + S[b + 4] * c4 + S[b + 5] * c5
            )
        _add_congruence(WB, i, S, S_IA, WB[lam], WIA, S)
        _xforce_add(WB, i, S, S_PA, WB[lam], WPA)
    # q̈_i = D⁻¹ (u - Uᵀ a'), a_i = a' + S q̈_i with a' = X_i a_λ + c_i
    for i in range(nb):
        row = WB[i]
        lam = BI[i, PARENT]
        _outward(WB, i, lam, WB[lam], WA, row, WC, S, S_AP)
        nv = BI[i, JNV]
        k = BI[i, IV]
        g = BI[i, MIMIC]
        if g >= 0:  # a follower: q̈ = m q̈_L + β
            ddq[k] = CF[g, 0] * ddq[BI[-1 - CI[g, 0], IV]] + row[WUU]
        elif BI[i, LEADS]:  # the group's DOF: q̈_L = D⁻¹ (ũ - Wᵀ a_λ), W in the parent's axes
            s = row[WUU]
            for a in range(6):
                s -= row[WU + a] * WB[lam, WA + a]
            ddq[k] = row[WDI] * s
        else:
            _joint_acceleration(row, nv, row, WUU, S, S_AP, S, ddq, k)
        h = BI[i, SAX]
        if BI[i, SID]:
            for a in range(6):
                S[S_AP + a] += ddq[k + a]
        elif h >= 0:
            for a in range(3):
                S[S_AP + h + a] += BF[i, SM + h + a] * ddq[k]
        else:
            for c in range(nv):
                x = ddq[k + c]
                for a in range(6):
                    S[S_AP + a] += BF[i, SM + 6 * c + a] * x
        for a in range(6):
            row[WA + a] = S[S_AP + a]


@kernel
def _inverse_inertia(BF, BI, WB, S, x, y, PB, AB):
    """y = M⁻¹ x for joint forces x, from the U and D⁻¹ of every body that the last
    ``aba_pass`` left in WB (Featherstone 2008 §7.3: the articulated inertias depend on q alone,
    so M⁻¹ x is the ABA's bias and acceleration passes again with no velocity, no gravity and
    no external force: ``pᵃ = pᴬ + U D⁻¹ u``, ``u = x - Sᵀ pᴬ``, then ``q̈ = D⁻¹ (u - Uᵀ X a_λ)``).
    PB, AB (nb x 6): the bodies' forces and accelerations of this problem. O(nb) a call. Only
    after an ``aba_pass`` that held no coupled group (``flat.mimic_groups`` marked none, which
    is when ``_accel`` calls it): a group's leader keeps the group's W, D⁻¹ and ũ in those
    fields instead, in its parent's axes, and its followers none."""
    nb = BI.shape[0]
    for i in range(nb):
        for a in range(6):
            PB[i, a] = 0.0
    for i in range(nb - 1, -1, -1):
        row = WB[i]
        nv = BI[i, JNV]
        k = BI[i, IV]
        for c in range(nv):  # u = x - Sᵀ pᴬ, kept in y until the forward pass
            s = x[k + c]
            for a in range(6):
                s -= BF[i, SM + 6 * c + a] * PB[i, a]
            y[k + c] = s
        lam = BI[i, PARENT]
        if lam < 0:
            continue
        for c in range(nv):  # pᵃ = pᴬ + U D⁻¹ u
            s = 0.0
            for d in range(nv):
                s += row[WDI + 6 * c + d] * y[k + d]
            S[S_RHS + c] = s
        for a in range(6):
            s = 0.0
            for c in range(nv):
                s += row[WU + 6 * a + c] * S[S_RHS + c]
            PB[i, a] += s
        _xforce_add(WB, i, PB[i], 0, PB[lam], 0)
    for i in range(nb):
        row = WB[i]
        lam = BI[i, PARENT]
        if lam >= 0:
            _xmotion(WB, i, AB[lam], 0, AB[i], 0)
        else:
            for a in range(6):
                AB[i, a] = 0.0
        nv = BI[i, JNV]
        k = BI[i, IV]
        _joint_acceleration(row, nv, y, k, AB[i], 0, S, y, k)
        for c in range(nv):
            for a in range(6):
                AB[i, a] += BF[i, SM + 6 * c + a] * y[k + c]
