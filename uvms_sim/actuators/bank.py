"""The thrusters of a system as one actuator: PWM in, body wrenches out (Nielsen et al. 2018 eqs. 8-14).

``ThrusterBank`` keeps each thruster's commanded PWM and shaft speed (the spin-up lag state)
and, given the bodies' velocities relative to the water (``data.v_rel`` after the forward
pass), returns the wrench every thruster puts on its body: the advance speed is the velocity
of the thruster point along its thrust direction, so thrust is evaluated at every integrator
stage with that stage's velocity.
"""

from __future__ import annotations

import math

import numpy as np

from ..log import Throttle
from ..model.model import Data, Model
from ..model.system import System, Thruster
from ..spatial import Array
from . import t200
from .thruster import (
    PWM_MAX,
    PWM_MIN,
    PWM_NEUTRAL,
    ThrusterModel,
    table_shaft_speed,
    thrust_law,
    thruster_model,
    with_voltage,
)


class ThrusterBank:
    """All thrusters of a model, in a fixed order (``names``)."""

    def __init__(self, model: Model, thrusters: tuple[Thruster, ...], kinds: list[ThrusterModel]) -> None:
        if len(kinds) != len(thrusters):
            raise ValueError("one thruster model per thruster")
        self.thrusters = tuple(thrusters)
        self.names = [t.name for t in thrusters]
        self.motors = [t.motor for t in thrusters]
        # a reversed motor (ArduSub MOT_n_DIRECTION = -1) pushes along its direction below 1500 us
        self.sign = np.array([-1.0 if t.reversed else 1.0 for t in thrusters])
        self.body = np.array([model.body_index(t.body) for t in thrusters], dtype=int)
        self.position = np.array([t.position for t in thrusters]).reshape(-1, 3)
        self.direction = np.array([t.direction for t in thrusters]).reshape(-1, 3)
        self.moment_arm = np.cross(self.position, self.direction).reshape(-1, 3)
        self.pwm = np.full(len(thrusters), PWM_NEUTRAL)
        self.n = np.zeros(len(thrusters))  # shaft speed, rev/s (state of the lag)
        self.thrust = np.zeros(len(thrusters))  # last evaluated thrust, N
        self.u_a = np.zeros(len(thrusters))  # last evaluated advance speed, m/s
        self.nbodies = model.nbodies
        self.throttle = Throttle()
        self.version = 0  # grows whenever the thruster models (their constants) change
        self.incidence = np.zeros((model.nbodies, len(thrusters)))  # body <- thruster
        self.incidence[self.body, np.arange(len(thrusters))] = 1.0
        self.unit_wrench = np.hstack([self.direction, self.moment_arm])  # n x 6
        self._targets_stale = True  # shaft-speed targets to recompute (new PWM or models)
        self._columns = np.arange(len(thrusters))
        self.kinds = kinds

    def __len__(self) -> int:
        return len(self.thrusters)

    def set_pwm(self, pwm: Array) -> int:
        """Command PWM (us) in thruster order. A non-finite value or a wrong length raises
        ``ValueError`` and changes nothing; values outside [1100, 1900] are clamped. Returns
        how many were clamped. Each kind of bad input is logged, throttled."""
        arr = np.asarray(pwm, dtype=float)
        if arr.shape != (len(self),):
            msg = f"pwm must have {len(self)} values (thrusters {self.names}), got shape {arr.shape}"
            self.throttle.warn("shape", f"thruster command rejected: {msg}")
            raise ValueError(msg)
        # (a few numbers, checked as Python floats: each numpy call costs more than the work)
        values = arr.tolist()
        if not all(map(math.isfinite, values)):
            msg = f"pwm has non-finite values at {[k for k, x in enumerate(values) if not math.isfinite(x)]}"
            self.throttle.warn("finite", f"thruster command rejected: {msg}")
            raise ValueError(msg)
        clamped = [PWM_MIN if x < PWM_MIN else PWM_MAX if x > PWM_MAX else x for x in values]
        outside = [k for k, (x, c) in enumerate(zip(values, clamped, strict=True)) if x != c]
        if outside:
            bad = {self.names[k]: values[k] for k in outside}
            self.throttle.warn("range", f"thruster PWM outside {PWM_MIN:.0f}-{PWM_MAX:.0f} us clamped: {bad}")
        if clamped != self.pwm.tolist():  # (the same command: the same targets)
            self.pwm[:] = clamped
            self._targets_stale = True
        return len(outside)

    def set_motor_pwm(self, outputs: dict[int, float] | Array, thrusters: list[int] | None = None) -> int:
        """Command by autopilot output number: ``{motor: pwm}`` or an array where entry k is
        SERVO(k+1) (ArduSub's rc/out, SITL's servo packet). Every thruster with that motor
        number (among ``thrusters``, indices, if given) takes the value; a value <= 0 is an
        output that is not set up (as MAVLink and SITL report it) and is skipped. Thrusters
        without a motor number keep their command. Returns what ``set_pwm`` returns."""
        if isinstance(outputs, dict):
            by_motor = {int(m): float(v) for m, v in outputs.items()}
        else:
            arr = np.asarray(outputs, dtype=float).reshape(-1)
            by_motor = {k + 1: float(v) for k, v in enumerate(arr)}
        pwm = self.pwm.copy()
        for k in range(len(self)) if thrusters is None else thrusters:
            motor = self.motors[k]
            value = by_motor.get(motor, 0.0) if motor is not None else 0.0
            if value > 0.0:
                pwm[k] = value
        return self.set_pwm(pwm)

    def motor_directions(self, thrusters: list[int] | None = None) -> dict[int, float]:
        """ArduSub's MOT_n_DIRECTION of the reversed motors (among ``thrusters``, indices):
        ``{motor: -1.0}``, what an autopilot flying these thrusters must be configured with."""
        idx = range(len(self)) if thrusters is None else thrusters
        numbered = [(k, m) for k in idx if (m := self.motors[k]) is not None]
        return {m: -1.0 for k, m in numbered if self.sign[k] < 0}

    @property
    def kinds(self) -> list[ThrusterModel]:
        """The thruster models, one per thruster. Assigning a new list rebuilds the
        per-thruster arrays (so that a wrench evaluation is a few array operations); a change
        made in place to the list is not seen."""
        return self._kinds

    @kinds.setter
    def kinds(self, kinds: list[ThrusterModel]) -> None:
        if len(kinds) != len(self.thrusters):
            raise ValueError("one thruster model per thruster")
        self._kinds = k = list(kinds)
        self.version += 1
        self._T_nn_forward = np.array([x.T_nn_forward for x in k])
        self._T_nn_reverse = np.array([x.T_nn_reverse for x in k])
        self._T_nu = np.array([x.T_nu for x in k])
        self._T_max = np.array([x.thrust_forward for x in k])
        self._T_min = -np.array([x.thrust_reverse for x in k])
        self._voltage = np.array([np.nan if x.voltage is None else x.voltage for x in k])
        self._table = ~np.isnan(self._voltage)
        self._all_table = bool(self._table.all())
        self._n_max = np.array([x.n_max for x in k])
        self._deadband = np.array([x.deadband for x in k])
        self._exponent = np.array([x.exponent for x in k])
        self._tau = np.array([x.time_constant for x in k])
        self._lag = self._tau > 0.0
        self._any_lag = bool(self._lag.any())
        self._targets_stale = True
        self._by_whole_pwm: Array | None = None  # (``shaft_speed_targets``' table, made on first use)
        self._decay_dt, self._decay = np.nan, np.zeros(len(k))  # (``advance``'s lag over its last dt)

    def constants(self) -> tuple[Array, Array, Array, Array, Array]:
        """``(T_nn⁺, T_nn⁻, T_nu, T_max, T_min)`` per thruster (Nielsen et al. 2018 eq. 12, saturation)."""
        return self._T_nn_forward, self._T_nn_reverse, self._T_nu, self._T_max, self._T_min

    T_nn_forward = property(lambda self: self.constants()[0])
    T_nn_reverse = property(lambda self: self.constants()[1])
    T_nu = property(lambda self: self.constants()[2])
    T_max = property(lambda self: self.constants()[3])
    T_min = property(lambda self: self.constants()[4])

    @property
    def voltage(self) -> Array:
        """Supply voltage of each thruster (V; NaN for a thruster with a fixed preset)."""
        return self._voltage

    def set_voltage(self, voltage: float) -> None:
        """A new supply voltage for every thruster modelled from Blue Robotics' tables
        (``t200``); ValueError outside 10-20 V, nothing changed."""
        self.kinds = [with_voltage(k, voltage) for k in self.kinds]

    def currents(self) -> Array:
        """Supply current of each thruster (A) at its command, from the tables (0 for a
        thruster with a fixed preset, which has no current model)."""
        out = np.zeros(len(self))
        if self._table.any():
            t = self._table
            pwm = PWM_NEUTRAL + self.sign[t] * (self.pwm[t] - PWM_NEUTRAL)
            out[t] = t200.current(pwm, self._voltage[t])
        return out

    @property
    def has_lag(self) -> bool:
        """Whether any thruster has a spin-up lag (its speed then depends on the step size)."""
        return self._any_lag

    def shaft_speed_targets(self) -> Array:
        """Commanded shaft speeds (rev/s) of the current PWM: ``ThrusterModel.shaft_speed``
        (Nielsen et al. 2018 eq. 39) vectorised over the thrusters, recomputed only after ``set_pwm`` or a
        new list of ``kinds``. A reversed motor sees ``3000 - pwm`` (its ESC turns the other
        way, and its propeller is the mirror one, so the thrust along ``direction`` is the
        nominal thruster's at the mirrored command, as ArduSub's MOT_n_DIRECTION assumes).

        Commands in whole microseconds (an autopilot's, which change at every cycle of its loop)
        are looked up in a table of ``shaft_speeds`` at every whole microsecond from 1100 to
        1900, made once per set of thruster models (the same numbers to rounding, 1e-12, without
        the table fit's polynomials at every command)."""
        if self._targets_stale:
            values = self.pwm.tolist()
            if all(x.is_integer() and PWM_MIN <= x <= PWM_MAX for x in values):
                if self._by_whole_pwm is None:
                    grid = np.arange(PWM_MIN, PWM_MAX + 1.0)
                    self._by_whole_pwm = self.shaft_speeds(np.repeat(grid[:, None], len(self), axis=1))
                self._target = self._by_whole_pwm[[int(x - PWM_MIN) for x in values], self._columns]
            else:
                self._target = self.shaft_speeds(self.pwm)
            self._targets_stale = False
        return self._target

    def shaft_speeds(self, pwm: Array) -> Array:
        """The commanded shaft speeds (rev/s) of PWM commands ``pwm`` (..., thrusters): the map
        of ``shaft_speed_targets`` for any number of command sets at once (a batch of vehicles)."""
        d = self.sign * (np.asarray(pwm, dtype=float) - PWM_NEUTRAL)
        if self._all_table:  # (the law below would be computed for nothing)
            return table_shaft_speed(PWM_NEUTRAL + d, self._voltage, self._n_max, self._T_max, -self._T_min)
        span = (PWM_MAX - PWM_NEUTRAL) - self._deadband
        x = np.clip((np.abs(d) - self._deadband) / span, 0.0, 1.0)
        target = np.sign(d) * self._n_max * x**self._exponent
        if self._table.any():  # thrusters modelled from Blue Robotics' tables
            t = self._table
            target[..., t] = table_shaft_speed(
                PWM_NEUTRAL + d[..., t], self._voltage[t], self._n_max[t], self._T_max[t], -self._T_min[t]
            )
        return target

    def advance(self, dt: float) -> None:
        """Move the shaft speeds towards their commands over dt (exact for the first-order lag
        with the command held)."""
        target = self.shaft_speed_targets()
        if self._any_lag:
            if dt != self._decay_dt:  # (the node's steps are all of one dt)
                self._decay_dt = dt
                self._decay = np.exp(-dt / np.where(self._lag, self._tau, 1.0))
            self.n[:] = np.where(self._lag, target + (self.n - target) * self._decay, target)
        else:
            self.n[:] = target

    def wrenches(self, data: Data) -> Array:
        """Per-body wrenches (nbodies x 6, body axes, about the body origin) at the velocities in
        ``data.v_rel``; also stores the thrusts in ``self.thrust``. Vectorised form of
        ``ThrusterModel.thrust`` (eq. 12 and saturation) over all thrusters."""
        vr = data.v_rel[self.body]
        w, p = vr[:, 3:], self.position
        v_point = vr[:, :3] + np.stack(
            (
                w[:, 1] * p[:, 2] - w[:, 2] * p[:, 1],
                w[:, 2] * p[:, 0] - w[:, 0] * p[:, 2],
                w[:, 0] * p[:, 1] - w[:, 1] * p[:, 0],
            ),
            axis=1,
        )
        u_a = self.u_a = np.einsum("ij,ij->i", v_point, self.direction)
        thrust_law(self.n, u_a, *self.constants(), out=self.thrust)
        return self.incidence @ (self.thrust[:, None] * self.unit_wrench)


def thruster_bank(system: System) -> ThrusterBank | None:
    """The thrusters of a loaded description, each with its vehicle's thruster model; None
    for a system without thrusters."""
    if not system.thrusters:
        return None
    kinds = [thruster_model(v.thruster_model) for v in system.vehicles for _ in v.thrusters]
    return ThrusterBank(system.model, system.thrusters, kinds)
