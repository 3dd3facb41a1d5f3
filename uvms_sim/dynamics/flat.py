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
from ..spatial import motion_matrix

# joint type codes
FIXED, REVOLUTE, PRISMATIC, SPHERICAL, FREE = 0, 1, 2, 3, 4
JOINT_CODE = {"fixed": FIXED, "revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC,
              "spherical": SPHERICAL, "free": FREE}  # fmt: skip


def offsets(*sizes: int) -> tuple[tuple[int, ...], int]:
    """Where consecutive fields of these sizes start, and their total: every table row and
    buffer below is declared once, as its fields' sizes, and its offsets follow."""
    starts, total = [], 0
    for size in sizes:
        starts.append(total)
        total += size
    return tuple(starts), total


# BF columns: 6x6 matrices row-major, 3x3 row-major. First what the ABA reads: I_H = I_RB + M_A
# (McMillan et al. 1996 eq. 3), the joint's motion subspace S (``Joint.S``, column k at SM + 6k:
# the algorithms read it and never branch on the joint's type), and D⁻¹ = (Sᵀ Iᴬ S)⁻¹ of a body
# whose descendants are all fixed to it (a constant: Iᴬ is the composite inertia of the rigid
# subtree; nv x nv, row stride 6); then I_RB, M_A, D_lin, d_quad, mass, com, ρV, cob, joint
# axis, tree rotation parent->joint, its origin, damping centre, drag axis, start, ρ C_d r; then
# (DS) P abscissae and P weights
(IH, SM, IHI, IRB, MA, DL, DQ, MASS, COM, RV, COB, AXIS, ET, RT, DCEN, DAX, DST, DK), DS = offsets(
    36, 36, 36, 36, 36, 36, 6, 1, 3, 1, 3, 3, 9, 3, 3, 3, 3, 1
)  # fmt: skip
# hull block (hydro.hull) of a body, from BF column BI[i, HULL0]: bounding-sphere centre,
# radius, full hull volume, then (HCOL) per column x, y, z_lo, z_hi, w
(HCEN, HRAD, HVOL), HCOL = offsets(3, 1, 1)
# BI columns: parent, joint type, first q and v index, joint nv, has added mass, has drag,
# hull columns, the hull block's first BF column, 1 for a moving body whose descendants are all
# fixed (RIGID: its D⁻¹ is the constant IHI), 1 for a body fixed (through fixed joints) to a free
# root that is RIGID (FOLDED: its inertia is already in that root's constant), 1 where S is the
# 6x6 identity (U = Iᴬ, D = Iᴬ), and where S is one axis in one half (a rotation, 3, or a translation,
# 0), that half's first row (-1 otherwise): both skip products with S's zeros; then the joint
# couplings that the ABA itself holds (``mimic_groups``): for a follower its coupling's row in CI
# (-1 otherwise), and 1 for a joint that leads such followers
(PARENT, JTYPE, IQ, IV, JNV, HAS_MA, HAS_DRAG, NHULL, HULL0, RIGID, FOLDED, SID, SAX, MIMIC, LEADS), NBI = (
    offsets(*[1] * 15)
)
# WT columns: a wave component (hydro.waves.WaveField): amplitude, ω, k, cos β, sin β, phase, the
# water depth (inf: deep water), and in every row the sum of all the amplitudes (the highest
# crest) and of all the amplitudes times k (the steepest slope): a body deeper than they allow
# cannot meet the surface
(WAMP, WOMEGA, WK, WCOS, WSIN, WPHASE, WDEPTH, WSUM, WSLOPE), NWT = offsets(*[1] * 9)
# TF columns: position, direction, moment arm, T_nn forward and reverse, T_nu, T_max, T_min
(TPOS, TDIR, TARM, TNF, TNR, TNU, TMAX, TMIN), NTF = offsets(3, 3, 3, 1, 1, 1, 1, 1)
# workspace row of a body: E, r (parent -> body), world rotation and position, velocity, velocity
# relative to the water, c, acceleration, bias, articulated inertia and bias, U, D^-1, u, and
# the composite inertia of the subtree (CRBA)
(WE, WR, WRW, WPW, WV, WVR, WC, WA, WBIAS, WIA, WPA, WU, WDI, WUU, WIC), NW = offsets(
    9, 3, 9, 3, 6, 6, 6, 6, 6, 36, 6, 36, 36, 6, 36
)  # fmt: skip
# scratch of one evaluation (compiled kernels): joint rotation, quaternion matrix, joint
# velocity, h, h v, I^a, p^a, a', rhs, U D, congruence blocks J, TT, K, L, Cholesky factor and
# inverse, rotation, gravity/current/fluid acceleration in body axes, and three 6-vectors of the
# CRBA and the body Jacobians (a force, a motion column, a transformed one)
(S_EJ, S_Q, S_VJ, S_H, S_HV, S_IA, S_PA, S_AP, S_RHS, S_UD, S_J, S_TT, S_K, S_L, S_CL, S_CLI, S_R,
 S_GB, S_VC, S_AC, S_F, S_COL, S_TMP), NS = offsets(
    9, 9, 6, 6, 6, 36, 6, 6, 6, 36, 36, 9, 9, 18, 36, 36, 9, 3, 3, 3, 6, 6, 6
)  # fmt: skip


