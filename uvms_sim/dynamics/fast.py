"""The compiled kernels of ``dynamics.compiled`` behind a small Python API.

- ``FastDynamics``: forward dynamics and one integration step of one model, same inputs and
  results as the reference functions (``aba``, ``step_rk4``, ``step_semi_implicit_euler``
  with thrusters as ``Simulator`` applies them), one call into compiled code each, every array
  allocated once.
- ``BatchDynamics``: N copies of a model stepped together (Monte-Carlo, learning), split over
  the cores.

The environment's density and gravity are folded into the tables (rebuilt if they change);
the current is read from the environment at each stage time.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import partial

import numpy as np
from numba import get_num_threads

from ..hydro.environment import Environment
from ..model.model import Model
from ..spatial import Array
from . import compiled
from .contact import Contacts
from .flat import (
    MIMIC,
    NKF,
    NKI,
    NLF,
    NLI,
    NSI,
    NSV,
    NW,
    WA,
    WPW,
    WRW,
    WV,
    flatten,
    laid_out,
    limit_fields,
    pack,
    thrust_offset,
    wave_table,
)
from .integrate import INTEGRATORS, NonFiniteStateError
from .kinematics import wrench_sum

METHODS = {"rk4": 0, "semi_implicit_euler": 1}


_F64 = np.dtype(np.float64)


def _f64(x, ndim: int = 1) -> Array:
    """``x`` itself when it is already a C-contiguous float64 array of ``ndim`` dimensions (no
    copy, no call into numpy), else a converted copy; ValueError for another dimension (the
    compiled entry points take exactly these types, unchecked)."""
    if type(x) is np.ndarray and x.dtype is _F64 and x.ndim == ndim and x.flags.c_contiguous:
        return x
    out = np.ascontiguousarray(x, dtype=float)
    if out.ndim != ndim:
        raise ValueError(f"expected a {ndim}-dimensional array, got shape {out.shape}")
    return out


class FastDynamics:
    """Compiled forward dynamics and integration of one model in one environment."""

    def __init__(self, model: Model, env: Environment | None = None, thrusters=None) -> None:
        self.model = model
        self.env = env or Environment()
        self.thrusters = thrusters
        self.nt = 0 if thrusters is None else len(thrusters)
        # what the tables depend on besides the model: density, gravity, the surface and the
        # thruster models (a new supply voltage changes their constants); see _refresh
        self._key: tuple = ()
        self.wave_rows = wave_table(None)
        self.no_wrench = np.zeros((model.nbodies, 6))
        self.no_thrust = np.zeros(self.nt)
        self.zero_tau = np.zeros(model.nv)
        self.ddq = np.zeros(model.nv)
        self.q_out = np.zeros(model.nq)
        self.v_out = np.zeros(model.nv)
        self.CI = np.zeros((0, 2), dtype=np.int64)  # rigid connections: parent, child
        self.CF = np.zeros((0, 14))  # E (child_R_parent, row-major), r, Baumgarte α, β
        self.constraints: list = []
        self.baumgarte = (5.0, 5.0)
        self.KI = np.zeros((0, NKI), dtype=np.int64)  # contact rows (contact.Contacts): body, kind, other
        self.KF = np.zeros((0, NKF))
        self.contacts: Contacts | None = None
        self._contacts_version = -1
        self._refresh()  # the tables, packed
        # the entry points (compiled.closed, compiled.entry), loaded on first use (0.1-0.3 s each)
        self._aba: Callable[..., None] | None = None
        self._export: Callable[..., None] | None = None
        self._aba_bound: Callable[..., None] | None = None
        self._step: Callable[..., bool] | None = None

    def _pack(self) -> None:
        """(Re)build the kernels' two buffers (``flat.pack``) from the tables, connections and
        contacts; ``W`` (the workspace), ``KN`` (the last seabed normal force of every contact
        point, N), ``fluid`` (stage (t, t+h/2, t+h) x (current, acceleration, gravity,
        (surface depth, has surface, 0))) and ``thrust`` are views of them."""
        model = self.model
        self.FB, self.IB, views = pack(
            self.tables, self.CI, self.CF, self.KI, self.KF, model.nq, model.nv, self.wave_rows
        )
        self.W, self.KN, self.fluid, self.WT = views["W"], views["KN"], views["fluid"], views["WT"]
        # the tables as the kernels read them (BI with the couplings the ABA holds, flat.mimic_groups)
        self.packed_tables = (views["BF"], views["BI"], views["TF"], views["TI"])
        # whether the ABA's body accelerations are the constrained ones: no connections, or
        # couplings that the ABA holds itself (else the correction changes q̈ after them)
        self.exact_body_accelerations = not len(self.CI) or views["BI"][self.CI[0, 1], MIMIC] >= 0
        # the contact rows live here from now on (the slipping points move in them)
        self.KI, self.KF = views["KI"], views["KF"]
        if self.contacts is not None:
            self.contacts.bind(self.KI, self.KF, self.KN)
        # the state and inputs of a prepared call (PreparedAba)
        self.q_in, self.v_in, self.tau_in = views["q"], views["v"], views["tau"]
        self.f_ext_in, self.n_in, self.ddq_in = views["f_ext"], views["n"], views["ddq"]
        o = thrust_offset(model)
        self.thrust = self.W[o : o + self.nt]  # thrusts (N) of the last evaluation, thruster order
        self._fill_constants()
        self._synced: tuple = ()  # what the buffers were last brought up to date with (_sync)

    def set_contacts(self, contacts) -> None:
        """The contact rows (``contact.Contacts``) evaluated in every forward pass; the rows then
        live in this object's buffer (``Contacts.bind``), where both paths read and move them."""
        if contacts is self.contacts and (contacts is None or contacts.version == self._contacts_version):
            return
        self.contacts = contacts
        if contacts is None:
            self.KI, self.KF = np.zeros((0, NKI), dtype=np.int64), np.zeros((0, NKF))
        else:
            self.KI, self.KF = contacts.KI, contacts.KF
            self._contacts_version = contacts.version
        self._pack()

    def normal_forces(self) -> dict[str, float]:
        """Seabed normal force of every contact point (N) at the last evaluation, by name."""
        if self.contacts is None:
            return {}
        names = self.contacts.names
        return {n: float(self.KN[k]) for k, n in enumerate(names) if n and self.KI[k, 1] == 0}

    def set_constraints(self, constraints, alpha: float = 5.0, beta: float = 5.0) -> None:
        """Rigid connections (``constraints.RigidConstraint``) and joint couplings
        (``constraints.JointCoupling``) enforced by the Udwadia-Kalaba
        correction in every evaluation, with Baumgarte gains α, β (1/s)."""
        constraints = list(constraints)
        # the same objects (asked at every step: compared in C, without a generator)
        same = len(constraints) == len(self.constraints) and all(
            map(operator.is_, constraints, self.constraints)
        )
        if same and (alpha, beta) == self.baumgarte:
            return
        from .constraints import JointCoupling

        self.constraints, self.baumgarte = list(constraints), (alpha, beta)
        # a joint coupling's row: parent -1 - leader, its multiplier and offset where a rigid
        # connection has E (``compiled.constraints._constraint_rows``)
        self.CI = np.array(
            [(-1 - c.parent if isinstance(c, JointCoupling) else c.parent, c.child) for c in constraints],
            dtype=np.int64,
        ).reshape(-1, 2)
        self.CF = np.array(
            [
                [c.multiplier, c.offset, *[0.0] * 10, alpha, beta]
                if isinstance(c, JointCoupling)
                else [*np.ravel(c.E), *c.r, alpha, beta]
                for c in constraints
            ],
            dtype=float,
        ).reshape(-1, 14)
        self._pack()

    def body_frame(self, i: int) -> tuple[Array, Array, Array]:
        """Views of body i's world rotation (body -> world), velocity and spatial acceleration
        (body axes) from the last evaluation, without exporting the rest."""
        o = i * NW
        W = self.W
        return W[o + WRW : o + WRW + 9].reshape(3, 3), W[o + WV : o + WV + 6], W[o + WA : o + WA + 6]

    def body_position(self, i: int) -> Array:
        """A view of body i's origin in the world from the last evaluation."""
        o = i * NW
        return self.W[o + WPW : o + WPW + 3]

    def export(self, data) -> None:
        """Copy the last evaluation's forward pass and accelerations into a reference ``Data``
        (placements, world poses, velocities, c, biases, body accelerations ``a``) and form each
        body's X from its placement, so that sensors and publishers read it as after the
        reference ``aba`` (one compiled call, ``compiled.entry.export``)."""
        if len(data.E) != self.model.nbodies:  # the kernel reads W by the bodies of data
            raise ValueError(f"export: a Data of {len(data.E)} bodies for a model of {self.model.nbodies}")
        call = self._export or self._entry("export")
        call(
            self.W,
            data.E,
            data.r,
            data.R_world,
            data.p_world,
            data.v,
            data.v_rel,
            data.c,
            data.a,
            data.bias,
            data.X,
        )

    def _fill_constants(self) -> None:
        env = self.env
        self.fluid[:, 2] = env.gravity_vector
        self.fluid[:, 3] = (0.0, 0.0, 0.0) if env.surface is None else (env.surface, 1.0, 0.0)

    def _refresh(self) -> None:
        """Rebuild (and pack) the tables when what they depend on changed (``_key``)."""
        th, env = self.thrusters, self.env
        key = (env.density, env.gravity, env.surface, 0 if th is None else th.version, id(env.waves))
        if key != self._key:
            self._key = key
            self.tables = flatten(self.model, env, th)
            self.wave_rows = wave_table(env.waves if env.surface is not None else None)
            self._pack()

    def _sync(self, t: float, h: float) -> None:
        """Before every kernel call: the tables (``_refresh``) and the fluid of the stages t,
        t + h/2, t + h (``fluid_at``) up to date. With a constant current, one comparison of
        what they depend on: this runs at every step."""
        env, th = self.env, self.thrusters
        if env.current_profile is None and env.waves is None:
            c, a = env.current, env.current_acceleration
            try:
                current = c.tolist() + a.tolist()
            except AttributeError:  # assigned a list or tuple
                current = list(np.asarray(c, dtype=float)) + list(np.asarray(a, dtype=float))
            key = (env.density, env.gravity, env.surface, 0 if th is None else th.version, current)
            if key != self._synced:
                self._refresh()
                self.fluid_at(t, h)
                self._synced = key
        else:
            self._synced = ()
            self._refresh()
            self.fluid_at(t, h)

    def fluid_at(self, t: float, h: float) -> Array:
        """Current, its acceleration, gravity, the surface and the time at t, t + h/2, t + h
        (world NED; gravity and the surface are kept by ``_refresh``, which every kernel call
        goes through; the waves read the time)."""
        env = self.env
        if env.current_profile is None:
            self.fluid[:, 0] = env.current
            self.fluid[:, 1] = env.current_acceleration
        else:
            for s, ts in enumerate((t, t + 0.5 * h, t + h)):
                self.fluid[s, 0], self.fluid[s, 1] = env.fluid_state(ts)
        self.fluid[0, 3, 2], self.fluid[1, 3, 2], self.fluid[2, 3, 2] = t, t + 0.5 * h, t + h
        return self.fluid

    def _inputs(self, q, v, tau, f_ext, n) -> tuple[Array, Array, Array, Array, Array]:
        """Inputs as the kernels take them (C-contiguous float64; defaults for None)."""
        tau = self.zero_tau if tau is None else _f64(tau)
        f_ext = self.no_wrench if f_ext is None else _f64(f_ext, 2)
        return _f64(q), _f64(v), tau, f_ext, self._speeds(n)

    def _speeds(self, n: Array | None) -> Array:
        if n is not None:
            return _f64(n)
        return self.thrusters.n if self.thrusters is not None else self.no_thrust

    def aba(self, q, v, tau=None, f_ext=None, n=None, t: float = 0.0) -> Array:
        """q̈ at (q, v) for tau, body wrenches f_ext (nb x 6) and thruster shaft speeds n
        (default: the bank's current speeds; no thrust without a bank)."""
        self._sync(t, 0.0)
        call = self._aba or self._entry("aba")
        args = (q, v, self.zero_tau if tau is None else tau, self.no_wrench if f_ext is None else f_ext)
        try:
            call(self.FB, self.IB, *args, self._speeds(n), self.ddq)
        except TypeError:  # an argument of another type: converted (or a clear error)
            call(self.FB, self.IB, *self._inputs(q, v, tau, f_ext, n), self.ddq)
        return self.ddq.copy()

    def _entry(self, name: str) -> Callable:
        """The entry point ``name`` (``compiled.closed``; ``compiled.entry`` for ``aba_bound``),
        kept for the next calls."""
        call = compiled.entry(name) if name == "aba_bound" else compiled.closed(name)
        setattr(self, "_" + name, call)
        return call

    def prepare_aba(self, q, v, tau=None, f_ext=None, n=None) -> PreparedAba:
        """A prepared call of ``aba`` starting from this state and these inputs (``PreparedAba``;
        one per ``FastDynamics``: a second one shares the first one's arrays)."""
        return PreparedAba(self, q, v, tau, f_ext, n)

    def aba_repeat(self, q, v, repeat: int, tau=None) -> Array:
        """``aba`` ``repeat`` times inside compiled code (benchmarks)."""
        self._sync(0.0, 0.0)
        compiled.aba_repeat(self.FB, self.IB, *self._inputs(q, v, tau, None, None), self.ddq, repeat)
        return self.ddq.copy()

    def step(
        self, q, v, h: float, method: str = "rk4", tau=None, f_ext=None, n=None, t: float = 0.0, thrust=None
    ):
        """One step of ``method`` from time t; new ``(q, v)``; the thrusts of the last evaluation
        also into ``thrust`` when given (``Simulator`` passes its bank's). A non-finite result
        raises ``NonFiniteStateError`` with the reference implementation's message. (The hot
        path of ``Simulator.step``: every line here is paid at every step.)"""
        self._sync(t, h)
        q_out, v_out = self.q_out, self.v_out
        call = self._step or self._entry("step")
        tau = self.zero_tau if tau is None else tau
        f_ext = self.no_wrench if f_ext is None else f_ext
        n = self._speeds(n)
        thrust = self.thrust if thrust is None else thrust
        try:
            ok = call(self.FB, self.IB, METHODS[method], q, v, tau, f_ext, n, h, q_out, v_out, thrust)
        except TypeError:  # an argument of another type: converted (or a clear error)
            q, v, tau, f_ext, n = self._inputs(q, v, tau, f_ext, n)
            h, thrust = float(h), _f64(thrust)
            ok = call(self.FB, self.IB, METHODS[method], q, v, tau, f_ext, n, h, q_out, v_out, thrust)
        if not ok:
            self._raise_non_finite(q, v, h, method, tau, f_ext, n, t)
        return q_out.copy(), v_out.copy()

    def step_many(
        self, q, v, h: float, steps: int, method: str = "rk4", tau=None, f_ext=None, n=None, t: float = 0.0
    ):
        """``steps`` steps with inputs held, in one compiled call (a constant current only; waves
        move on with time); same result as ``step`` called ``steps`` times. Returns ``(q, v, done)``: on a
        non-finite value ``done < steps`` and ``(q, v)`` is the last finite state."""
        if self.env.current_profile is not None:
            raise ValueError("step_many needs a constant current; step once per stage time instead")
        q, v, tau, f_ext, n = self._inputs(q, v, tau, f_ext, n)
        self._sync(t, h)
        args = (METHODS[method], q, v, tau, f_ext, n, h, steps, self.q_out, self.v_out)
        done = compiled.step_many(self.FB, self.IB, *args)
        return self.q_out.copy(), self.v_out.copy(), int(done)

    def step_joints(
        self, q, v, h: float, steps: int, method: str, tau, f_ext, t: float, servos: JointTables
    ) -> tuple[Array, Array, int]:
        """``step_many`` with the joints' firmware servos and position limits of ``servos``
        (``JointTables``) at every step (``compiled.entry.step_joints``): the servos write their
        torques into ``tau`` (which must be a C-contiguous float64 vector) and their state into
        their rows. Returns ``(q, v, done)``: ``done < steps`` before a step that crosses a limit
        or is not finite, ``(q, v)`` then the state before it, for the caller to take that step."""
        if self.env.current_profile is not None:
            raise ValueError("step_joints needs a constant current; step once per stage time instead")
        q, v, _, f_ext, n = self._inputs(q, v, None, f_ext, None)
        self._sync(t, h)
        done = compiled.step_joints(
            self.FB, self.IB, METHODS[method], q, v, tau, f_ext, n, h, steps, self.q_out, self.v_out,
            *servos.arrays(),
        )  # fmt: skip
        return self.q_out.copy(), self.v_out.copy(), int(done)

    def _raise_non_finite(self, q, v, h, method, tau, f_ext, n, t) -> None:
        """Re-run the step with the reference code, which names the first non-finite value."""
        from .constraints import constrained_aba

        env, model = self.env, self.model
        data = model.create_data()

        def wrench(d):  # the thrusters at the speeds this step was given
            if self.thrusters is None:
                return wrench_sum(f_ext, d, self.contacts)
            saved = self.thrusters.n.copy()
            self.thrusters.n[:] = n
            try:
                return wrench_sum(f_ext, d, self.thrusters, self.contacts)
            finally:
                self.thrusters.n[:] = saved

        INTEGRATORS[method](
            model,
            q,
            v,
            h,
            lambda qq, vv, tt: constrained_aba(
                model, data, qq, vv, tau, self.constraints, env, wrench, tt, *self.baumgarte
            ),
            t,
        )
        raise NonFiniteStateError(f"non-finite state at t={t:.6g} s; state not advanced")


