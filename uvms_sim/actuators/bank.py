"""The thrusters of a system as one actuator: PWM in, body wrenches out (seed 001 eqs. 8-14).

``ThrusterBank`` keeps each thruster's commanded PWM and shaft speed (the spin-up lag state)
and, given the bodies' velocities relative to the water (``data.v_rel`` after the forward
pass), returns the wrench every thruster puts on its body: the advance speed is the velocity
of the thruster point along its thrust direction, so thrust is evaluated at every integrator
stage with that stage's velocity.
"""

from __future__ import annotations

import numpy as np

from ..log import Throttle
from ..model.model import Data, Model
from ..model.system import Thruster
from ..spatial import Array
from .thruster import PWM_MAX, PWM_MIN, PWM_NEUTRAL, ThrusterModel


class ThrusterBank:
    """All thrusters of a model, in a fixed order (``names``)."""

    def __init__(self, model: Model, thrusters: tuple[Thruster, ...], kinds: list[ThrusterModel]) -> None:
        if len(kinds) != len(thrusters):
            raise ValueError("one thruster model per thruster")
        self.thrusters = tuple(thrusters)
        self.kinds = list(kinds)
        self.names = [t.name for t in thrusters]
        self.motors = [t.motor for t in thrusters]
        self.body = np.array([model.body_index(t.body) for t in thrusters], dtype=int)
        self.position = np.array([t.position for t in thrusters]).reshape(-1, 3)
        self.direction = np.array([t.direction for t in thrusters]).reshape(-1, 3)
        self.moment_arm = np.cross(self.position, self.direction).reshape(-1, 3)
        self.pwm = np.full(len(thrusters), PWM_NEUTRAL)
        self.n = np.zeros(len(thrusters))  # shaft speed, rev/s (state of the lag)
        self.thrust = np.zeros(len(thrusters))  # last evaluated thrust, N
        self.nbodies = model.nbodies
        self.throttle = Throttle()

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
        if not np.all(np.isfinite(arr)):
            msg = f"pwm has non-finite values at {np.flatnonzero(~np.isfinite(arr)).tolist()}"
            self.throttle.warn("finite", f"thruster command rejected: {msg}")
            raise ValueError(msg)
        clamped = np.clip(arr, PWM_MIN, PWM_MAX)
        n = int(np.count_nonzero(clamped != arr))
        if n:
            bad = {self.names[k]: float(arr[k]) for k in np.flatnonzero(clamped != arr)}
            self.throttle.warn("range", f"thruster PWM outside {PWM_MIN:.0f}-{PWM_MAX:.0f} us clamped: {bad}")
        self.pwm[:] = clamped
        return n

    def set_motor_pwm(self, outputs: dict[int, float] | Array) -> int:
        """Command by autopilot output number: ``{motor: pwm}`` or an array where entry k is
        SERVO(k+1) (ArduSub's rc/out). Thrusters without a motor number keep their command."""
        if isinstance(outputs, dict):
            items = outputs.items()
        else:
            arr = np.asarray(outputs, dtype=float).reshape(-1)
            items = ((k + 1, v) for k, v in enumerate(arr))
        pwm = self.pwm.copy()
        index = {m: k for k, m in enumerate(self.motors) if m is not None}
        for motor, value in items:
            if motor in index:
                pwm[index[motor]] = value
        return self.set_pwm(pwm)

    def advance(self, dt: float) -> None:
        """Move the shaft speeds towards their commands over dt (exact for the first-order lag
        with the command held)."""
        for k, kind in enumerate(self.kinds):
            target = float(kind.shaft_speed(self.pwm[k]))
            if kind.time_constant > 0.0:
                self.n[k] = target + (self.n[k] - target) * np.exp(-dt / kind.time_constant)
            else:
                self.n[k] = target

    def wrenches(self, data: Data) -> Array:
        """Per-body wrenches (nbodies x 6, body axes, about the body origin) at the velocities in
        ``data.v_rel``; also stores the thrusts in ``self.thrust``."""
        out = np.zeros((self.nbodies, 6))
        vr = data.v_rel[self.body]
        v_point = vr[:, :3] + np.cross(vr[:, 3:], self.position)
        u_a = np.einsum("ij,ij->i", v_point, self.direction)
        for k, kind in enumerate(self.kinds):
            self.thrust[k] = float(kind.thrust(self.n[k], u_a[k]))
        np.add.at(out[:, :3], self.body, self.thrust[:, None] * self.direction)
        np.add.at(out[:, 3:], self.body, self.thrust[:, None] * self.moment_arm)
        return out
