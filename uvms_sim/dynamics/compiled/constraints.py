"""Rigid connections: q̈ with the Udwadia-Kalaba correction (``constraints.constrained_aba``;
Nielsen et al. 2018 eq. 20), body Jacobians and the pseudo-inverse it needs."""

from __future__ import annotations

import math

from ..flat import IV, JNV, MIMIC, PARENT, S_COL, S_TMP, WC, WPW, WRW, WV
from .aba import _inverse_inertia, aba_pass
from .buffers import _connection_fields, _flat_part, _part, inlined, kernel
from .couplings import _coupling_rhs
from .crba import _crba, _dof_parents, _ltl, _ltl_solve, _ltl_solve_t, _s_column
from .kinematics import forward_pass
from .rotations import _mat2quat, _qmult
from .spatial import _outward, _xmotion


# inlined where it is called (numba IR): a call passing 19 arrays costs 100 ns, a quarter of a
# BlueROV2's derivative evaluation
@inlined
def _accel(BF, BI, TF, TI, CI, CF, KI, KF, KN, WB, S, CS, thrust, q, v, tau, f_ext, n, fluid, WT, ddq):
    """q̈: forward pass (in the fluid of one stage and the waves WT), ABA, and with rigid
    connections (rows of CI/CF) the Udwadia-Kalaba correction (``constraints.constrained_aba``).
    Joint couplings that ``flat.mimic_groups`` marked are held by the ABA itself, exactly: the
    correction then has nothing left to do (it would find the same q̈, the unique minimiser of
    Gauss's principle under the same rows)."""
    forward_pass(BF, BI, TF, TI, KI, KF, KN, WB, S, thrust, q, v, f_ext, n, fluid, WT)
    aba_pass(BF, BI, CI, CF, WB, S, q, v, tau, ddq)
    if CI.shape[0] and BI[CI[0, 1], MIMIC] < 0:  # rows the ABA has not held itself (flat.mimic_groups)
        couplings = _couplings_only(BI, CI)
        _constraint_rows(BF, BI, CI, CF, WB, S, CS, q, v, ddq.shape[0], couplings)
        if couplings:
            _udwadia_kalaba_couplings(BF, BI, WB, S, CS, CI.shape[0], ddq)
        else:
            _udwadia_kalaba(BF, BI, WB, S, CS, CI.shape[0], ddq)


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
            _s_column(BF, k, c, S, S_COL)
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
def _pose_error(WB, p, c, E, r, beta2, Rt, Rc, b, o):
    """b[o:o+6] -= β² [e_p; e_R] (constraints.pose_error): e_p = R_cᵀ (p_c - p_p - R_p r),
    e_R = 2 sign(w) vec(q_t⁻¹ ⊗ q_c) with R_t = R_p Eᵀ; R row-major at WRW, p at WPW."""
    for a in range(3):
        for bb in range(3):
            Rc[a, bb] = WB[c, WRW + 3 * a + bb]
            s = 0.0
            for kk in range(3):
                s += WB[p, WRW + 3 * a + kk] * E[bb, kk]
            Rt[a, bb] = s
    P, C = WB[p], WB[c]  # e_p = R_cᵀ d with d = p_c - p_p - R_p r (R_p row-major at WRW)
    d0 = C[WPW] - P[WPW] - (P[WRW] * r[0] + P[WRW + 1] * r[1] + P[WRW + 2] * r[2])
    d1 = C[WPW + 1] - P[WPW + 1] - (P[WRW + 3] * r[0] + P[WRW + 4] * r[1] + P[WRW + 5] * r[2])
    d2 = C[WPW + 2] - P[WPW + 2] - (P[WRW + 6] * r[0] + P[WRW + 7] * r[1] + P[WRW + 8] * r[2])
    for a in range(3):
        b[o + a] -= beta2 * (Rc[0, a] * d0 + Rc[1, a] * d1 + Rc[2, a] * d2)
    tw, tx, ty, tz = _mat2quat(Rt)
    cw, cx, cy, cz = _mat2quat(Rc)
    ew, ex, ey, ez = _qmult(tw, -tx, -ty, -tz, cw, cx, cy, cz)
    sg = -2.0 * beta2 if ew < 0.0 else 2.0 * beta2
    b[o + 3] -= sg * ex
    b[o + 4] -= sg * ey
    b[o + 5] -= sg * ez


