"""``Simulator``: a model, its state and environment, advanced by ``step(dt, ...)``.

The one entry point the ROS node, the SITL/HIL bridges and the replay tools drive. Pure
numpy: no ROS import. Inputs are validated: a wrong length or a non-finite value raises
``ValueError`` and leaves the state unchanged.

Per step: joint motors compute their efforts and the thrusters their shaft speeds (held over
the step), then the integrator advances ``(q, v)`` with, at every stage, the forward dynamics
(ABA; with rigid connections the Udwadia-Kalaba correction), thrust at the stage's advance
speeds and contact forces at the stage's positions.

A system with tethers (``uvms_sim.tether``) steps them every ``tether_period`` seconds of
simulated time (5 ms: several physics steps, which then run in one compiled call): the tethers'
wrenches at a coupling act on their links until the next, and the links' motion over the period
drives the lines' ends.

Steps run in the compiled kernels (``dynamics.fast``; rigid connections and contacts
included), which tests keep equal to the reference path to 1e-10; ``compiled=False`` forces
the reference path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from transforms3d.euler import euler2quat

from .actuators.bank import ThrusterBank, thruster_bank
from .actuators.joints import JointMotors
from .actuators.servo import JointServos
from .dynamics.constraints import (
    Constraint,
    JointCoupling,
    RigidConstraint,
    constrained_aba,
    coupling_error,
    pose_error,
    project_velocity,
)
from .dynamics.contact import Contacts
from .dynamics.fast import METHODS, FastDynamics, JointTables
from .dynamics.flat import NW, WPW, WRW
from .dynamics.integrate import INTEGRATORS
from .dynamics.kinematics import ExternalWrench, wrench_sum
from .dynamics.touch import PAIR_ROWS, Touch
from .hydro.environment import Environment
from .log import logger
from .model.crba import crba
from .model.kinematics import check_finite, placements
from .model.model import Model
from .model.system import System
from .model.yaml_source import ConfigError
from .scene import ContactLaw
from .spatial import Array
from .tether.properties import TetherSpec


@dataclass
class State:
    """Configuration, velocity and time of a system."""

    q: Array
    v: Array
    t: float = 0.0


@dataclass
class Simulator:
    """Fixed-step simulation of one model."""

    model: Model
    env: Environment = field(default_factory=Environment)
    method: str = "rk4"
    thrusters: ThrusterBank | None = None
    joint_motors: JointMotors | JointServos | None = None
    contacts: Contacts | None = None
    constraints: list[Constraint] = field(default_factory=list)  # rigid connections, joint couplings
    baumgarte: tuple[float, float] = (5.0, 5.0)  # (α, β) of the constraint stabilisation, 1/s
    system: System | None = None  # the description it was built from, if any
    compiled: bool = True  # use the compiled kernels when the step allows it
    tethers: list = field(default_factory=list)  # tether.tether.Tether, stepped every tether_period
    tether_period: float = 0.005  # s of simulated time between the tethers' couplings
    touch: Touch | None = None  # the touching pairs' detection (dynamics.touch), every touch.law.period

    def __post_init__(self) -> None:
        if self.method not in INTEGRATORS:
            raise ValueError(f"integrator {self.method!r} is not one of {sorted(INTEGRATORS)}")
        self.data = self.model.create_data()
        self.state = State(self.model.neutral(), np.zeros(self.model.nv))
        self.tau = np.zeros(self.model.nv)
        self.f_ext = np.zeros((self.model.nbodies, 6))
        self._loads: Array | None = None  # during a step with tethers: f_ext and their wrenches
        self._loads_buffer = np.zeros((self.model.nbodies, 6))
        self._tether_wrench = np.zeros((self.model.nbodies, 6))  # held between couplings, body axes
        self._tether_due = 0.0  # simulated time since the tethers' last coupling
        self._fast: FastDynamics | None = None
        self._joints: JointTables | None = None  # the compiled steps' joint tables (_joint_tables)
        m = self.model
        self._limits = [  # (q index, v index, lower, upper) of every 1-DOF joint with a position limit
            (m.idx_q[i], m.idx_v[i], j.lower, j.upper)
            for i, j in enumerate(m.joints)
            if j.nv == 1 and j.nq == 1 and (np.isfinite(j.lower) or np.isfinite(j.upper))
        ]
        self.limit_impacts = 0  # joints stopped by their limits so far (an impact, or resting on it)
        names = {b.joint_name: i for i, b in enumerate(m.bodies)}
        for i, j in enumerate(m.joints):  # mimic joints (a gripper's fingers on its push rod)
            if j.mimic is not None and not any(c.name == m.bodies[i].joint_name for c in self.constraints):
                lead, mult, offset = j.mimic
                self.constraints.append(JointCoupling(m.bodies[i].joint_name, names[lead], i, mult, offset))
        self._limit_data = self.model.create_data()  # scratch of the joint-limit impacts
        self._contact_dt = 0.0  # the step the contact stiffnesses were last checked for
        self._touch_due = math.inf  # simulated time since the last detection of touching pairs

    @classmethod
    def from_system(cls, system: System, method: str = "rk4") -> Simulator:
        """A simulator of a loaded description, at its initial configuration."""
        bank = thruster_bank(system)
        contacts = None
        law = system.scene.contact if system.scene is not None else None
        if system.seabeds or system.anchors or law is not None:
            rows = PAIR_ROWS if law is not None else 0
            contacts = Contacts(system.model, list(system.seabeds), list(system.anchors), rows)
        sim = cls(system.model, system.environment, method, bank, contacts=contacts)
        if law is not None and system.scene is not None:
            sim.touch = Touch(system.model, system.scene, law)
            objects = [v.name for v in system.vehicles if v.kind == "object"]
            try:
                sim._check_overlaps(system.initial_q, objects)
            except ValueError as exc:  # an error of the description
                raise ConfigError(system.source or system.name, "scene.objects", str(exc)) from None
        sim.reset(system.initial_q)
        for c in system.constraints:
            sim.connect(c.parent, c.child, c.name, c.E, c.r)
        sim.system = system
        sim.attach_tethers(system.tethers)
        return sim

    # -- tethers --------------------------------------------------------------------------------
    def attach_tethers(self, specs: tuple[TetherSpec, ...] | list[TetherSpec]) -> None:
        """Start a tether (``tether.tether.Tether``, MoorDyn) for each spec, its vehicle end at
        its link's point where the link is now (replacing any running ones)."""
        from .tether.tether import Tether  # MoorDyn is loaded only for systems with a tether

        for old in self.tethers:
            old.close()
        self.tethers = []
        for spec in specs:
            body = self.model.body_index(spec.link)
            _, x, _ = self.link_point(body, spec.position)
            self.tethers.append(Tether(spec, body, self.env, x, self.state.t))
        self._tether_due = 0.0
        self._tether_wrench[:] = 0.0  # a line starts at rest: its pull comes with its first coupling

    def link_point(self, body: int, r: Array) -> tuple[Array, Array, Array]:
        """World rotation of link ``body`` (link -> world) and the world position and velocity
        of its point ``r`` (link axes) at the current state."""
        root = self._root_point(body, r)
        if root is not None:
            R, x, xd = root
            return np.array(R), np.array(x), np.array(xd)
        from .dynamics.kinematics import forward_kinematics

        m = self.model
        forward_kinematics(m, self._limit_data, self.state.q, self.state.v, self.env, None, self.state.t)
        d = self._limit_data
        R = d.R_world[body]
        nu = d.v[body]
        return R, d.p_world[body] + R @ r, R @ (nu[:3] + np.cross(nu[3:], r))

    def _root_point(self, body: int, r) -> tuple[tuple, tuple, tuple] | None:
        """``link_point`` as tuples of floats (the rotation's rows, the position, the velocity)
        for a vehicle's root, from q and v alone; None for any other link."""
        m = self.model
        if m.parents[body] >= 0 or m.joints[body].type != "free":
            return None
        iq, iv = m.idx_q[body], m.idx_v[body]
        px, py, pz, w, x, y, z = self.state.q[iq : iq + 7].tolist()
        u0, u1, u2, w0, w1, w2 = self.state.v[iv : iv + 6].tolist()
        r0, r1, r2 = (float(c) for c in r)
        k = 2.0 / (w * w + x * x + y * y + z * z)
        R0 = (1 - k * (y * y + z * z), k * (x * y - w * z), k * (x * z + w * y))
        R1 = (k * (x * y + w * z), 1 - k * (x * x + z * z), k * (y * z - w * x))
        R2 = (k * (x * z - w * y), k * (y * z + w * x), 1 - k * (x * x + y * y))
        c0, c1, c2 = u0 + w1 * r2 - w2 * r1, u1 + w2 * r0 - w0 * r2, u2 + w0 * r1 - w1 * r0  # v + ω × r
        return (
            (R0, R1, R2),
            (px + R0[0] * r0 + R0[1] * r1 + R0[2] * r2,
             py + R1[0] * r0 + R1[1] * r1 + R1[2] * r2,
             pz + R2[0] * r0 + R2[1] * r1 + R2[2] * r2),
            (R0[0] * c0 + R0[1] * c1 + R0[2] * c2, R1[0] * c0 + R1[1] * c1 + R1[2] * c2,
             R2[0] * c0 + R2[1] * c1 + R2[2] * c2),
        )  # fmt: skip

    def _tether_loads(self) -> Array:
        """``f_ext`` plus the tethers' wrenches of their last coupling (into a buffer)."""
        return np.add(self.f_ext, self._tether_wrench, out=self._loads_buffer)

    def _couple_tethers(self, dt: float) -> None:
        """After ``dt`` more seconds of steps: at each ``tether_period``, every line from its last
        coupling to now, its end at its link's point now, and its new wrench on the link."""
        self._tether_due += dt
        if self._tether_due < self.tether_period * (1.0 - 1e-9):
            return
        due, self._tether_due = self._tether_due, 0.0
        self._tether_wrench[:] = 0.0
        for tether in self.tethers:  # floats where the link is a vehicle's root (no arrays to build)
            R, x, xd = self._root_point(tether.body, tether.end) or self.link_point(tether.body, tether.end)
            tether.advance(self.state.t - due, due, x, xd)
            tether.wrench(R, self._tether_wrench[tether.body])

    def reset(self, q: Array | None = None, v: Array | None = None) -> None:
        """Back to ``q`` (default: neutral) and ``v`` (default: rest) at t = 0; tethers start
        again at their description's length, at rest from their vehicles' new places."""
        q = self.model.neutral() if q is None else check_finite("q", q, self.model.nq)
        v = np.zeros(self.model.nv) if v is None else check_finite("v", v, self.model.nv)
        self.state = State(np.array(q, dtype=float), np.array(v, dtype=float), 0.0)
        if self.tethers:  # the lines start again where their vehicles now are, at rest
            self.attach_tethers([t.spec for t in self.tethers])
        self._forget_touch()  # touching pairs found again

    # -- inputs -------------------------------------------------------------------------------
    def set_generalized_forces(self, tau: Array) -> None:
        self.tau = check_finite("tau", tau, self.model.nv).copy()

    def set_body_wrench(self, body: int | str, wrench: Array) -> None:
        """External wrench ``[force; moment]`` on a body, body axes (FRD), about its origin."""
        i = self.model.body_index(body) if isinstance(body, str) else body
        self.f_ext[i] = check_finite("wrench", wrench, 6)

    def set_thruster_pwm(self, pwm: Array) -> int:
        """PWM (us) for every thruster, in ``thrusters.names`` order; see ``ThrusterBank.set_pwm``
        (non-finite or wrong length: ValueError, nothing changed; returns the number clamped)."""
        if self.thrusters is None:
            raise ValueError("this system has no thrusters")
        return self.thrusters.set_pwm(pwm)

    # -- rigid connections made and broken at run time (docking) ---------------------------------
    def connect(
        self,
        parent: int | str,
        child: int | str,
        name: str | None = None,
        E: Array | None = None,
        r: Array | None = None,
    ) -> RigidConstraint:
        """Bolt body ``child`` to body ``parent``: at relative pose ``(E, r)`` (child_R_parent,
        child origin in parent axes), by default where it is now. The velocities are projected
        onto the connection (the momentum-conserving inelastic impulse of docking)."""
        p = self.model.body_index(parent) if isinstance(parent, str) else parent
        c = self.model.body_index(child) if isinstance(child, str) else child
        name = name or f"{self.model.bodies[p].name}_to_{self.model.bodies[c].name}"
        if any(k.name == name for k in self.constraints):
            raise ValueError(f"a connection named {name!r} exists already")
        if E is None or r is None:
            placements(self.model, self.data, self.state.q)
            Rp, pp = self.data.R_world[p], self.data.p_world[p]
            Rc, pc = self.data.R_world[c], self.data.p_world[c]
            E, r = Rc.T @ Rp, Rp.T @ (pc - pp)
        con = RigidConstraint(name, p, c, np.asarray(E, dtype=float), np.asarray(r, dtype=float))
        self.constraints.append(con)
        s = self.state
        self.state = State(s.q, project_velocity(self.model, self.data, s.q, s.v, self.constraints), s.t)
        return con

    def disconnect(self, name: str) -> None:
        """Break a connection (undocking); the bodies then move freely from their state."""
        for k, c in enumerate(self.constraints):
            if c.name == name:
                del self.constraints[k]
                return
        raise KeyError(f"no connection named {name!r}: {[c.name for c in self.constraints]}")

    def constraint_error(self) -> Array:
        """Pose error ``[e_p; e_R]`` of every connection (m, rad), one row each."""
        placements(self.model, self.data, self.state.q)
        out = np.zeros((len(self.constraints), 6))
        for k, c in enumerate(self.constraints):
            if isinstance(c, JointCoupling):
                out[k, 0] = coupling_error(self.model, self.state.q, c)
            else:
                out[k] = pose_error(self.data, c)
        return out

    # -- free objects of the scene (model.objects), added, removed and placed at run time ------
    def add_object(self, spec: dict, base_dir: str | Path | None = None) -> None:
        """Add a free object (a mapping as a description's ``scene.objects`` entry: name, shape,
        size or file, mass or density, xyz, rpy...) at its pose, at rest; a relative mesh
        ``file`` is found from ``base_dir`` (default: the working directory); ``ConfigError``
        naming the key for a bad one, ``ValueError`` if it would start inside another body or the
        scene (nothing changed then)."""
        from .model.objects import object_spec, with_object

        system = self._system()
        spec_ = object_spec(spec, self.env.density, None if base_dir is None else Path(base_dir))
        new = with_object(system, spec_)
        if new.scene is not None and new.scene.contact is None:
            new = replace(new, scene=replace(new.scene, contact=ContactLaw()))
        self._rebuild(new, [spec_.name])

    def remove_object(self, name: str) -> None:
        """Remove the free object ``name`` (KeyError naming the objects there are)."""
        from .model.objects import without_object

        self._rebuild(without_object(self._system(), name), [])

    def place_object(self, name: str, xyz, rpy=(0.0, 0.0, 0.0), velocity=None) -> None:
        """Put the free object ``name`` at ``xyz`` (NED, m) and ``rpy`` (rad), with ``velocity``
        (6, body axes; default at rest); ValueError for non-finite values or a place inside
        another body or the scene (nothing changed then)."""
        system = self._system()
        if name not in [v.name for v in system.vehicles if v.kind == "object"]:
            raise KeyError(
                f"no object named {name!r}: {[v.name for v in system.vehicles if v.kind == 'object']}"
            )
        i = self.model.body_index(name)
        xyz = check_finite("xyz", xyz, 3)
        rpy = check_finite("rpy", rpy, 3)
        vel = np.zeros(6) if velocity is None else check_finite("velocity", velocity, 6)
        q, v = self.state.q.copy(), self.state.v.copy()
        iq, iv = self.model.idx_q[i], self.model.idx_v[i]
        q[iq : iq + 3], q[iq + 3 : iq + 7], v[iv : iv + 6] = xyz, euler2quat(*rpy, axes="sxyz"), vel
        self._check_overlaps(q, [name])
        self.state = State(q, v, self.state.t)
        self._forget_touch()

    def _system(self) -> System:
        if self.system is None:
            raise ValueError("objects need a simulator built from a description (Simulator.from_system)")
        return self.system

    def _check_overlaps(
        self, q: Array, names: list[str], touch: Touch | None = None, model: Model | None = None
    ) -> None:
        """ValueError if one of the bodies ``names`` would be deeper than the contact margin in
        another body or the scene at ``q`` (a body spawned inside another is thrown out of it)."""
        touch, model = touch or self.touch, model or self.model
        if touch is None or not names:
            return
        deep = touch.overlaps(*touch.poses(q), {model.body_index(n) for n in names})
        if deep:
            a, b, depth = deep
            raise ValueError(
                f"object {a!r} would start {100 * depth:.1f} cm inside {b!r}: place it elsewhere"
            )

    def _rebuild(self, system: System, placed: list[str]) -> None:
        """This simulator for ``system`` (another set of objects): the bodies both have keep
        their state and loads, the objects that are new start at their pose, at rest."""
        old = self.model
        new = system.model
        q, v = system.initial_q.copy(), np.zeros(new.nv)
        tau, f_ext = np.zeros(new.nv), np.zeros((new.nbodies, 6))
        kept = {b.name for b in old.bodies}
        for k, body in enumerate(new.bodies):
            if body.name in placed or body.name not in kept:
                continue
            j = old.body_index(body.name)
            sq, sv, oq, ov = new.q_slice(k), new.v_slice(k), old.q_slice(j), old.v_slice(j)
            q[sq], v[sv], tau[sv] = self.state.q[oq], self.state.v[ov], self.tau[ov]
            f_ext[k] = self.f_ext[j]
        law = system.scene.contact if system.scene is not None else None
        touch = Touch(new, system.scene, law) if law is not None and system.scene is not None else None
        self._check_overlaps(q, placed, touch, new)
        contacts = None
        if system.seabeds or system.anchors or touch is not None:
            rows = PAIR_ROWS if touch is not None else 0
            contacts = Contacts(new, list(system.seabeds), list(system.anchors), rows)
        self.system, self.model, self.touch, self.contacts = system, new, touch, contacts
        self.data, self._limit_data = new.create_data(), new.create_data()
        self.tau, self.f_ext = tau, f_ext
        self._loads_buffer = np.zeros((new.nbodies, 6))
        tw = np.zeros((new.nbodies, 6))
        tw[: min(old.nbodies, new.nbodies)] = self._tether_wrench[: min(old.nbodies, new.nbodies)]
        self._tether_wrench = tw  # (objects come after every vehicle: the tethered links keep their index)
        self._fast = None
        self._contact_dt = 0.0
        self.state = State(q, v, self.state.t)
        self._touch_due = math.inf

    def _forget_touch(self) -> None:
        if self.touch is not None and self.contacts is not None:
            self.touch.forget(self.contacts)
            self._touch_due = math.inf

    # -- dynamics -------------------------------------------------------------------------------
    def _external(self, data) -> Array:
        return wrench_sum(self.loads, data, self.thrusters, self.contacts)

    @property
    def loads(self) -> Array:
        """The body wrenches the dynamics take: ``f_ext``, plus the tethers' during a step."""
        return self.f_ext if self._loads is None else self._loads

    @property
    def external(self) -> ExternalWrench:
        """The external wrenches as the dynamics take them: ``f_ext`` (with the tethers' during a
        step) alone, or a function of each forward pass adding the thrust and the contact forces
        (which depend on it)."""
        return self.loads if self.thrusters is None and self.contacts is None else self._external

    def _accel(self, q: Array, v: Array, t: float) -> Array:
        f_ext = self.external
        alpha, beta = self.baumgarte
        return constrained_aba(
            self.model, self.data, q, v, self.tau, self.constraints, self.env, f_ext, t, alpha, beta
        )

    def step(self, dt: float) -> State:
        """Advance by dt seconds with the inputs held constant (thrust follows the advance speed
        within the step; the thrusters' spin-up lag and the joint motors are updated first)."""
        if not dt > 0.0:
            raise ValueError(f"dt must be > 0, got {dt}")
        if self.contacts is not None and dt != self._contact_dt:
            self._check_contact_step(dt)
        if self.touch is not None:
            self._detect_touching()
            self._touch_due += dt
        self._step_held(dt, self._tether_loads if self.tethers else None)
        if self.tethers:
            self._couple_tethers(dt)
        return self.state

    def _step_held(self, dt: float, loads) -> None:
        """One step without the tethers' coupling and the detection of touch: the joint motors,
        the thrusters' spin-up, the integrator and the joint limits, with the body wrenches
        ``loads()`` (None: ``f_ext``)."""
        s = self.state
        if self.joint_motors is not None:
            self.tau = self.joint_motors.apply(self.tau, s.q, s.v, dt)
        if self.thrusters is not None:
            self.thrusters.advance(dt)
        if loads is not None:
            self._loads = loads()
        try:
            self.state = self._integrate(s, dt)
            if self._limits:
                self._limit_crossing(s, dt)
        finally:
            self._loads = None

    def _check_contact_step(self, dt: float) -> None:
        """Say (once per step size) when a seabed is too stiff for the step: a contact spring of
        stiffness k on a body of mass m (added mass included) oscillates at ω = sqrt(k/m), and
        an explicit step longer than about 1/ω bounces the body off it faster than it came."""
        self._contact_dt = dt
        if self.contacts is None:
            return
        for sb, points in self.contacts.seabeds:
            for name, body, _ in points:
                mass = self.model.mass[body] + self.model.M_A[body][2, 2]
                omega = np.sqrt(sb.stiffness / max(mass, 1e-9))
                if omega * dt > 1.0:
                    logger.warning(
                        f"seabed stiffness {sb.stiffness:g} N/m at {name} ({mass:.3g} kg): steps of {dt:g} s "
                        f"are too long for it (at most {1.0 / omega:.2g} s, or a softer seabed); contacts "
                        "may gain energy"
                    )
                    return

    def _integrate(self, s: State, dt: float) -> State:
        """One integrator step of the dynamics from ``s`` with the inputs as they are."""
        fast = self.fast_dynamics()
        if fast is not None:
            th = self.thrusters
            thrust = None if th is None else th.thrust  # the compiled step writes the thrusts there
            q, v = fast.step(s.q, s.v, dt, self.method, self.tau, self.loads, None, s.t, thrust)
            self._copy_outputs(fast, thrust=False)
        else:
            q, v = INTEGRATORS[self.method](self.model, s.q, s.v, dt, self._accel, s.t)
        return State(q, v, s.t + dt)

    def _limit_crossing(self, s: State, dt: float) -> None:
        """A step that took a joint past its limit is taken again in two parts: up to the
        moment the joint reaches the limit (found by regula falsi on the step fraction, to
        1e-10 rad), the impact there (``_enforce_limits``), then the rest of the step."""
        q = self.state.q
        first = None  # (fraction, q index, bound) of the earliest crossing, linearly interpolated
        for iq, _, lo, hi in self._limits:
            for bound in (lo, hi):
                if np.isfinite(bound) and (q[iq] - bound) * (s.q[iq] - bound) < 0.0:
                    f = (bound - s.q[iq]) / (q[iq] - s.q[iq])
                    if first is None or f < first[0]:
                        first = (f, iq, bound)
        if first is None:
            self._enforce_limits()
            return
        frac, iq, bound = first
        lo_f, lo_q, hi_f, hi_q = 0.0, s.q[iq], 1.0, q[iq]
        for _ in range(8):
            part = self._integrate(s, frac * dt)
            err = part.q[iq] - bound
            if abs(err) < 1e-10:
                break
            if err * (hi_q - bound) > 0.0:
                hi_f, hi_q = frac, part.q[iq]
            else:
                lo_f, lo_q = frac, part.q[iq]
            frac = lo_f + (bound - lo_q) * (hi_f - lo_f) / (hi_q - lo_q)
        part.q[iq] = bound
        self.state = part
        self._enforce_limits(touching=iq)
        self.state = self._integrate(self.state, (1.0 - frac) * dt)
        self._enforce_limits()

    def _enforce_limits(self, touching: int | None = None) -> None:
        """Exact joint position limits, as an inelastic impact: a joint past its limit is put
        back on it, and if it was still moving outwards, the impulse on that joint alone (an
        internal torque between its two links, so the system's momentum is kept) that stops it:
        ``Δv = -M⁻¹ S (Sᵀ M⁻¹ S)⁻¹ Sᵀ v`` over the joints that hit, ``M`` the joint-space
        inertia (``crba``, hydrodynamic). Kinetic energy only ever decreases. With joint couplings
        ``M⁻¹`` is that of the coupled system (``T (Tᵀ M T)⁻¹ Tᵀ``, T the couplings' map from the
        driven joints' velocities): a push rod stopped at its limit stops its fingers with it."""
        q, v = self.state.q, self.state.v
        hit = []
        for iq, iv, lo, hi in self._limits:
            was = q[iq]
            if q[iq] > hi or (iq == touching and q[iq] == hi):
                q[iq] = hi
                if v[iv] > 0.0:
                    hit.append(iv)
            elif q[iq] < lo or (iq == touching and q[iq] == lo):
                q[iq] = lo
                if v[iv] < 0.0:
                    hit.append(iv)
            if q[iq] != was:  # a leader put back on its limit moves its followers with it
                for c in self.constraints:
                    if isinstance(c, JointCoupling) and self.model.idx_q[c.parent] == iq:
                        q[self.model.idx_q[c.child]] += c.multiplier * (q[iq] - was)
        if hit:
            self.limit_impacts += len(hit)
            Minv = self._inverse_inertia_columns(q, v, hit)
            impulse = np.linalg.solve(Minv[hit], v[hit])
            v -= Minv @ impulse

    def _inverse_inertia_columns(self, q: Array, v: Array, columns: list[int]) -> Array:
        """The columns ``columns`` of ``M⁻¹`` at ``q`` (nv x len(columns)). Compiled: the
        articulated-body algorithm is affine in τ, so ``M⁻¹ e = aba(τ + e) - aba(τ)`` at the
        same (q, v) and inputs: two O(n) passes instead of the O(n³)
        inverse of the CRBA matrix; the contact rows, which an evaluation moves where a point
        slips, are put back as they were. Reference path: the inverse of ``crba``. With joint
        couplings (both paths): ``T (Tᵀ M T)⁻¹ Tᵀ`` of ``crba``, the coupled system's, as the
        compiled steps' impacts compute it (``compiled.limits``)."""
        fast = self.fast_dynamics()
        couplings = [c for c in self.constraints if isinstance(c, JointCoupling)]
        if fast is None or couplings:  # (with couplings, the compiled impacts' formula)
            M = crba(self.model, self._limit_data, q)
            if not couplings:
                return np.asarray(np.linalg.inv(M)[:, columns], dtype=float)
            m = self.model
            T = np.eye(m.nv)
            for c in couplings:
                T[m.idx_v[c.child], m.idx_v[c.parent]] = c.multiplier
            keep = [i for i in range(m.nv) if i not in {m.idx_v[c.child] for c in couplings}]
            T = T[:, keep]
            W = T @ np.linalg.inv(T.T @ M @ T) @ T.T
            return np.asarray(W[:, columns], dtype=float)
        KF = fast.KF.copy() if fast.KF.size else None
        t = self.state.t
        base = fast.aba(q, v, self.tau, self.loads, None, t)
        out = np.empty((self.model.nv, len(columns)))
        tau = self.tau.copy()
        for k, iv in enumerate(columns):
            tau[iv] += 1.0
            out[:, k] = fast.aba(q, v, tau, self.loads, None, t) - base
            tau[iv] -= 1.0
        if KF is not None:
            fast.KF[:] = KF
        return out

    def advance(self, dt: float, steps: int) -> State:
        """``steps`` calls of ``step(dt)`` with the inputs held. Without thruster spin-up lag,
        a time-varying current or joint motors other than firmware servos
        (``actuators.servo.JointServos``) they run in one compiled call (the same arithmetic,
        so the same result; the servos' law and the joint limits' impacts run inside it, and a
        step that takes a joint across a limit is taken here, to find the moment of the
        impact); a non-finite state stops there with ``NonFiniteStateError`` after the steps
        that were finite. (With tethers, the steps between two couplings run in one call.)"""
        if self.contacts is not None and dt != self._contact_dt:
            self._check_contact_step(dt)
        fast = self.fast_dynamics()
        lag = self.thrusters is not None and self.thrusters.has_lag
        joints = self._joint_tables()
        if (
            fast is None
            or (self.joint_motors is not None and joints is None)
            or lag
            or self.env.current_profile is not None
            or (steps < 2 and joints is None)
        ):
            for _ in range(steps):
                self.step(dt)
            return self.state
        if not dt > 0.0:
            raise ValueError(f"dt must be > 0, got {dt}")
        if not self.tethers and self.touch is None:
            if joints is not None:
                return self._advance_joints(fast, joints, dt, steps, self.f_ext)
            return self._advance_held(fast, dt, steps, self.f_ext)
        while steps > 0:  # groups of steps up to each coupling of the tethers and detection of touch
            group = steps
            if self.tethers:
                group = min(group, max(1, math.ceil((self.tether_period - self._tether_due) / dt - 1e-9)))
            if self.touch is not None:
                self._detect_touching()
                group = min(group, max(1, math.ceil((self.touch.law.period - self._touch_due) / dt - 1e-9)))
            steps -= group
            if group == 1:
                self.step(dt)
                continue
            fast = self.fast_dynamics() or fast  # (the contact table may have grown)
            self._advance_held(fast, dt, group, self._tether_loads() if self.tethers else self.f_ext)
            if self.tethers:
                self._couple_tethers(group * dt)
            if self.touch is not None:
                self._touch_due += group * dt
        return self.state

    def _joint_tables(self) -> JointTables | None:
        """What the compiled steps need of the joints (``fast.JointTables``): the servos' rows
        and the joint limits; None when joint motors other than ``JointServos`` drive the joints
        or when there are neither motors nor limits."""
        motors = self.joint_motors
        if motors is not None and not isinstance(motors, JointServos):
            return None
        if motors is None and not self._limits:
            return None
        tables = self._joints
        SF, SI = (None, None) if motors is None else (motors.SF, motors.SI)
        if tables is None or tables.model is not self.model or tables.servos is not motors:
            tables = self._joints = JointTables(self.model, SF, SI)
            tables.servos = motors
        return tables

    def _detect_touching(self) -> None:
        """The touching pairs' points (``dynamics.touch``) when a detection is due."""
        if self.touch is not None and self.contacts is not None:
            if self._touch_due >= self.touch.law.period * (1.0 - 1e-9):
                self.touch.detect(*self._world_poses(), self.contacts)
                self._touch_due = 0.0

    def _world_poses(self) -> tuple[Array, Array]:
        """Every body's world rotation (nb x 3 x 3) and origin (nb x 3) at the current state: the
        compiled forward pass's (one evaluation), else the reference placements."""
        fast = self.fast_dynamics()
        if fast is None or self.touch is None:
            placements(self.model, self.data, self.state.q)
            return self.data.R_world, self.data.p_world
        s = self.state
        fast.aba(s.q, s.v, self.tau, self.loads, None, s.t)
        nb = self.model.nbodies
        WB = fast.W[: nb * NW].reshape(nb, NW)
        return WB[:, WRW : WRW + 9].reshape(nb, 3, 3), WB[:, WPW : WPW + 3]

    def _advance_held(self, fast: FastDynamics, dt: float, steps: int, loads: Array) -> State:
        """``steps`` steps in one compiled call with the inputs and ``loads`` held."""
        joints = self._joint_tables()
        if joints is not None:
            return self._advance_joints(fast, joints, dt, steps, loads)
        s = self.state
        if self.thrusters is not None:
            self.thrusters.advance(dt)
        q, v, done = fast.step_many(s.q, s.v, dt, steps, self.method, self.tau, loads, None, s.t)
        self._copy_outputs(fast)
        t = s.t
        for _ in range(done):  # the time as ``step`` sums it (and the compiled steps, for the waves)
            t += dt
        self.state = State(q, v, t)
        if done < steps:
            self._loads = loads
            try:
                self.step(dt)  # raises NonFiniteStateError naming the quantity, state unchanged
            finally:
                self._loads = None
        return self.state

    def _advance_joints(
        self, fast: FastDynamics, joints: JointTables, dt: float, steps: int, loads: Array
    ) -> State:
        """``_advance_held`` with the servos' law and the joint limits inside the compiled steps
        (``FastDynamics.step_joints``); a step it hands back (a limit crossed, or not finite)
        is taken by ``_step_held``, and the compiled steps go on after it."""
        if self.thrusters is not None:
            self.thrusters.advance(dt)
        self.tau = np.array(self.tau, dtype=float)  # a new array, as JointServos.apply makes
        while steps > 0:
            s = self.state
            before = int(joints.impacts[0])
            q, v, done = fast.step_joints(s.q, s.v, dt, steps, self.method, self.tau, loads, s.t, joints)
            self.limit_impacts += int(joints.impacts[0]) - before
            if done:
                self._copy_outputs(fast)
                t = s.t
                for _ in range(done):  # the time as ``step`` sums it
                    t += dt
                self.state = State(q, v, t)
            steps -= done
            if steps:
                self._step_held(dt, lambda: loads)  # raises NonFiniteStateError on a non-finite state
                steps -= 1
        return self.state

    def fast_dynamics(self) -> FastDynamics | None:
        """The compiled dynamics of this simulator (with its rigid connections and contacts), or
        None for the reference path (``compiled=False``)."""
        if not self.compiled or self.method not in METHODS:
            return None
        fast = self._fast
        if (
            fast is None
            or fast.env is not self.env
            or fast.thrusters is not self.thrusters
            or fast.model is not self.model
        ):
            fast = self._fast = FastDynamics(self.model, self.env, self.thrusters)
        if self.constraints or fast.constraints:
            fast.set_constraints(self.constraints, *self.baumgarte)
        fast.set_contacts(self.contacts)  # (returns at once when they are the same rows)
        return fast

    def acceleration(self) -> Array:
        """q̈ at the current state and inputs; ``data`` then holds that state's forward pass
        (and, on the compiled path without connections or with couplings its ABA holds, the
        body accelerations in ``data.a``: ``FastDynamics.exact_body_accelerations``)."""
        s = self.state
        fast = self.fast_dynamics()
        if fast is None:
            return self._accel(s.q, s.v, s.t)
        qdd = fast.aba(s.q, s.v, self.tau, self.f_ext, None, s.t)
        fast.export(self.data)
        self._copy_outputs(fast)
        return qdd

    def _copy_outputs(self, fast: FastDynamics, thrust: bool = True) -> None:
        """Thrusts (unless ``fast.step`` already wrote them) and contact normal forces of the
        compiled path's last evaluation, where the reference path leaves them."""
        if thrust and self.thrusters is not None:
            self.thrusters.thrust[:] = fast.thrust
        if self.contacts is not None:
            self.contacts.normal_forces.update(fast.normal_forces())


def fast_dynamics(system: System) -> FastDynamics:
    """The compiled dynamics of a loaded description, with its thrusters (``thruster_bank``)."""
    return FastDynamics(system.model, system.environment, thruster_bank(system))
