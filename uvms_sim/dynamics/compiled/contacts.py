"""Contact wrenches (``dynamics.contact.Contacts.wrenches``): seabed and anchor points, and the
points of touching pairs with their stick-slip friction."""

from __future__ import annotations

import math

from ..flat import WBIAS, WPW, WRW, WV
from .buffers import inlined, kernel


@inlined
def _point(WB, b, r0, r1, r2):
    """World position and velocity of the point r (body axes) of body b."""
    w0, w1, w2 = WB[b, WV + 3], WB[b, WV + 4], WB[b, WV + 5]
    u0 = WB[b, WV] + (w1 * r2 - w2 * r1)
    u1 = WB[b, WV + 1] + (w2 * r0 - w0 * r2)
    u2 = WB[b, WV + 2] + (w0 * r1 - w1 * r0)
    x0 = WB[b, WPW] + WB[b, WRW + 0] * r0 + WB[b, WRW + 1] * r1 + WB[b, WRW + 2] * r2
    x1 = WB[b, WPW + 1] + WB[b, WRW + 3] * r0 + WB[b, WRW + 4] * r1 + WB[b, WRW + 5] * r2
    x2 = WB[b, WPW + 2] + WB[b, WRW + 6] * r0 + WB[b, WRW + 7] * r1 + WB[b, WRW + 8] * r2
    xd0 = WB[b, WRW + 0] * u0 + WB[b, WRW + 1] * u1 + WB[b, WRW + 2] * u2
    xd1 = WB[b, WRW + 3] * u0 + WB[b, WRW + 4] * u1 + WB[b, WRW + 5] * u2
    xd2 = WB[b, WRW + 6] * u0 + WB[b, WRW + 7] * u1 + WB[b, WRW + 8] * u2
    return x0, x1, x2, xd0, xd1, xd2


@inlined
def _push(WB, b, r0, r1, r2, F0, F1, F2):
    """bias -= the wrench of the world force F at the point r (body axes) of body b."""
    f0 = WB[b, WRW] * F0 + WB[b, WRW + 3] * F1 + WB[b, WRW + 6] * F2
    f1 = WB[b, WRW + 1] * F0 + WB[b, WRW + 4] * F1 + WB[b, WRW + 7] * F2
    f2 = WB[b, WRW + 2] * F0 + WB[b, WRW + 5] * F1 + WB[b, WRW + 8] * F2
    WB[b, WBIAS] -= f0
    WB[b, WBIAS + 1] -= f1
    WB[b, WBIAS + 2] -= f2
    WB[b, WBIAS + 3] -= r1 * f2 - r2 * f1
    WB[b, WBIAS + 4] -= r2 * f0 - r0 * f2
    WB[b, WBIAS + 5] -= r0 * f1 - r1 * f0