@kernel
def _constraint_rows(BF, BI, CI, CF, WB, S, CS, q, v, nv, couplings):
    """Rows ``A = J_c - X J_p`` and ``b = X a⁰_p - a⁰_c - 2α ė - β² e`` of every connection
    (constraints.constraint_equations) into CS, laid out as ``flat.connection_fields``; CF
    rows: E (9, child_R_parent), r (3), α, β. A joint coupling (CI parent -1 - leader; CF:
    multiplier, offset, ..., α, β) fills the first of its six rows, ``e_f - m e_l``, and
    ``b = -2α ė - β² e``, and zeroes the other five. ``couplings``: ``_couplings_only``'s
    answer for CI, which the caller has asked once for both this and the correction."""
    nb, nc = BI.shape[0], CI.shape[0]
    F = _connection_fields(nb, nv, nc)
    a0, A, b = _part(CS, 0, F, 0), _part(CS, 0, F, 1), _flat_part(CS, 0, F, 2)
    Jp, Jc = _part(CS, 0, F, 3), _part(CS, 0, F, 4)
    Rt, Rc = _part(CS, 0, F, 10), _part(CS, 0, F, 11)
    if not couplings:  # a⁰ is for the connections' rows only (``_couplings_only`` says none)
        for i in range(nb):
            lam = BI[i, PARENT]
            _outward(WB, i, lam, a0[lam], 0, WB[i], WC, a0[i], 0)  # a⁰_i = X_i a⁰_λ + c_i
    for k in range(nc):
        p, c = CI[k, 0], CI[k, 1]
        if p < 0:  # a joint coupling
            lead, mult = -1 - p, CF[k, 0]
            for a in range(6):
                b[6 * k + a] = 0.0
                for col in range(nv):
                    A[6 * k + a, col] = 0.0
            A[6 * k, BI[c, IV]] = 1.0
            A[6 * k, BI[lead, IV]] -= mult
            b[6 * k] = _coupling_rhs(BI, CI, CF, k, q, v)
            continue
        E = CF[k, 0:9].reshape((3, 3))
        r = CF[k, 9:12]
        alpha, beta = CF[k, 12], CF[k, 13]
        _jacobian(BF, BI, WB, S, p, Jp)
        _jacobian(BF, BI, WB, S, c, Jc)
        # X = [[E, -E r~], [0, E]]: applied to the columns of J_p, to a⁰_p and to v_p
        for col in range(nv + 2):
            if col < nv:
                m0, m1, m2 = Jp[0, col], Jp[1, col], Jp[2, col]
                w0, w1, w2 = Jp[3, col], Jp[4, col], Jp[5, col]
            else:
                src = a0[p] if col == nv else WB[p, WV : WV + 6]
                m0, m1, m2, w0, w1, w2 = src[0], src[1], src[2], src[3], src[4], src[5]
            d0 = m0 - (r[1] * w2 - r[2] * w1)
            d1 = m1 - (r[2] * w0 - r[0] * w2)
            d2 = m2 - (r[0] * w1 - r[1] * w0)
            for a in range(3):
                lin = E[a, 0] * d0 + E[a, 1] * d1 + E[a, 2] * d2
                ang = E[a, 0] * w0 + E[a, 1] * w1 + E[a, 2] * w2
                if col < nv:
                    A[6 * k + a, col] = Jc[a, col] - lin
                    A[6 * k + 3 + a, col] = Jc[3 + a, col] - ang
                elif col == nv:
                    b[6 * k + a] = lin - a0[c, a]
                    b[6 * k + 3 + a] = ang - a0[c, 3 + a]
                else:  # ė = v_c - X v_p
                    b[6 * k + a] -= 2.0 * alpha * (WB[c, WV + a] - lin)
                    b[6 * k + 3 + a] -= 2.0 * alpha * (WB[c, WV + 3 + a] - ang)
        _pose_error(WB, p, c, E, r, beta * beta, Rt, Rc, b, 6 * k)


@inlined
def _residual_row(A, b, row, ddq, dst, k, res):
    """dst[k] = A[row] and res[k] = b[row] - A[row] q̈_u (a row kept for the correction; dst
    may be A itself with k <= row)."""
    s = b[row]
    for j in range(ddq.shape[0]):
        dst[k, j] = A[row, j]
        s -= A[row, j] * ddq[j]
    res[k] = s


@kernel
def _couplings_only(BI, CI):
    """Whether every row of CI is a joint coupling whose follower is in no other coupling and
    leads none: each row of A then has a column (its follower's) that no other row touches, so
    A has full row rank and A M⁻¹ Aᵀ is positive definite."""
    for k in range(CI.shape[0]):
        if CI[k, 0] >= 0:
            return False
        for kk in range(CI.shape[0]):
            if kk != k and (CI[kk, 1] == CI[k, 1] or -1 - CI[kk, 0] == CI[k, 1]):
                return False
    return True


