"""The entry points from Python (``dynamics.fast``): forward dynamics, one step, many steps, a
batch of copies in parallel, each over the buffers of ``flat.pack``, and the last evaluation's
forward pass exported into a reference ``Data``; and their closed dispatch."""

from __future__ import annotations

import functools

from numba import njit, prange, types

from ..flat import H_IN, H_NB, H_NQ, H_NT, H_NV, NW, WA, WBIAS, WC, WE, WPW, WR, WRW, WV, WVR
from .buffers import _bare, _carve, _flat_part, _input_fields, _part, _unpack, entry_kernel, inlined
from .constraints import _accel
from .integrate import _step
from .limits import _crossing, _enforce_limits
from .servos import _servo_restore, _servo_torques


# Each takes the buffers FB, IB of ``flat.pack`` and the state and inputs; ``fluid`` is FB's.
@entry_kernel
def aba(FB, IB, q, v, tau, f_ext, n, ddq):
    """q̈ into ``ddq`` at (q, v) for tau, body wrenches f_ext (nb x 6), thruster shaft speeds n,
    in the fluid of stage 0. Thrusts are left in the workspace."""
    BF, BI, TF, TI, CI, CF, KI, KF, KN, W, fluid, WT = _unpack(FB, IB)
    WB, _, _, thrust, S, CS = _carve(W, BI.shape[0], IB[H_NQ], IB[H_NV], TI.shape[0])
    _accel(BF, BI, TF, TI, CI, CF, KI, KF, KN, WB, S, CS, thrust,
           _bare(q), _bare(v), _bare(tau), _bare(f_ext), _bare(n), fluid[0], WT, _bare(ddq))  # fmt: skip


@entry_kernel
def export(W, E, r, R_world, p_world, v, v_rel, c, a, bias, X):
    """``FastDynamics.export``: the body rows of the workspace W that the last evaluation left
    (``flat``'s WE ... WBIAS fields) into a reference ``Data``'s arrays, and each body's motion
    transform ``X = [[E, -E r×], [0, E]]`` (McMillan et al. 1996 eq. A5, linear first, as
    ``spatial.motion_matrix``; row j of ``-E r×`` is ``r × E_j``). One call for what was nine
    copies and a stacked product."""
    for i in range(E.shape[0]):
        o = i * NW
        for j in range(3):
            r[i, j] = W[o + WR + j]
            p_world[i, j] = W[o + WPW + j]
            for k in range(3):
                E[i, j, k] = W[o + WE + 3 * j + k]
                R_world[i, j, k] = W[o + WRW + 3 * j + k]
        for j in range(6):
            v[i, j] = W[o + WV + j]
            v_rel[i, j] = W[o + WVR + j]
            c[i, j] = W[o + WC + j]
            a[i, j] = W[o + WA + j]
            bias[i, j] = W[o + WBIAS + j]
        r0, r1, r2 = r[i, 0], r[i, 1], r[i, 2]
        for j in range(3):
            e0, e1, e2 = E[i, j, 0], E[i, j, 1], E[i, j, 2]
            for k in range(3):
                X[i, j, k] = E[i, j, k]
                X[i, 3 + j, 3 + k] = E[i, j, k]
                X[i, 3 + j, k] = 0.0
            X[i, j, 3] = r1 * e2 - r2 * e1
            X[i, j, 4] = r2 * e0 - r0 * e2
            X[i, j, 5] = r0 * e1 - r1 * e0


@entry_kernel
def aba_bound(FB, IB):
    """``aba`` of the state and inputs held in FB itself (``flat.input_fields``): a prepared
    call takes two arguments."""
    nb, nq, nv, nt = IB[H_NB], IB[H_NQ], IB[H_NV], IB[H_NT]
    o, F = IB[H_IN], _input_fields(nb, nq, nv, nt)
    q, v, tau = _flat_part(FB, o, F, 0), _flat_part(FB, o, F, 1), _flat_part(FB, o, F, 2)
    f_ext, n, ddq = _part(FB, o, F, 3), _flat_part(FB, o, F, 4), _flat_part(FB, o, F, 5)
    BF, BI, TF, TI, CI, CF, KI, KF, KN, W, fluid, WT = _unpack(FB, IB)
    WB, _, _, thrust, S, CS = _carve(W, nb, nq, nv, nt)
    _accel(BF, BI, TF, TI, CI, CF, KI, KF, KN, WB, S, CS, thrust, q, v, tau, f_ext, n, fluid[0], WT, ddq)


