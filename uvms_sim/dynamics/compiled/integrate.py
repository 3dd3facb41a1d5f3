"""The Runge-Kutta-Munthe-Kaas and semi-implicit Euler steps (``dynamics.integrate``): q ⊕ dq and
the tangent rates of the quaternion joints."""

from __future__ import annotations

import math

from ..flat import FREE, IQ, IV, JNV, JTYPE, S_R, SPHERICAL
from .buffers import _carve, kernel
from .constraints import _accel
from .rotations import _advance_quat, _dexp_inv, _quat2mat, _quat_exp, _rotate


@kernel
def integrate(BI, S, q, dq, out):
    """out = q ⊕ dq (integrate.integrate)."""
    for a in range(q.shape[0]):
        out[a] = q[a]
    for i in range(BI.shape[0]):
        jt = BI[i, JTYPE]
        if BI[i, JNV] == 0:
            continue
        iq, iv = BI[i, IQ], BI[i, IV]
        if jt == FREE:
            _quat2mat(q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6], S, S_R)
            _rotate(S, S_R, dq, iv, out, iq, True)
            _advance_quat(q, iq + 3, dq, iv + 3, out)
        elif jt == SPHERICAL:
            _advance_quat(q, iq, dq, iv, out)
        else:
            out[iq] += dq[iv]


@kernel
def _tangent_rate(BI, S, theta, v, out):
    """Rate of the tangent coordinates about the stage-0 point (integrate._tangent_rate)."""
    for a in range(v.shape[0]):
        out[a] = v[a]
    for i in range(BI.shape[0]):
        jt = BI[i, JTYPE]
        iv = BI[i, IV]
        if jt == FREE:
            t0, t1, t2 = theta[iv + 3], theta[iv + 4], theta[iv + 5]
            if t0 != 0.0 or t1 != 0.0 or t2 != 0.0:
                e0, e1, e2, e3 = _quat_exp(t0, t1, t2)
                _quat2mat(e0, e1, e2, e3, S, S_R)
                _rotate(S, S_R, v, iv, out, iv, False)
            _dexp_inv(t0, t1, t2, v[iv + 3], v[iv + 4], v[iv + 5], out, iv + 3)
        elif jt == SPHERICAL:
            _dexp_inv(theta[iv], theta[iv + 1], theta[iv + 2], v[iv], v[iv + 1], v[iv + 2], out, iv)


@kernel
def _finite(x):
    for a in range(x.shape[0]):
        if not math.isfinite(x[a]):
            return False
    return True


@kernel
def _step(BF, BI, TF, TI, CI, CF, KI, KF, KN, W, method, q, v, tau, f_ext, n, fluid, WT, h, q_out, v_out):
    """One RKMK4 step (method 0, integrate.step_rk4) or semi-implicit Euler step (method 1);
    fluid[s] = (current, acceleration, gravity, (surface, has surface, time)) at t, t+h/2, t+h, WT
    the wave components (``flat.wave_table``). False on a non-finite value
    (q_out, v_out then hold garbage)."""
    nv = v.shape[0]
    WB, WQ, WV, thrust, S, CS = _carve(W, BI.shape[0], q.shape[0], nv, TI.shape[0])
    th = WV[12]
    if method == 1:
        acc = WV[4]
        _accel(BF, BI, TF, TI, CI, CF, KI, KF, KN, WB, S, CS, thrust, q, v, tau, f_ext, n, fluid[0], WT, acc)
        if not _finite(acc):
            return False
        for a in range(nv):
            v_out[a] = v[a] + h * acc[a]
            th[a] = h * v_out[a]
        integrate(BI, S, q, th, q_out)
        return _finite(v_out) and _finite(q_out)
    for a in range(nv):
        th[a] = 0.0
    _accel(BF, BI, TF, TI, CI, CF, KI, KF, KN, WB, S, CS, thrust, q, v, tau, f_ext, n, fluid[0], WT, WV[4])
    if not _finite(WV[4]):
        return False
    _tangent_rate(BI, S, th, v, WV[8])
    for s in range(1, 4):
        c = 0.5 * h if s < 3 else h
        for a in range(nv):
            th[a] = c * WV[7 + s, a]
            WV[s, a] = v[a] + c * WV[3 + s, a]
        integrate(BI, S, q, th, WQ[s])
        _accel(BF, BI, TF, TI, CI, CF, KI, KF, KN, WB, S, CS, thrust, WQ[s], WV[s], tau, f_ext, n,
               fluid[1 if s < 3 else 2], WT, WV[4 + s])  # fmt: skip
        if not _finite(WV[4 + s]):
            return False
        _tangent_rate(BI, S, th, WV[s], WV[8 + s])
    for a in range(nv):
        v_out[a] = v[a] + (h / 6.0) * (WV[4, a] + 2.0 * WV[5, a] + 2.0 * WV[6, a] + WV[7, a])
        th[a] = (h / 6.0) * (WV[8, a] + 2.0 * WV[9, a] + 2.0 * WV[10, a] + WV[11, a])
    integrate(BI, S, q, th, q_out)
    return _finite(v_out) and _finite(q_out)
