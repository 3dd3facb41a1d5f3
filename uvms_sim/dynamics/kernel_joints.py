"""Joint behaviour for the compiled kernels: the only compiled code that branches on the joint
type. The algorithms (placements, forward pass, ABA, CRBA, Jacobians, integration) call these
helpers and never test a joint's type themselves; a new joint type is a branch in each helper
here, in ``model.joints.Joint`` (the reference) and a code in ``flat.JOINT_CODE``.

Per joint type (``Joint`` in ``uvms_sim.model.joints``; S in the child frame, linear first):
revolute ``S = [0; axis]``, prismatic ``S = [axis; 0]``, spherical ``S = [0; I3]`` (q a unit
quaternion), free ``S = I6`` (q = position in the parent, then a unit quaternion), fixed: no
column (McMillan et al. 1996 eq. 9).
"""

from __future__ import annotations

from .flat import (
    AXIS,
    FREE,
    IQ,
    IV,
    JNV,
    JTYPE,
    PRISMATIC,
    REVOLUTE,
    S_EJ,
    S_Q,
    S_R,
    SPHERICAL,
    WDI,
    WIA,
    WPA,
    WU,
    WUU,
)
from .kernel_math import advance_quat, axangle_T, chol_inv, dexp_inv, kernel, quat2mat, quat_exp, rotate


@kernel
def joint_transform(BF, BI, i, q, S):
    """Body i's joint at configuration q: its rotation ``E_J`` into S[S_EJ:S_EJ+9] (row-major)
    and its translation ``r_J``, returned (``Joint.transform``)."""
    jt = BI[i, JTYPE]
    k = BI[i, IQ]
    if jt == REVOLUTE:
        axangle_T(BF[i, AXIS], BF[i, AXIS + 1], BF[i, AXIS + 2], q[k], S, S_EJ)
        return 0.0, 0.0, 0.0
    if jt in (FREE, SPHERICAL):
        o = k + 3 if jt == FREE else k
        quat2mat(q[o], q[o + 1], q[o + 2], q[o + 3], S, S_Q)
        for a in range(3):
            for b in range(3):
                S[S_EJ + 3 * a + b] = S[S_Q + 3 * b + a]
        return (q[k], q[k + 1], q[k + 2]) if jt == FREE else (0.0, 0.0, 0.0)
    for a in range(9):
        S[S_EJ + a] = 1.0 if a % 4 == 0 else 0.0
    if jt == PRISMATIC:
        return BF[i, AXIS] * q[k], BF[i, AXIS + 1] * q[k], BF[i, AXIS + 2] * q[k]
    return 0.0, 0.0, 0.0


@kernel
def joint_motion(BF, BI, i, x, xo, out, oo):
    """out[oo:oo+6] += S_i x[xo:xo+nv]: the joint's velocity (x = q̇) or acceleration (x = q̈)."""
    jt = BI[i, JTYPE]
    if jt == REVOLUTE:
        for a in range(3):
            out[oo + 3 + a] += BF[i, AXIS + a] * x[xo]
    elif jt == PRISMATIC:
        for a in range(3):
            out[oo + a] += BF[i, AXIS + a] * x[xo]
    elif jt == SPHERICAL:
        for a in range(3):
            out[oo + 3 + a] += x[xo + a]
    elif jt == FREE:
        for a in range(6):
            out[oo + a] += x[xo + a]


@kernel
def s_column(BF, BI, i, k, out):
    """Column k of joint i's motion subspace S (child coordinates) into out[0:6]."""
    for a in range(6):
        out[a] = 0.0
    jt = BI[i, JTYPE]
    if jt == REVOLUTE:
        for a in range(3):
            out[3 + a] = BF[i, AXIS + a]
    elif jt == PRISMATIC:
        for a in range(3):
            out[a] = BF[i, AXIS + a]
    elif jt == SPHERICAL:
        out[3 + k] = 1.0
    else:
        out[k] = 1.0


@kernel
def joint_articulated(BF, BI, i, row, tau, S):
    """The joint's part of the ABA's inward pass (McMillan et al. 1996 appendix A.3) into body
    i's workspace row: ``U = I^A S``, ``D⁻¹ = (Sᵀ U)⁻¹`` and ``u = τ − Sᵀ p^A``. A revolute or
    prismatic joint takes the axis column (rank one), a spherical or free one the identity
    block (a Cholesky inverse of the 3x3 or 6x6 block)."""
    jt = BI[i, JTYPE]
    k = BI[i, IV]
    if jt in (REVOLUTE, PRISMATIC):
        off = 3 if jt == REVOLUTE else 0
        x0, x1, x2 = BF[i, AXIS], BF[i, AXIS + 1], BF[i, AXIS + 2]
        for a in range(6):
            b = WIA + 6 * a + off
            row[WU + 6 * a] = row[b] * x0 + row[b + 1] * x1 + row[b + 2] * x2
        row[WDI] = 1.0 / (
            x0 * row[WU + 6 * off] + x1 * row[WU + 6 * (off + 1)] + x2 * row[WU + 6 * (off + 2)]
        )
        row[WUU] = tau[k] - (x0 * row[WPA + off] + x1 * row[WPA + off + 1] + x2 * row[WPA + off + 2])
    elif jt == SPHERICAL:
        for a in range(6):
            for b in range(3):
                row[WU + 6 * a + b] = row[WIA + 6 * a + 3 + b]
        chol_inv(row, WIA + 21, 3, row, WDI, S)
        for b in range(3):
            row[WUU + b] = tau[k + b] - row[WPA + 3 + b]
    elif jt == FREE:
        for a in range(36):
            row[WU + a] = row[WIA + a]
        for a in range(6):
            row[WUU + a] = tau[k + a] - row[WPA + a]
        chol_inv(row, WIA, 6, row, WDI, S)


@kernel
def joint_integrate(BI, i, S, q, dq, out):
    """out = q ⊕ dq for body i's joint (``integrate.integrate``): a free joint moves along its
    rotated linear increment and turns by ``exp(θ/2)``, a spherical one turns, a 1-DOF one adds."""
    if BI[i, JNV] == 0:
        return
    jt = BI[i, JTYPE]
    iq, iv = BI[i, IQ], BI[i, IV]
    if jt == FREE:
        quat2mat(q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6], S, S_R)
        rotate(S, S_R, dq, iv, out, iq, True)
        advance_quat(q, iq + 3, dq, iv + 3, out)
    elif jt == SPHERICAL:
        advance_quat(q, iq, dq, iv, out)
    else:
        out[iq] += dq[iv]


@kernel
def joint_tangent_rate(BI, i, S, theta, v, out):
    """Rate of body i's tangent coordinates about the stage-0 point (``integrate._tangent_rate``);
    out holds v already (a 1-DOF joint's rate is its velocity)."""
    jt = BI[i, JTYPE]
    iv = BI[i, IV]
    if jt == FREE:
        t0, t1, t2 = theta[iv + 3], theta[iv + 4], theta[iv + 5]
        if t0 != 0.0 or t1 != 0.0 or t2 != 0.0:
            e0, e1, e2, e3 = quat_exp(t0, t1, t2)
            quat2mat(e0, e1, e2, e3, S, S_R)
            rotate(S, S_R, v, iv, out, iv, False)
        dexp_inv(t0, t1, t2, v[iv + 3], v[iv + 4], v[iv + 5], out, iv + 3)
    elif jt == SPHERICAL:
        dexp_inv(theta[iv], theta[iv + 1], theta[iv + 2], v[iv], v[iv + 1], v[iv + 2], out, iv)