@entry_kernel
def step(FB, IB, method, q, v, tau, f_ext, n, h, q_out, v_out, thrust_out):
    """One step (see ``_step``); when it is finite, the thrusts of its last evaluation also
    into ``thrust_out`` (where the thruster bank keeps them)."""
    BF, BI, TF, TI, CI, CF, KI, KF, KN, W, fluid, WT = _unpack(FB, IB)
    ok = _step(BF, BI, TF, TI, CI, CF, KI, KF, KN, W, method, _bare(q), _bare(v), _bare(tau),
               _bare(f_ext), _bare(n), fluid, WT, h, _bare(q_out), _bare(v_out))  # fmt: skip
    if ok:
        thrust = _carve(W, BI.shape[0], IB[H_NQ], IB[H_NV], TI.shape[0])[3]
        out = _bare(thrust_out)
        for k in range(TI.shape[0]):
            out[k] = thrust[k]
    return ok


@inlined
def _next_stage_times(fluid, h):
    """The stage times t, t + h/2, t + h moved on by one step of h (the waves read them), as
    ``FastDynamics.fluid_at`` sets them (the same arithmetic)."""
    t = fluid[0, 3, 2] + h
    fluid[0, 3, 2] = t
    fluid[1, 3, 2] = t + 0.5 * h
    fluid[2, 3, 2] = t + h


@entry_kernel
def step_many(FB, IB, method, q, v, tau, f_ext, n, h, steps, q_out, v_out):
    """``steps`` steps with the inputs and the current held (``Simulator.advance``); returns the
    number of steps done (fewer on a non-finite value: q_out, v_out then hold the last finite
    state). With waves the stage times move on by h each step, as ``FastDynamics.fluid_at``
    sets them (the same arithmetic)."""
    BF, BI, TF, TI, CI, CF, KI, KF, KN, W, fluid, WT = _unpack(FB, IB)
    tau, f_ext, n, q_out, v_out = _bare(tau), _bare(f_ext), _bare(n), _bare(q_out), _bare(v_out)
    _, WQ, WV, _, _, _ = _carve(W, BI.shape[0], IB[H_NQ], IB[H_NV], TI.shape[0])
    qb, vb = WQ[0], WV[0]  # the running state, in the workspace's stage-0 rows
    qb[:] = q
    vb[:] = v
    for k in range(steps):
        if not _step(
            BF, BI, TF, TI, CI, CF, KI, KF, KN, W, method, qb, vb, tau, f_ext, n, fluid, WT, h, q_out, v_out
        ):
            q_out[:] = qb
            v_out[:] = vb
            return k
        qb[:] = q_out
        vb[:] = v_out
        if WT.shape[0]:
            _next_stage_times(fluid, h)
    return steps


@entry_kernel
def step_joints(FB, IB, method, q, v, tau, f_ext, n, h, steps, q_out, v_out, SF, SI, LF, LI, X, impacts):
    """``step_many`` with the joints' firmware servos and position limits at every step, as
    ``Simulator.step`` applies them: the servos' torques (rows SF, SI: ``compiled.servos``) into
    ``tau`` before the step, the limits (rows LF, LI, scratch X: ``compiled.limits``) after it,
    ``impacts[0]`` counting the joints stopped. Returns the number of steps done: it stops
    before a step that takes a joint across a limit (Python takes that one, finding the moment
    of the impact) or is not finite, with that step's servo update undone; ``q_out``, ``v_out``
    then hold the state before it."""
    BF, BI, TF, TI, CI, CF, KI, KF, KN, W, fluid, WT = _unpack(FB, IB)
    tau, f_ext, n, q_out, v_out = _bare(tau), _bare(f_ext), _bare(n), _bare(q_out), _bare(v_out)
    SF, SI, LF, LI, X = _bare(SF), _bare(SI), _bare(LF), _bare(LI), _bare(X)
    _, WQ, WV, _, _, _ = _carve(W, BI.shape[0], IB[H_NQ], IB[H_NV], TI.shape[0])
    qb, vb = WQ[0], WV[0]  # the running state, in the workspace's stage-0 rows
    qb[:] = q
    vb[:] = v
    for k in range(steps):
        _servo_torques(SF, SI, qb, vb, h, tau)
        if not _step(
            BF, BI, TF, TI, CI, CF, KI, KF, KN, W, method, qb, vb, tau, f_ext, n, fluid, WT, h, q_out, v_out
        ) or _crossing(LF, LI, qb, q_out):
            _servo_restore(SF)
            q_out[:] = qb
            v_out[:] = vb
            return k
        impacts[0] += _enforce_limits(BF, BI, LF, LI, X, q_out, v_out, CI, CF)
        qb[:] = q_out
        vb[:] = v_out
        if WT.shape[0]:
            _next_stage_times(fluid, h)
    return steps


