"""The joint-space inertia with added mass (``model.crba``) and its factorisations,
allocation-free."""

from __future__ import annotations

import math

from ..flat import IH, IV, JNV, PARENT, S_COL, S_F, S_TMP, SM, WIC
from .buffers import kernel
from .spatial import _add_congruence, _xforce_add


@kernel
def _s_column(BF, i, k, out, o):
    """Column k of joint i's motion subspace S (child coordinates) into out[o:o+6]."""
    for a in range(6):
        out[o + a] = BF[i, SM + 6 * k + a]


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
            _s_column(BF, i, k, S, S_COL)
            for a in range(6):
                s = 0.0
                for b in range(6):
                    s += WB[i, WIC + 6 * a + b] * S[S_COL + b]
                S[S_F + a] = s
            j = i
            while True:
                nvj = BI[j, JNV]
                for kk in range(nvj):
                    _s_column(BF, j, kk, S, S_COL)
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
def _cholesky(L, nv):
    """M = L Lᵀ in place over the first nv rows and columns (the lower triangle; a matrix that
    is not positive definite gives NaN, which a step reports as a non-finite state)."""
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


@kernel
def _dof_parents(BI, P):
    """P[r] = the DOF above DOF r in the tree (-1 for a root's first), as a float: the previous
    DOF of the same joint, else the last DOF of the nearest ancestor with one: the parent array
    λ of the DOFs (λ(r) < r) of Featherstone (2005)."""
    for i in range(BI.shape[0]):
        v0 = BI[i, IV]
        for k in range(BI[i, JNV]):
            if k > 0:
                P[v0 + k] = v0 + k - 1
                continue
            j = BI[i, PARENT]
            while j >= 0 and BI[j, JNV] == 0:
                j = BI[j, PARENT]
            P[v0] = BI[j, IV] + BI[j, JNV] - 1 if j >= 0 else -1


@kernel
def _ltl(L, P, nv):
    """M = Lᵀ L in place, the LTL factorisation of Featherstone (2005): L lower triangular
    with the sparsity of the tree (L[i, j] non-zero only for j
    an ancestor DOF of i, along P from ``_dof_parents``), so no fill-in and O(nv d²) work for
    trees of depth d, against nv³/6 for ``_cholesky``. Only the tree's entries are read and
    written; a matrix that is not positive definite gives NaN."""
    for k in range(nv - 1, -1, -1):
        d = math.sqrt(L[k, k])
        L[k, k] = d
        i = int(P[k])
        while i >= 0:
            L[k, i] /= d
            i = int(P[i])
        i = int(P[k])
        while i >= 0:
            lki = L[k, i]
            j = i
            while j >= 0:
                L[i, j] -= lki * L[k, j]
                j = int(P[j])
            i = int(P[i])


@kernel
def _ltl_solve_t(L, P, x):
    """x <- L⁻ᵀ x for the factor of ``_ltl`` (Lᵀ y = x, from the leaves up, in place)."""
    for i in range(x.shape[0] - 1, -1, -1):
        y = x[i] / L[i, i]
        x[i] = y
        if y != 0.0:
            j = int(P[i])
            while j >= 0:
                x[j] -= L[i, j] * y
                j = int(P[j])


@kernel
def _ltl_solve(L, P, x):
    """x <- L⁻¹ x for the factor of ``_ltl`` (L z = x, from the roots down, in place)."""
    for i in range(x.shape[0]):
        s = x[i]
        j = int(P[i])
        while j >= 0:
            s -= L[i, j] * x[j]
            j = int(P[j])
        x[i] = s / L[i, i]
