"""Contact wrenches of the seabed and anchor points (``dynamics.contact.Contacts.wrenches``)."""

from __future__ import annotations

import math

from ..flat import WBIAS, WPW, WRW, WV
from .buffers import kernel


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
