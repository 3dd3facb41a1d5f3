"""Joint position limits as inelastic impacts (``Simulator._enforce_limits``): a joint past its
limit is put back on it and, moving outwards, stopped by the impulse on that joint alone."""

from __future__ import annotations

import math

from ..flat import LF_LOWER, LF_UPPER, LI_HIT, LI_IQ, LI_IV
from .buffers import _flat_part, _limit_fields, _part, kernel
from .crba import _cholesky, _crba
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
def _enforce_limits(BF, BI, LF, LI, X, q, v):
    """``Simulator._enforce_limits`` (no joint touching): q clamped to the limits, and for the
    joints that hit moving outwards ``Δv = -M⁻¹ S (Sᵀ M⁻¹ S)⁻¹ Sᵀ v`` with M by CRBA at the
    clamped q (in the scratch X, ``flat.limit_fields``), its Cholesky factor for the columns of
    M⁻¹ and Gaussian elimination with partial pivoting for the impulse (as LAPACK's gesv, which
    ``numpy.linalg.solve`` calls). Returns the number of joints that hit."""
    nl, nb, nv = LI.shape[0], BI.shape[0], v.shape[0]
    hits = 0
    for k in range(nl):
        iq, iv = LI[k, LI_IQ], LI[k, LI_IV]
        LI[k, LI_HIT] = 0
        lo, hi = LF[k, LF_LOWER], LF[k, LF_UPPER]
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
    if hits == 0:
        return 0
    F = _limit_fields(nb, nv, nl)
    WB, S, L = _part(X, 0, F, 0), _flat_part(X, 0, F, 1), _part(X, 0, F, 2)
    C, A, x = _part(X, 0, F, 3), _part(X, 0, F, 4), _flat_part(X, 0, F, 5)
    placements(BF, BI, WB, S, q)
    _crba(BF, BI, WB, S, L)
    _cholesky(L, nv)  # M = L Lᵀ in place
    c = 0
    for k in range(nl):  # column c of C: M⁻¹ e_iv for the c-th joint that hit
        if not LI[k, LI_HIT]:
            continue
        iv = LI[k, LI_IV]
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
    return hits
