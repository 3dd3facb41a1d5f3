"""Joint position limits as inelastic impacts (``Simulator._enforce_limits``): a joint past its
limit is put back on it and, moving outwards, stopped by the impulse on that joint alone."""

from __future__ import annotations

import math

from ..flat import IQ, IV, LF_LOWER, LF_UPPER, LI_HIT, LI_IQ, LI_IV
from .buffers import _flat_part, _limit_fields, _part, kernel
from .crba import _cholesky, _crba, _dof_parents, _ltl, _ltl_solve, _ltl_solve_t
from .kinematics import placements


@kernel
def _crossing(LF, LI, q0, q1):
    """Whether the step from q0 to q1 took a joint across one of its limits
    (``Simulator._limit_crossing``'s test: a limit strictly between the two)."""
    for k in range(LI.shape[0]):
        iq = LI[k, LI_IQ]
        for b in (LF[k, LF_LOWER], LF[k, LF_UPPER]):
            if math.isfinite(b) and (q1[iq] - b) * (q0[iq] - b) < 0.0:
                return True
    return False


@kernel
def _enforce_limits(BF, BI, LF, LI, X, q, v, CI, CF):
    """``Simulator._enforce_limits`` (no joint touching): q clamped to the limits, and for the
    joints that hit moving outwards ``Δv = -M⁻¹ S (Sᵀ M⁻¹ S)⁻¹ Sᵀ v`` with M by CRBA at the
    clamped q (in the scratch X, ``flat.limit_fields``), its factor for the columns of M⁻¹ (the
    tree-sparse LTL of Featherstone 2005 when the couplings keep M's tree sparsity,
    ``_tree_sparse``, else Cholesky) and Gaussian elimination with partial pivoting for the
    impulse (as LAPACK's gesv, which ``numpy.linalg.solve`` calls). With joint couplings (CI
    rows with parent -1 - leader), M is the reduced ``Tᵀ M T`` of the coupled joints
    (``Simulator._coupled_inverse_columns``): the impulse then stops a leader with its
    followers. Returns the number of joints that hit."""
    nl, nb, nv = LI.shape[0], BI.shape[0], v.shape[0]
    hits = 0
    for k in range(nl):
        iq, iv = LI[k, LI_IQ], LI[k, LI_IV]
        LI[k, LI_HIT] = 0
        lo, hi = LF[k, LF_LOWER], LF[k, LF_UPPER]
        was = q[iq]
        if q[iq] > hi:
            q[iq] = hi
            if v[iv] > 0.0:
                LI[k, LI_HIT] = 1
                hits += 1
        elif q[iq] < lo:
            q[iq] = lo
            if v[iv] < 0.0:
                LI[k, LI_HIT] = 1
                hits += 1
        if q[iq] != was:  # a leader put back on its limit moves its followers with it
            for kc in range(CI.shape[0]):
                if CI[kc, 0] < 0 and BI[-1 - CI[kc, 0], IQ] == iq:
                    q[BI[CI[kc, 1], IQ]] += CF[kc, 0] * (q[iq] - was)
    if hits == 0:
        return 0
    F = _limit_fields(nb, nv, nl)
    WB, S, L = _part(X, 0, F, 0), _flat_part(X, 0, F, 1), _part(X, 0, F, 2)
    C, A, x = _part(X, 0, F, 3), _part(X, 0, F, 4), _flat_part(X, 0, F, 5)
    P = _flat_part(X, 0, F, 6)
    placements(BF, BI, WB, S, q)
    _crba(BF, BI, WB, S, L)
    coupled = _reduce_couplings(BI, CI, CF, L)
    _dof_parents(BI, P)
    sparse = _tree_sparse(BI, CI, P, nv)
    if sparse:
        _ltl(L, P, nv)  # M = Lᵀ L in place, with the tree's sparsity
    else:
        _cholesky(L, nv)  # M = L Lᵀ in place
    c = 0
    for k in range(nl):  # column c of C: M⁻¹ e_iv for the c-th joint that hit
        if not LI[k, LI_HIT]:
            continue
        iv = LI[k, LI_IV]
        if sparse:  # M⁻¹ e_iv = L⁻¹ L⁻ᵀ e_iv
            for i in range(nv):
                C[i, c] = 1.0 if i == iv else 0.0
            _ltl_solve_t(L, P, C[:, c])
            _ltl_solve(L, P, C[:, c])
            c += 1
            continue
        for i in range(nv):  # L y = e_iv
            s = 1.0 if i == iv else 0.0
            for kk in range(i):
                s -= L[i, kk] * C[kk, c]
            C[i, c] = s / L[i, i]
        for i in range(nv - 1, -1, -1):  # Lᵀ z = y
            s = C[i, c]
            for kk in range(i + 1, nv):
                s -= L[kk, i] * C[kk, c]
            C[i, c] = s / L[i, i]
        c += 1
    c = 0
    for k in range(nl):  # A = (M⁻¹) of the joints that hit, x = their velocities
        if not LI[k, LI_HIT]:
            continue
        d = 0
        for kk in range(nl):
            if LI[kk, LI_HIT]:
                A[c, d] = C[LI[k, LI_IV], d]
                d += 1
        x[c] = v[LI[k, LI_IV]]
        c += 1
    for j in range(hits):  # A x = v: elimination with partial pivoting
        p = j
        for i in range(j + 1, hits):
            if abs(A[i, j]) > abs(A[p, j]):
                p = i
        if p != j:
            for kk in range(hits):
                A[j, kk], A[p, kk] = A[p, kk], A[j, kk]
            x[j], x[p] = x[p], x[j]
        for i in range(j + 1, hits):
            f = A[i, j] / A[j, j]
            for kk in range(j, hits):
                A[i, kk] -= f * A[j, kk]
            x[i] -= f * x[j]
    for j in range(hits - 1, -1, -1):
        s = x[j]
        for kk in range(j + 1, hits):
            s -= A[j, kk] * x[kk]
        x[j] = s / A[j, j]
    for i in range(nv):  # v -= M⁻¹ S impulse
        s = 0.0
        for c in range(hits):
            s += C[i, c] * x[c]
        v[i] -= s
    if coupled:  # the followers' change is their multiplier times their leader's (Δv = T Δz)
        for k in range(CI.shape[0]):
            if CI[k, 0] < 0:
                lv, fv = BI[-1 - CI[k, 0], IV], BI[CI[k, 1], IV]
                s = 0.0
                for c in range(hits):
                    s += C[lv, c] * x[c]
                v[fv] -= CF[k, 0] * s
    return hits