class JointTables:
    """What ``FastDynamics.step_joints`` reads and writes besides the dynamics' buffers: the
    servos' rows (``flat``'s SF, SI: ``actuators.servo.JointServos.SF``, ``.SI``, or none),
    the position limits of the model's 1-DOF joints (LF, LI), the scratch of an impact and
    the count of joints stopped by their limits (``impacts[0]``)."""

    def __init__(self, model: Model, SF: np.ndarray | None = None, SI: np.ndarray | None = None) -> None:
        limited = [
            (model.idx_q[i], model.idx_v[i], j.lower, j.upper)
            for i, j in enumerate(model.joints)
            if j.nv == 1 and j.nq == 1 and (np.isfinite(j.lower) or np.isfinite(j.upper))
        ]
        self.model = model
        self.servos: object = None  # the servos the rows belong to (``Simulator`` keeps track)
        self.SF = np.zeros((0, NSV)) if SF is None else SF
        self.SI = np.zeros((0, NSI), dtype=np.int64) if SI is None else SI
        self.LF = np.array([(lo, hi) for _, _, lo, hi in limited], dtype=float).reshape(-1, NLF)
        self.LI = np.array([(iq, iv, 0) for iq, iv, _, _ in limited], dtype=np.int64).reshape(-1, NLI)
        self.X = np.zeros(laid_out(limit_fields(model.nbodies, model.nv, len(limited)))[1])
        self.impacts = np.zeros(1, dtype=np.int64)

    def arrays(self) -> tuple[np.ndarray, ...]:
        return self.SF, self.SI, self.LF, self.LI, self.X, self.impacts


