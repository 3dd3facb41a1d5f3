"""Thruster wrenches at the shaft speeds and each thruster's advance speed
(``actuators.bank.ThrusterBank.wrenches``; Nielsen et al. 2018 eq. 12)."""

from __future__ import annotations

from ..flat import TARM, TDIR, TMAX, TMIN, TNF, TNR, TNU, TPOS, WBIAS, WVR
from .buffers import kernel


@kernel
def _thrust(TF, TI, WB, thrust, n):
    """bias -= thruster wrenches at shaft speeds n (ThrusterBank.wrenches, Nielsen et al. 2018 eq. 12)."""
    for k in range(TI.shape[0]):
        b = TI[k]
        p0, p1, p2 = TF[k, TPOS], TF[k, TPOS + 1], TF[k, TPOS + 2]
        w0, w1, w2 = WB[b, WVR + 3], WB[b, WVR + 4], WB[b, WVR + 5]
        u0 = WB[b, WVR] + (w1 * p2 - w2 * p1)
        u1 = WB[b, WVR + 1] + (w2 * p0 - w0 * p2)
        u2 = WB[b, WVR + 2] + (w0 * p1 - w1 * p0)
        ua = u0 * TF[k, TDIR] + u1 * TF[k, TDIR + 1] + u2 * TF[k, TDIR + 2]
        nk = n[k]
        Tnn = TF[k, TNF] if nk >= 0.0 else TF[k, TNR]
        T = Tnn * abs(nk) * nk + TF[k, TNU] * abs(nk) * ua
        T = min(max(T, TF[k, TMIN]), TF[k, TMAX])
        thrust[k] = T
        for a in range(3):
            WB[b, WBIAS + a] -= T * TF[k, TDIR + a]
            WB[b, WBIAS + 3 + a] -= T * TF[k, TARM + a]