@kernel
def _udwadia_kalaba_couplings(BF, BI, WB, S, CS, nc, ddq):
    """``_udwadia_kalaba`` for joint couplings only (``_couplings_only``): ddq <- q̈_u + Y (A Y)⁻¹
    (b - A q̈_u) with Y = M⁻¹ Aᵀ, a column per coupling from the ABA's own articulated
    quantities (``aba._inverse_inertia``), no joint-space inertia formed. With A of full row
    rank, L⁻¹ (A L⁻¹)⁺ = L⁻¹ (A L⁻¹)ᵀ (A M⁻¹ Aᵀ)⁻¹ = M⁻¹ Aᵀ (A M⁻¹ Aᵀ)⁻¹ for any M = Lᵀ L: the
    same correction as the general path, to rounding. The small system is solved by
    ``_pinv_solve`` (its cut-off squared: the singular values of A M⁻¹ Aᵀ are those of
    A L⁻¹ squared)."""
    nb, nv, m = BI.shape[0], ddq.shape[0], 6 * nc
    F = _connection_fields(nb, nv, nc)
    PB, A, b = _part(CS, 0, F, 0), _part(CS, 0, F, 1), _flat_part(CS, 0, F, 2)
    Y, res, V, corr = _part(CS, 0, F, 6), _flat_part(CS, 0, F, 7), _part(CS, 0, F, 8), _flat_part(CS, 0, F, 9)
    AB = _part(CS, 0, F, 13)
    rows = 0
    for row in range(m):  # the first row of each coupling (the other five are zero)
        if row % 6:
            continue
        _residual_row(A, b, row, ddq, A, rows, res)
        _inverse_inertia(BF, BI, WB, S, A[rows], Y[rows], PB, AB)
        rows += 1
    K = _flat_part(CS, 0, F, 5)[: rows * rows].reshape((rows, rows))
    for r in range(rows):
        for c in range(rows):
            s = 0.0
            for j in range(nv):
                s += A[r, j] * Y[c, j]
            K[r, c] = s
    _pinv_solve(K, V, res[:rows], corr, 1e-20)  # corr[:rows] = (A Y)⁻¹ res
    for r in range(rows):
        f = corr[r]
        for j in range(nv):
            ddq[j] += f * Y[r, j]


@kernel
def _udwadia_kalaba(BF, BI, WB, S, CS, nc, ddq):
    """ddq <- q̈_u + L⁻¹ (A L⁻¹)⁺ (b - A q̈_u) with M = Lᵀ L (constraints.udwadia_kalaba;
    Nielsen et al. 2018 eq. 20), for ddq = q̈_u and the rows A, b in CS; M by CRBA. The factor
    is the tree-sparse one (``crba._ltl``, Featherstone 2005) instead of the reference's
    Cholesky factor M = L' L'ᵀ: the correction minimises the same kinetic metric
    (q̈ - q̈_u)ᵀ M (q̈ - q̈_u) under A q̈ = b whichever square root of M is used, so the two agree
    to rounding, and the free objects of a scene (trees of their own) cost 6 DOFs each instead of
    entering an nv³ factorisation. Allocates nothing; the pseudo-inverse is ``_pinv_solve``'s."""
    nb, nv, m = BI.shape[0], ddq.shape[0], 6 * nc
    F = _connection_fields(nb, nv, nc)
    A, b, L = _part(CS, 0, F, 1), _flat_part(CS, 0, F, 2), _part(CS, 0, F, 5)
    G, res, V, corr = _part(CS, 0, F, 6), _flat_part(CS, 0, F, 7), _part(CS, 0, F, 8), _flat_part(CS, 0, F, 9)
    P = _flat_part(CS, 0, F, 12)
    _dof_parents(BI, P)
    _crba(BF, BI, WB, S, L)
    _ltl(L, P, nv)  # M = Lᵀ L in place
    # G = A L⁻¹ (each row g solves Lᵀ gᵀ = aᵀ), res = b - A q̈_u, for the
    # rows of A that are not zero (a joint coupling's rows beyond its first): a zero row of G
    # is never rotated by the SVD and adds nothing to its solution, so it is left out
    rows = 0
    for row in range(m):
        zero = True
        for j in range(nv):
            if A[row, j] != 0.0:
                zero = False
                break
        if zero:
            continue
        _residual_row(A, b, row, ddq, G, rows, res)
        _ltl_solve_t(L, P, G[rows])
        rows += 1
    _pinv_solve(G[:rows], V, res[:rows], corr, 1e-10)  # corr = G⁺ res (nv)
    _ltl_solve(L, P, corr)  # ddq += L⁻¹ corr
    for i in range(nv):
        ddq[i] += corr[i]


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