class PreparedAba:
    """``FastDynamics.aba`` as a prepared call: the state and inputs live in the kernels' own
    buffer, as the arrays ``q``, ``v``, ``tau``, ``f_ext`` (nb x 6) and ``n`` (thruster shaft
    speeds) of this object, which the caller writes in place; calling it returns q̈ (the same
    array every time). One compiled call with two arguments and no checks, as
    ``pinocchio.aba`` takes its model and data: the environment (current, density, gravity,
    surface), thruster models, contacts and connections are those at preparation; prepare again
    after changing them (a prepared call then still computes with the old ones). The fluid is
    the buffer's: a ``step`` of the same ``FastDynamics`` at another time with a time-varying
    current moves it."""

    def __init__(self, fast: FastDynamics, q, v, tau=None, f_ext=None, n=None) -> None:
        fast._sync(0.0, 0.0)
        self.q, self.v, self.tau = fast.q_in, fast.v_in, fast.tau_in
        self.f_ext, self.n, self.ddq = fast.f_ext_in, fast.n_in, fast.ddq_in
        self.q[:], self.v[:] = q, v
        self.tau[:] = 0.0 if tau is None else tau
        self.f_ext[:] = 0.0 if f_ext is None else f_ext
        self.n[:] = fast._speeds(n)
        self._call = partial(fast._aba_bound or fast._entry("aba_bound"), fast.FB, fast.IB)

    def __call__(self) -> Array:
        self._call()
        return self.ddq