def _rigid_subtrees(model: Model) -> tuple[list[bool], list[bool], list[np.ndarray]]:
    """Per body: whether every descendant is fixed to it (RIGID); whether it is fixed, through
    fixed joints, to a free root that is RIGID (FOLDED: its inertia is in that root's
    constant, and the root's U multiplies a' = c = 0); and the composite hydrodynamic inertia
    of the body and its fixed descendants (``Xᵀ I X`` summed inward). For a RIGID body the
    ABA's articulated inertia is that constant (a fixed joint passes its whole inertia on)."""
    rigid = [True] * model.nbodies
    composite = [np.array(m, dtype=float) for m in model.I_H]
    for i in range(model.nbodies - 1, -1, -1):
        lam = model.parents[i]
        if lam < 0:
            continue
        if model.joints[i].type == "fixed" and rigid[i]:
            E_T, r_T = model.tree[i]
            X = motion_matrix(np.asarray(E_T), np.asarray(r_T))
            composite[lam] += X.T @ composite[i] @ X
        else:
            rigid[lam] = False
    folded = []
    for i in range(model.nbodies):
        top = i
        while model.joints[top].type == "fixed" and model.parents[top] >= 0:
            top = model.parents[top]
        folded.append(top != i and model.parents[top] < 0 and model.joints[top].type == "free" and rigid[top])
    return rigid, folded, composite


def _axis_half(S: np.ndarray) -> int:
    """The first row of the half of S (rows 0-3 or 3-6) holding its one column's non-zeros, or -1."""
    if S.shape[1] == 1:
        for h in (0, 3):
            if not S[3 - h : 6 - h].any():
                return h
    return -1


