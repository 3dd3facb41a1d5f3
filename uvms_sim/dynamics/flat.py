"""A model as a few flat, preallocated tables for the compiled kernels (``dynamics.compiled``).

One row per body of a float table ``BF`` (inertias, hydrodynamic coefficients, tree transform,
joint axis, cylinder-drag quadrature) and an int table ``BI`` (parent, joint type, q/v
indices); one row per thruster of ``TF`` (position, direction, moment arm, thrust
coefficients) and ``TI`` (its body). The column of every quantity is a constant below, so the
kernels read scalars ``BF[i, COL + k]`` and never build array views in their loops. The
workspace of one evaluation is one float buffer carved into per-body rows (``WB``), the
Runge-Kutta stage vectors and a scratch row; it is allocated once per model and thread.
"""

from __future__ import annotations

import numpy as np

from ..hydro.environment import Environment
from ..model.model import Model

# joint type codes
FIXED, REVOLUTE, PRISMATIC, SPHERICAL, FREE = 0, 1, 2, 3, 4
JOINT_CODE = {"fixed": FIXED, "revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC,
              "spherical": SPHERICAL, "free": FREE}  # fmt: skip

# BF columns: 6x6 matrices row-major, 3x3 row-major
IH, IRB, MA, DL = 0, 36, 72, 108  # I_H = I_RB + M_A (McMillan et al. 1996 eq. 3), I_RB, M_A, D_lin
DQ, MASS, COM, RV, COB = 144, 150, 151, 154, 155  # d_quad (6), mass, com (3), ρV, cob (3)
AXIS, ET, RT, DCEN = (
    158,
    161,
    170,
    173,
)  # joint axis (3), tree rotation parent->joint (9), origin (3), damping centre (3)
DAX, DST, DK, DS = 176, 179, 182, 183  # drag axis, start, ρ C_d r, then P abscissae and P weights
# hull block (hydro.hull) of a body, from BF column BI[i, HULL0]: bounding-sphere centre (3),
# radius, full hull volume, then per column x, y, z_lo, z_hi, w
HCEN, HRAD, HVOL, HCOL = 0, 3, 4, 5
# BI columns
PARENT, JTYPE, IQ, IV, JNV, HAS_MA, HAS_DRAG, NHULL, HULL0 = range(9)
NBI = 9
# TF columns
TPOS, TDIR, TARM, TNF, TNR, TNU, TMAX, TMIN = 0, 3, 6, 9, 10, 11, 12, 13
NTF = 14
# workspace row of a body
WE, WR, WRW, WPW, WV, WVR, WC, WA, WBIAS, WIA, WPA, WU, WDI, WUU = (
    0, 9, 12, 21, 24, 30, 36, 42, 48, 54, 90, 96, 132, 168)  # fmt: skip
NW = 174
NS = 384  # scratch


def flatten(model: Model, env: Environment | None = None, thrusters=None):
    """``(BF, BI, TF, TI)`` of ``model`` in ``env`` (density folded into ρV and the drag) with
    the thrusters of a ``ThrusterBank`` (or none)."""
    env = env or Environment()
    nb = model.nbodies
    P = max([d.points for d in model.drag if d is not None], default=1)
    H = max([len(h.columns) for h in model.hull if h is not None], default=0)
    hull0 = DS + 2 * P
    BF = np.zeros((nb, hull0 + HCOL + 5 * H))
    BI = np.zeros((nb, NBI), dtype=np.int64)
    for i, joint in enumerate(model.joints):
        BF[i, IH : IH + 36] = model.I_H[i].ravel()
        BF[i, IRB : IRB + 36] = model.I_RB[i].ravel()
        BF[i, MA : MA + 36] = model.M_A[i].ravel()
        BF[i, DL : DL + 36] = model.D_lin[i].ravel()
        BF[i, DQ : DQ + 6] = model.d_quad[i]
        BF[i, MASS] = model.mass[i]
        BF[i, COM : COM + 3] = model.com[i]
        BF[i, RV] = env.density * model.volume[i]
        BF[i, COB : COB + 3] = model.cob[i]
        BF[i, DCEN : DCEN + 3] = model.damping_center[i]
        BF[i, AXIS : AXIS + 3] = joint.axis
        E_T, r_T = model.tree[i]
        BF[i, ET : ET + 9] = np.asarray(E_T).ravel()
        BF[i, RT : RT + 3] = r_T
        hull = model.hull[i]
        BI[i] = (model.parents[i], JOINT_CODE[joint.type], model.idx_q[i], model.idx_v[i], joint.nv,
                 bool(model.M_A[i].any()), model.drag[i] is not None,
                 0 if hull is None else len(hull.columns), hull0)  # fmt: skip
        if hull is not None:
            BF[i, hull0 + HCEN : hull0 + HCEN + 3] = hull.center
            BF[i, hull0 + HRAD] = hull.radius
            BF[i, hull0 + HVOL] = hull.volume
            BF[i, hull0 + HCOL : hull0 + HCOL + hull.columns.size] = hull.columns.ravel()
        d = model.drag[i]
        if d is not None:
            BF[i, DAX : DAX + 3] = d.axis
            BF[i, DST : DST + 3] = d.start
            BF[i, DK] = env.density * d.drag_coefficient * d.radius
            BF[i, DS : DS + d.points] = d.s
            BF[i, DS + P : DS + P + d.points] = d.weights
    nt = 0 if thrusters is None else len(thrusters)
    TF = np.zeros((nt, NTF))
    TI = np.zeros(nt, dtype=np.int64)
    if nt:
        TF[:, TPOS : TPOS + 3] = thrusters.position
        TF[:, TDIR : TDIR + 3] = thrusters.direction
        TF[:, TARM : TARM + 3] = thrusters.moment_arm
        TF[:, TNF] = thrusters.T_nn_forward
        TF[:, TNR] = thrusters.T_nn_reverse
        TF[:, TNU] = thrusters.T_nu
        TF[:, TMAX] = thrusters.T_max
        TF[:, TMIN] = thrusters.T_min
        TI[:] = thrusters.body
    return BF, BI, TF, TI


def thrust_offset(model: Model) -> int:
    """Where the thrusts start in a workspace: after the body rows, 4 stage configurations and
    13 stage vectors (velocities, accelerations, tangent rates, increment); ``compiled._carve``
    cuts the buffer the same way."""
    return model.nbodies * NW + 4 * model.nq + 13 * model.nv


def workspace_size(model: Model, nthrusters: int = 0) -> int:
    """Floats in one workspace: everything before the thrusts, the thrusts, scratch."""
    return thrust_offset(model) + nthrusters + NS
