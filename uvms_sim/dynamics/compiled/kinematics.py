"""Joint transforms, placements and the forward pass: velocities, c_i and biases
(``kinematics.forward_kinematics``; McMillan et al. 1996 eqs. A1-A5, 9)."""

from __future__ import annotations

from ..flat import (
    AXIS,
    ET,
    FREE,
    IQ,
    IV,
    JNV,
    JTYPE,
    PARENT,
    PRISMATIC,
    REVOLUTE,
    RT,
    S_EJ,
    S_Q,
    S_VJ,
    SAX,
    SM,
    SPHERICAL,
    WBIAS,
    WC,
    WE,
    WPW,
    WR,
    WRW,
    WV,
)
from .buffers import inlined, kernel
from .contacts import _contacts
from .hydro import _body_bias
from .rotations import _axangle_T, _quat2mat
from .spatial import _outward
from .thrusters import _thrust


# A joint's type is read in three places only: its transform in ``placements``, and
# ``integrate`` and ``_tangent_rate`` (its configuration space: a quaternion or a vector).
# Everything else takes the joint's motion subspace S from the table (``flat.SM``).
@kernel
def placements(BF, BI, WB, S, q):
    """E_i, r_i (parent -> body) and world poses (kinematics.placements), with the joint
    transform E_J, r_J (Joint.transform)."""
    for i in range(BI.shape[0]):
        jt = BI[i, JTYPE]
        k = BI[i, IQ]
        rJ0 = rJ1 = rJ2 = 0.0
        if jt == REVOLUTE:
            _axangle_T(BF[i, AXIS], BF[i, AXIS + 1], BF[i, AXIS + 2], q[k], S, S_EJ)
        elif jt in (FREE, SPHERICAL):
            o = k + 3 if jt == FREE else k
            _quat2mat(q[o], q[o + 1], q[o + 2], q[o + 3], S, S_Q)
            for a in range(3):
                for b in range(3):
                    S[S_EJ + 3 * a + b] = S[S_Q + 3 * b + a]
            if jt == FREE:
                rJ0, rJ1, rJ2 = q[k], q[k + 1], q[k + 2]
        else:
            for a in range(9):
                S[S_EJ + a] = 1.0 if a % 4 == 0 else 0.0
            if jt == PRISMATIC:
                rJ0, rJ1, rJ2 = BF[i, AXIS] * q[k], BF[i, AXIS + 1] * q[k], BF[i, AXIS + 2] * q[k]
        for a in range(3):
            x0, x1, x2 = S[S_EJ + 3 * a], S[S_EJ + 3 * a + 1], S[S_EJ + 3 * a + 2]
            for b in range(3):
                WB[i, WE + 3 * a + b] = x0 * BF[i, ET + b] + x1 * BF[i, ET + 3 + b] + x2 * BF[i, ET + 6 + b]
            WB[i, WR + a] = (
                BF[i, RT + a] + BF[i, ET + a] * rJ0 + BF[i, ET + 3 + a] * rJ1 + BF[i, ET + 6 + a] * rJ2
            )
        lam = BI[i, PARENT]
        if lam < 0:
            for a in range(3):
                for b in range(3):
                    WB[i, WRW + 3 * a + b] = WB[i, WE + 3 * b + a]
                WB[i, WPW + a] = WB[i, WR + a]
        else:
            for a in range(3):
                l0, l1, l2 = WB[lam, WRW + 3 * a], WB[lam, WRW + 3 * a + 1], WB[lam, WRW + 3 * a + 2]
                for b in range(3):
                    WB[i, WRW + 3 * a + b] = (
                        l0 * WB[i, WE + 3 * b] + l1 * WB[i, WE + 3 * b + 1] + l2 * WB[i, WE + 3 * b + 2]
                    )
                WB[i, WPW + a] = WB[lam, WPW + a] + l0 * WB[i, WR] + l1 * WB[i, WR + 1] + l2 * WB[i, WR + 2]


@inlined
def forward_pass(BF, BI, TF, TI, KI, KF, KN, WB, S, thrust, q, v, f_ext, n, fluid, WT):
    """Placements, velocities, c_i and the biases (kinematics.forward_kinematics) in the fluid
    of one stage and the waves WT, with the external wrenches ``f_ext`` (nb x 6), the thrust at
    shaft speeds ``n`` and the contact forces of the points in KI/KF (normal forces into KN)."""
    placements(BF, BI, WB, S, q)
    for i in range(BI.shape[0]):
        k = BI[i, IV]
        for a in range(6):
            S[S_VJ + a] = 0.0
        h = BI[i, SAX]
        if h >= 0:  # vJ = S q̇, S one axis at rows h..h+2
            for a in range(3):
                S[S_VJ + h + a] = BF[i, SM + h + a] * v[k]
        else:
            for c in range(BI[i, JNV]):
                x = v[k + c]
                for a in range(6):
                    S[S_VJ + a] += BF[i, SM + 6 * c + a] * x
        lam = BI[i, PARENT]
        row = WB[i]
        _outward(
            WB, i, lam, WB[lam], WV, S, S_VJ, row, WV
        )  # v_i = X_i v_λ + S q̇ (McMillan et al. 1996 eq. 9)
        # c = v x vJ (motion cross product)
        x0, x1, x2, x3, x4, x5 = row[WV], row[WV + 1], row[WV + 2], row[WV + 3], row[WV + 4], row[WV + 5]
        j0, j1, j2 = S[S_VJ], S[S_VJ + 1], S[S_VJ + 2]
        j3, j4, j5 = S[S_VJ + 3], S[S_VJ + 4], S[S_VJ + 5]
        row[WC] = (x4 * j2 - x5 * j1) + (x1 * j5 - x2 * j4)
        row[WC + 1] = (x5 * j0 - x3 * j2) + (x2 * j3 - x0 * j5)
        row[WC + 2] = (x3 * j1 - x4 * j0) + (x0 * j4 - x1 * j3)
        row[WC + 3] = x4 * j5 - x5 * j4
        row[WC + 4] = x5 * j3 - x3 * j5
        row[WC + 5] = x3 * j4 - x4 * j3
        _body_bias(BF, BI, WB, S, i, fluid, WT)
        for a in range(6):
            row[WBIAS + a] -= f_ext[i, a]
    _thrust(TF, TI, WB, thrust, n)
    _contacts(KI, KF, KN, WB)