@kernel
def _reduce_couplings(BI, CI, CF, M):
    """M <- Tᵀ M T for the joint couplings (CI rows with parent -1 - leader; CF[k, 0] the
    multiplier), T = I + Σ m e_f e_lᵀ, the followers' rows and columns then replaced by the
    identity's (they are not coordinates of the reduced system). Returns whether any."""
    nv, nc = M.shape[0], CI.shape[0]
    any_coupling = False
    for k in range(nc):
        if CI[k, 0] >= 0:
            continue
        any_coupling = True
        lv, fv, m = BI[-1 - CI[k, 0], IV], BI[CI[k, 1], IV], CF[k, 0]
        for i in range(nv):  # M T: column l += m column f
            M[i, lv] += m * M[i, fv]
        for j in range(nv):  # Tᵀ (M T): row l += m row f
            M[lv, j] += m * M[fv, j]
    for k in range(nc):
        if CI[k, 0] < 0:
            fv = BI[CI[k, 1], IV]
            for j in range(nv):
                M[fv, j] = 0.0
                M[j, fv] = 0.0
            M[fv, fv] = 1.0
    return any_coupling


@kernel
def _tree_sparse(BI, CI, P, nv):
    """Whether M reduced by the joint couplings (``_reduce_couplings``) keeps the sparsity of
    the tree, so that ``crba._ltl`` factorises it: every follower a leaf DOF that leads no
    other coupling and is in no other as a follower, whose ancestors are all its leader, the
    leader's ancestors or descendants (the fingers of a gripper mimicking a sibling). The
    leader's row and column then only gain entries that the tree already has."""
    for k in range(CI.shape[0]):
        if CI[k, 0] >= 0:
            continue
        lv, fv = BI[-1 - CI[k, 0], IV], BI[CI[k, 1], IV]
        for r in range(nv):
            if int(P[r]) == fv:
                return False  # the follower has descendants
        for kk in range(CI.shape[0]):
            if CI[kk, 0] < 0 and BI[-1 - CI[kk, 0], IV] == fv:
                return False  # the follower leads another coupling
            if kk != k and CI[kk, 0] < 0 and CI[kk, 1] == CI[k, 1]:
                return False  # the follower is in two couplings (their rows would meet)
        j = int(P[fv])
        while j >= 0:
            if j != lv and not _above(P, j, lv) and not _above(P, lv, j):
                return False
            j = int(P[j])
    return True


@kernel
def _above(P, a, b):
    """Whether DOF a is an ancestor of DOF b."""
    j = int(P[b])
    while j >= 0:
        if j == a:
            return True
        j = int(P[j])
    return False