def flatten(
    model: Model, env: Environment | None = None, thrusters=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(BF, BI, TF, TI)`` of ``model`` in ``env`` (density folded into ρV and the drag) with
    the thrusters of a ``ThrusterBank`` (or none)."""
    env = env or Environment()
    nb = model.nbodies
    P = max([d.points for d in model.drag if d is not None], default=1)
    H = max([len(h.columns) for h in model.hull if h is not None], default=0)
    hull0 = DS + 2 * P
    BF = np.zeros((nb, hull0 + HCOL + 5 * H))
    BI = np.zeros((nb, NBI), dtype=np.int64)
    rigid, folded, composite = _rigid_subtrees(model)
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
        BF[i, SM : SM + 6 * joint.nv] = joint.S.T.ravel()
        E_T, r_T = model.tree[i]
        BF[i, ET : ET + 9] = np.asarray(E_T).ravel()
        BF[i, RT : RT + 3] = r_T
        hull = model.hull[i]
        BI[i] = (model.parents[i], JOINT_CODE[joint.type], model.idx_q[i], model.idx_v[i], joint.nv,
                 bool(model.M_A[i].any()), model.drag[i] is not None,
                 0 if hull is None else len(hull.columns), hull0, rigid[i] and joint.nv > 0, folded[i],
                 joint.S.shape == (6, 6) and np.array_equal(joint.S, np.eye(6)),
                 _axis_half(joint.S), -1, 0)  # fmt: skip
        if rigid[i] and joint.nv:
            D_inv = np.zeros((6, 6))
            D_inv[: joint.nv, : joint.nv] = np.linalg.inv(joint.S.T @ composite[i] @ joint.S)
            BF[i, IHI : IHI + 36] = D_inv.ravel()
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


# The workspace and its parts, each declared once as its fields' shapes (rows, columns): Python
# lays them out with ``laid_out`` and the kernels cut them with ``compiled.buffers._part``, which
# compile these same functions (plain arithmetic on integers).
def workspace_fields(nb: int, nq: int, nv: int, nt: int) -> tuple[tuple[int, int], ...]:
    """The workspace of one evaluation: the body rows (nb x NW), 4 stage configurations
    (4 x nq), 13 stage vectors (velocities, accelerations, tangent rates, increment: 13 x nv),
    the thrusts (nt) and the scratch (NS); the connections' scratch follows them. A step reads
    its stage 0 from q and v themselves: the configuration and velocity rows 0 hold the state
    that ``step_many`` and ``batch_step`` carry from step to step."""
    return ((nb, NW), (4, nq), (13, nv), (nt, 1), (NS, 1))


def connection_fields(nb: int, nv: int, nc: int) -> tuple[tuple[int, int], ...]:
    """The scratch of the Udwadia-Kalaba correction for nc connections (m = 6 nc rows): a⁰
    (nb x 6), A (m x nv), b (m), the two body Jacobians (6 x nv each), M and its tree-sparse
    factor in place (nv x nv, ``crba._ltl``), G = A L⁻¹ rotated in place by the Jacobi SVD (m x nv), the
    residual (m), the rotations V (m x m), the correction (nv), two 3x3 rotations, the
    DOFs' parents (nv) and the bodies' accelerations of ``aba._inverse_inertia`` (nb x 6; its
    forces go into a⁰). With joint couplings only, G holds M⁻¹ Aᵀ (a row per coupling) and
    the leading nc x nc block of the nv x nv field A M⁻¹ Aᵀ."""
    m = 6 * nc
    return ((nb, 6), (m, nv), (m, 1), (6, nv), (6, nv), (nv, nv), (m, nv), (m, 1), (m, m), (nv, 1),
            (3, 3), (3, 3), (nv, 1), (nb, 6))  # fmt: skip


def input_fields(nb: int, nq: int, nv: int, nt: int) -> tuple[tuple[int, int], ...]:
    """The state, inputs and result of a prepared ABA call (``fast.PreparedAba``): q, v, tau,
    f_ext (nb x 6), the thruster shaft speeds and q̈."""
    return ((nq, 1), (nv, 1), (nv, 1), (nb, 6), (nt, 1), (nv, 1))


def laid_out(fields: tuple[tuple[int, int], ...], *more: int) -> tuple[tuple[int, ...], int]:
    """Where each of these fields starts, then fields of sizes ``more``, and the total."""
    return offsets(*(rows * columns for rows, columns in fields), *more)


def workspace(nb: int, nq: int, nv: int, nt: int, nc: int = 0) -> tuple[tuple[int, ...], int]:
    """Where the fields of ``workspace_fields`` and the connections' scratch (none when nc = 0)
    start, and the total."""
    return laid_out(workspace_fields(nb, nq, nv, nt), laid_out(connection_fields(nb, nv, nc))[1] if nc else 0)


def thrust_offset(model: Model) -> int:
    """Where the thrusts start in a workspace."""
    return workspace(model.nbodies, model.nq, model.nv, 0)[0][3]


# The joint servos (``actuators.servo.JointServos``): one float row SF and one int row SI per
# servo, where the servo object keeps its setpoints and state and the compiled steps
# (``compiled.servos``) read and write them. SF: setpoint, velocity feed-forward, the velocity
# loop's integral, its gains kv and ki, the position gain kp, the velocity limit, the position
# limits, kt, the static friction current, the current cap, the last current and torque, the
# joint's position and velocity at the last update, and the integral before it (restored when
# the compiled step hands a step back to Python). SI: q index, v index, mode (``SERVO_CODE``)
(SV_TARGET, SV_FF, SV_INTEGRAL, SV_KV, SV_KI, SV_KP, SV_VMAX, SV_LOWER, SV_UPPER, SV_KT, SV_IS, SV_CAP,
 SV_CURRENT, SV_EFFORT, SV_Q, SV_V, SV_SAVED), NSV = offsets(*[1] * 17)  # fmt: skip
(SI_IQ, SI_IV, SI_MODE), NSI = offsets(1, 1, 1)
SERVO_STANDBY, SERVO_DISABLE, SERVO_POSITION, SERVO_VELOCITY, SERVO_CURRENT, SERVO_EFFORT = range(6)
SERVO_CODE = {"standby": SERVO_STANDBY, "disable": SERVO_DISABLE, "position": SERVO_POSITION,
              "velocity": SERVO_VELOCITY, "current": SERVO_CURRENT, "effort": SERVO_EFFORT}  # fmt: skip
# The joint position limits (``Simulator._enforce_limits``): per limited 1-DOF joint a float row
# LF (lower, upper; ±inf where there is none) and an int row LI (q index, v index, and whether
# the joint hit its limit in the last impact)
(LF_LOWER, LF_UPPER), NLF = offsets(1, 1)
(LI_IQ, LI_IV, LI_HIT), NLI = offsets(1, 1, 1)


def limit_fields(nb: int, nv: int, nl: int) -> tuple[tuple[int, int], ...]:
    """The scratch of a joint-limit impact among nl limited joints: body rows (nb x NW) and a
    scratch row (NS) for the placements and CRBA at the clamped configuration, M and its
    factor in place (nv x nv), the columns of M⁻¹ of the joints that hit (nv x nl), the block
    of M⁻¹ of those joints (nl x nl), the impulse (nl) and the DOFs' parents (nv)."""
    return ((nb, NW), (NS, 1), (nv, nv), (nv, nl), (nl, nl), (nl, 1), (nv, 1))


# The header of the int buffer of ``pack``: counts (bodies, BF width, thrusters, connections,
# contact points, nq, nv, wave components), then where each table starts in the float buffer
# (BF, TF, CF, KF, KN, the workspace, the inputs of a prepared call, the waves) and in the int
# buffer (BI, TI, CI, KI). The fluid (3 x 4 x 3) starts the float buffer.
(H_NB, H_NBF, H_NT, H_NC, H_NK, H_NQ, H_NV, H_NW, H_BF, H_TF, H_CF, H_KF, H_KN, H_W, H_IN, H_WT,
 H_BI, H_TI, H_CI, H_KI), NH = offsets(*[1] * 20)  # fmt: skip
NFLUID = 36  # stage (t, t+h/2, t+h) x (current, its acceleration, gravity, (surface, has surface, time))


def wave_table(waves) -> np.ndarray:
    """The rows (WT columns above) of the components of a ``hydro.waves.WaveField`` (None: none)."""
    if waves is None or len(waves) == 0:
        return np.zeros((0, NWT))
    WT = np.zeros((len(waves), NWT))
    WT[:, WAMP] = waves.amplitude
    WT[:, WOMEGA] = waves.omega
    WT[:, WK] = waves.k
    WT[:, WCOS] = np.cos(waves.direction)
    WT[:, WSIN] = np.sin(waves.direction)
    WT[:, WPHASE] = waves.phase
    WT[:, WDEPTH] = waves.depth
    WT[:, WSUM] = waves.amplitude.sum()
    WT[:, WSLOPE] = waves.amplitude @ waves.k
    return WT


# columns of a connection (E, r, α, β), of a contact (``dynamics.contact``: r, depth or anchor,
# k, c, μ, v_s; a touching pair's point: r_A, r_B, k, c, μ, k_t, normal, c_t) and of its ints
# (body, kind, other body)
NCF, NKF, NKI = 14, 14, 3


def pack(
    tables, CI, CF, KI, KF, nq: int, nv: int, WT: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """One float and one int buffer holding everything a kernel reads besides the state and
    inputs: the fluid, the tables of ``flatten``, the rigid connections (CI, CF), the contact
    points (KI, KF), their normal forces (KN), the workspace and the wave components (WT, rows of
    ``wave_table``), at the offsets the header of
    the int buffer records (``compiled.buffers._unpack`` reads it). A kernel then takes two arguments
    where it took eleven. Also returns named views of both buffers, for Python to fill and read."""
    BF, BI, TF, TI = tables
    WT = np.zeros((0, NWT)) if WT is None else WT
    nb, nt, nc, nk, nw = BI.shape[0], TI.shape[0], CI.shape[0], KI.shape[0], WT.shape[0]
    ins = input_fields(nb, nq, nv, nt)
    starts, n_in = laid_out(ins)
    (o_bf, o_tf, o_cf, o_kf, o_kn, o_w, o_in, o_wt), nf = offsets(
        BF.size, TF.size, CF.size, KF.size, nk, workspace(nb, nq, nv, nt, nc)[1], n_in, WT.size
    )
    (o_bi, o_ti, o_ci, o_ki), ni = offsets(BI.size, nt, 2 * nc, NKI * nk)
    FB = np.zeros(NFLUID + nf)
    IB = np.zeros(NH + ni, dtype=np.int64)
    IB[:NH] = (nb, BF.shape[1], nt, nc, nk, nq, nv, nw,
              *(NFLUID + o for o in (o_bf, o_tf, o_cf, o_kf, o_kn, o_w, o_in, o_wt)),
              *(NH + o for o in (o_bi, o_ti, o_ci, o_ki)))  # fmt: skip
    views = {
        "fluid": FB[:NFLUID].reshape(3, 4, 3),
        "BF": FB[IB[H_BF] : IB[H_BF] + BF.size].reshape(BF.shape),
        "TF": FB[IB[H_TF] : IB[H_TF] + TF.size].reshape(nt, NTF),
        "CF": FB[IB[H_CF] : IB[H_CF] + CF.size].reshape(nc, NCF),
        "KF": FB[IB[H_KF] : IB[H_KF] + KF.size].reshape(nk, NKF),
        "KN": FB[IB[H_KN] : IB[H_KN] + nk],
        "W": FB[IB[H_W] : IB[H_IN]],
        "WT": FB[IB[H_WT] : IB[H_WT] + WT.size].reshape(nw, NWT),
        "BI": IB[IB[H_BI] : IB[H_BI] + BI.size].reshape(BI.shape),
        "TI": IB[IB[H_TI] : IB[H_TI] + nt],
        "CI": IB[IB[H_CI] : IB[H_CI] + 2 * nc].reshape(nc, 2),
        "KI": IB[IB[H_KI] : IB[H_KI] + NKI * nk].reshape(nk, NKI),
    }
    # the state and inputs of a prepared call: a field of one column is a vector, as the kernels read it
    for name, (rows, columns), start in zip(("q", "v", "tau", "f_ext", "n", "ddq"), ins, starts, strict=True):
        view = FB[IB[H_IN] + start : IB[H_IN] + start + rows * columns]
        views[name] = view if columns == 1 else view.reshape(rows, columns)
    for name, table in (("BF", BF), ("TF", TF), ("CF", CF), ("KF", KF), ("BI", BI), ("TI", TI), ("CI", CI),
                        ("KI", KI), ("WT", WT)):  # fmt: skip
        views[name][...] = table
    mimic_groups(views["BI"], views["CI"])
    return FB, IB, views


def mimic_groups(BI: np.ndarray, CI: np.ndarray) -> bool:
    """Mark in BI (columns MIMIC, LEADS) the joint couplings that the ABA holds exactly
    (``compiled.aba.aba_pass``), and say whether it does: when every row of CI is a coupling
    (parent -1 - leader) of a 1-DOF follower to a 1-DOF sibling that comes before it in the
    tree's order, each follower in one coupling, leading none, and no leader a follower (the
    fingers of a gripper on their push rod). Those joints then move as one DOF: a follower's
    q̈ is its multiplier times its leader's plus the coupling's Baumgarte term, and their
    parent takes one rank-one update for all of them. Otherwise nothing is marked and every
    row goes through the Udwadia-Kalaba correction."""
    BI[:, MIMIC] = -1
    BI[:, LEADS] = 0
    followers = [int(f) for f in CI[:, 1]]
    leaders = [-1 - int(p) for p in CI[:, 0]]
    ok = len(CI) > 0 and all(lead >= 0 for lead in leaders) and len(set(followers)) == len(followers)
    for lead, f in zip(leaders, followers, strict=True):
        ok = (
            ok
            and f not in leaders
            and lead not in followers
            and lead < f
            and BI[f, JNV] == 1
            and BI[lead, JNV] == 1
            and BI[f, PARENT] == BI[lead, PARENT] >= 0
        )
    if ok:
        for k, (lead, f) in enumerate(zip(leaders, followers, strict=True)):
            BI[f, MIMIC] = k
            BI[lead, LEADS] = 1
    return ok