@entry_kernel
def aba_repeat(FB, IB, q, v, tau, f_ext, n, ddq, repeat):
    """``aba`` called ``repeat`` times inside compiled code (benchmarks: the cost without the
    Python call)."""
    for _ in range(repeat):
        aba(FB, IB, q, v, tau, f_ext, n, ddq)


# The one signature Python calls each entry point with (C-contiguous float64 vectors, the int
# buffer, f_ext nb x 6).
_VEC, _MAT, _INT = types.float64[::1], types.float64[:, ::1], types.int64[::1]
_ARR3 = types.float64[:, :, ::1]
SIGNATURES = {
    "aba": (_VEC, _INT, _VEC, _VEC, _VEC, _MAT, _VEC, _VEC),
    "aba_bound": (_VEC, _INT),
    "export": (_VEC, _ARR3, _MAT, _ARR3, _MAT, _MAT, _MAT, _MAT, _MAT, _MAT, _ARR3),
    "step": (_VEC, _INT, types.int64, _VEC, _VEC, _VEC, _MAT, _VEC, types.float64, _VEC, _VEC, _VEC),
}


@functools.cache  # once per process: a closed dispatcher refuses even to look its signature up again
def closed(name: str):
    """The entry point ``name`` (``aba`` or ``step``) compiled for ``SIGNATURES[name]`` (or
    loaded from numba's cache) and closed to other types: called with any other argument
    types it raises TypeError instead of compiling them for half a minute. Numba checks the
    types in C, faster than Python can."""
    dispatcher = globals()[name]
    dispatcher.compile(SIGNATURES[name])
    dispatcher.disable_compile()
    return dispatcher


def entry(name: str):
    """The compiled function itself of ``name`` for ``SIGNATURES[name]``, without numba's
    dispatch on the argument types: for arguments the caller made itself (``aba_bound``), since
    it converts them unchecked."""
    return globals()[name].compile(SIGNATURES[name])


@njit(cache=True, nogil=True, parallel=True)
def batch_step(BF, BI, TF, TI, CI, CF, KI, KF, KN, WS, method, Q, V, TAU, F_EXT, N, fluid, WT, h, steps, ok):
    """``steps`` steps of every copy k (rows of Q, V, TAU, N; F_EXT[k] is nb x 6), in place.
    Copies are split over the threads, each with its own workspace row ``WS[t]``; a copy whose
    state stops being finite keeps its last finite state and gets ``ok[k] = False``. (KN, the
    contact normal forces, is shared by the threads: it is not a result here.)"""
    ncopies = Q.shape[0]
    nthreads = WS.shape[0]
    per = (ncopies + nthreads - 1) // nthreads
    for t in prange(nthreads):
        _, WQ, WV, _, _, _ = _carve(WS[t], BI.shape[0], Q.shape[1], V.shape[1], TI.shape[0])
        qn, vn = WQ[0], WV[0]  # each step's result, in the stage-0 rows of the thread's workspace
        for k in range(t * per, min(ncopies, (t + 1) * per)):
            for _ in range(steps):
                if not ok[k]:
                    break
                if _step(BF, BI, TF, TI, CI, CF, KI, KF, KN, WS[t], method, Q[k], V[k], TAU[k], F_EXT[k],
                         N[k], fluid, WT, h, qn, vn):  # fmt: skip
                    Q[k, :] = qn
                    V[k, :] = vn
                else:
                    ok[k] = False