class BatchDynamics:
    """``copies`` independent copies of one model, stepped together: states ``q`` (N x nq) and
    ``v`` (N x nv), inputs ``tau`` (N x nv), ``f_ext`` (N x nb x 6) and thruster shaft speeds
    ``n`` (N x nt), all arrays the caller may write. ``ok[k]`` turns False for a copy whose
    state stopped being finite (it keeps its last finite state)."""

    def __init__(
        self, fast: FastDynamics, copies: int, q: Array | None = None, v: Array | None = None
    ) -> None:
        model = fast.model
        self.fast = fast
        self.q = np.tile(model.neutral() if q is None else np.asarray(q, dtype=float), (copies, 1))
        self.v = np.tile(np.zeros(model.nv) if v is None else np.asarray(v, dtype=float), (copies, 1))
        self.tau = np.zeros((copies, model.nv))
        self.f_ext = np.zeros((copies, model.nbodies, 6))
        self.n = np.zeros((copies, fast.nt))
        self.ok = np.ones(copies, dtype=np.bool_)
        self.W = np.zeros((max(1, get_num_threads()), fast.W.size))
        self.t = 0.0

    def step(self, h: float, steps: int = 1, method: str = "rk4") -> None:
        """Advance every copy by ``steps`` steps of h (inputs held)."""
        fast = self.fast
        fast._sync(self.t, h)
        fluid = fast.fluid
        if (fast.env.current_profile is not None or len(fast.WT)) and steps > 1:
            raise ValueError("a time-varying current or waves need one step per call")
        compiled.batch_step(
            *fast.packed_tables,
            fast.CI,
            fast.CF,
            fast.KI,
            fast.KF,
            fast.KN,
            self.W,
            METHODS[method],
            self.q,
            self.v,
            self.tau,
            self.f_ext,
            self.n,
            fluid,
            fast.WT,
            h,
            steps,
            self.ok,
        )
        self.t += steps * h