@inlined
def _pair(KI, KF, KN, WB, k):
    """A point of a touching pair (``dynamics.contact`` module doc): A's material point r_A
    (KF 0-2, A's axes) against B's r_B (KF 3-5; B's axes, world for the scene: KI[k, 2] < 0),
    normal from B to A (KF 10-12, same axes as r_B). Normal force max(0, k d + c ḋ) on the
    penetration d; tangential spring k_t on the tangential offset of the two points, at most
    μ F_n: beyond it B's point is moved (slip), and with no normal force it follows A's."""
    a, b = KI[k, 0], KI[k, 2]
    xa0, xa1, xa2, ua0, ua1, ua2 = _point(WB, a, KF[k, 0], KF[k, 1], KF[k, 2])
    if b >= 0:
        xb0, xb1, xb2, ub0, ub1, ub2 = _point(WB, b, KF[k, 3], KF[k, 4], KF[k, 5])
        m0, m1, m2 = KF[k, 10], KF[k, 11], KF[k, 12]
        n0 = WB[b, WRW + 0] * m0 + WB[b, WRW + 1] * m1 + WB[b, WRW + 2] * m2
        n1 = WB[b, WRW + 3] * m0 + WB[b, WRW + 4] * m1 + WB[b, WRW + 5] * m2
        n2 = WB[b, WRW + 6] * m0 + WB[b, WRW + 7] * m1 + WB[b, WRW + 8] * m2
    else:
        xb0, xb1, xb2, ub0, ub1, ub2 = KF[k, 3], KF[k, 4], KF[k, 5], 0.0, 0.0, 0.0
        n0, n1, n2 = KF[k, 10], KF[k, 11], KF[k, 12]
    d0, d1, d2 = xa0 - xb0, xa1 - xb1, xa2 - xb2
    gap = d0 * n0 + d1 * n1 + d2 * n2
    rate = (ua0 - ub0) * n0 + (ua1 - ub1) * n1 + (ua2 - ub2) * n2
    fn = max(0.0, -KF[k, 6] * gap - KF[k, 7] * rate) if gap < 0.0 else 0.0
    KN[k] = fn
    s0, s1, s2 = d0 - gap * n0, d1 - gap * n1, d2 - gap * n2  # tangential offset of A from B
    kt = KF[k, 9]
    ts = kt * math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    cap = KF[k, 8] * fn
    # the damper of a sticking point: when spring and damper stay within the cone together
    ct = KF[k, 13]
    w0, w1, w2 = ua0 - ub0 - rate * n0, ua1 - ub1 - rate * n1, ua2 - ub2 - rate * n2
    e0, e1, e2 = kt * s0 + ct * w0, kt * s1 + ct * w1, kt * s2 + ct * w2
    if ts > cap or e0 * e0 + e1 * e1 + e2 * e2 > cap * cap:
        e0, e1, e2 = kt * s0, kt * s1, kt * s2
    if ts > cap:  # slip (or no contact): B's point moves along so that the spring pulls μ F_n
        keep = cap / ts
        m0, m1, m2 = (1.0 - keep) * s0, (1.0 - keep) * s1, (1.0 - keep) * s2
        if b >= 0:
            KF[k, 3] += WB[b, WRW + 0] * m0 + WB[b, WRW + 3] * m1 + WB[b, WRW + 6] * m2
            KF[k, 4] += WB[b, WRW + 1] * m0 + WB[b, WRW + 4] * m1 + WB[b, WRW + 7] * m2
            KF[k, 5] += WB[b, WRW + 2] * m0 + WB[b, WRW + 5] * m1 + WB[b, WRW + 8] * m2
        else:
            KF[k, 3] += m0
            KF[k, 4] += m1
            KF[k, 5] += m2
        e0, e1, e2 = keep * e0, keep * e1, keep * e2
    if fn == 0.0:
        return
    F0, F1, F2 = fn * n0 - e0, fn * n1 - e1, fn * n2 - e2  # on A
    _push(WB, a, KF[k, 0], KF[k, 1], KF[k, 2], F0, F1, F2)
    if b >= 0:
        _push(WB, b, KF[k, 3], KF[k, 4], KF[k, 5], -F0, -F1, -F2)


@kernel
def _contacts(KI, KF, KN, WB):
    """bias -= contact wrenches (dynamics.contact.Contacts.wrenches): per row (KI: body, kind
    -1 unused / 0 seabed / 1 anchor / 2 a touching pair's point (``_pair``), other body; KF: r
    (3), seabed depth or anchor point (3), k, c, μ, v_s) the spring-damper normal force that
    never pulls with regularised Coulomb friction, or the anchor spring-damper; forces act at
    the point, KN gets the normal forces."""
    for k in range(KI.shape[0]):
        kind = KI[k, 1]
        if kind < 0:
            KN[k] = 0.0
            continue
        if kind == 2:
            _pair(KI, KF, KN, WB, k)
            continue
        b = KI[k, 0]
        r0, r1, r2 = KF[k, 0], KF[k, 1], KF[k, 2]
        x0, x1, x2, xd0, xd1, xd2 = _point(WB, b, r0, r1, r2)
        stiff, damp = KF[k, 6], KF[k, 7]
        if kind == 0:
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
        _push(WB, b, r0, r1, r2, F0, F1, F2)
