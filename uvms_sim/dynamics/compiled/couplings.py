"""A joint coupling's acceleration-level row (``constraints.constraint_equations``): the
right-hand side that both the ABA's exact coupling (``aba._coupled_backward``) and the
Udwadia-Kalaba rows (``constraints._constraint_rows``) read."""

from __future__ import annotations

from ..flat import IQ, IV
from .buffers import inlined


@inlined
def _coupling_rhs(BI, CI, CF, k, q, v):
    """``b = -2α ė - β² e`` of the coupling in row k (CI: parent -1 - leader, the follower; CF:
    multiplier, offset, ..., α, β) with ``e = q_f - m q_l - o`` and ``ė = v_f - m v_l``: the
    Baumgarte stabilisation of ``q̈_f - m q̈_l = 0`` (Nielsen et al. 2018 eq. 20's row)."""
    lead, f = -1 - CI[k, 0], CI[k, 1]
    mult, alpha, beta = CF[k, 0], CF[k, 12], CF[k, 13]
    e = q[BI[f, IQ]] - mult * q[BI[lead, IQ]] - CF[k, 1]
    return -2.0 * alpha * (v[BI[f, IV]] - mult * v[BI[lead, IV]]) - beta * beta * e
