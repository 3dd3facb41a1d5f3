"""Thruster model: PWM -> shaft speed -> thrust (Nielsen et al. 2018 eqs. 10-14 and 39).

- PWM to shaft speed (Nielsen et al. 2018 eq. 39, ``f(x) = a x^b + c``, static because the ESC holds the
  speed whatever the load, Nielsen et al. 2018 section 4.1.3): no speed inside the deadband
  ``|pwm - 1500| <= deadband``; beyond it ``n = ± n_max ((|Δ| - deadband)/(400 - deadband))^b``.
  An optional first-order spin-up lag ``ṅ = (n_cmd - n)/τ`` sits after the map.
- Thrust (Nielsen et al. 2018 eq. 12): ``T = T_nn |n| n + T_nu |n| u_a``, with ``T_nn`` different forward
  and reverse (the T200 pushes about 22 % less in reverse) and ``u_a`` the advance speed: the
  velocity of the thruster relative to the water along its thrust direction. ``T_nu < 0``:
  moving the way the thruster pushes lowers its thrust (Nielsen et al. 2018 section 4.1.3, Fig. 11).
  From the linear thrust coefficient ``K_T = α0 + α1 J`` (eqs. 10, 11, 13) with ``J = u_a/(n D)``:
  ``T_nu = T_nn · α1/(α0 D) = -T_nn/(J0 D)`` where ``J0`` is the advance ratio of zero thrust.
- Saturation: ``|T|`` never exceeds the bollard thrust at full command in that direction.

With a supply ``voltage`` (preset ``t200``) the bollard map is Blue Robotics' measured one at
that voltage (``actuators.t200``); the shaft speed is the one whose bollard thrust it gives,
so the advance-speed term and the lag act on it as above.

Fixed presets (T200, Blue Robotics' T200 datasheet): full-command thrust 5.25 kgf
forward / 4.1 kgf reverse at 16 V and 3.7 / 2.9 kgf at 12 V, deadband ±25 us. Not in the
datasheet facts and chosen here: n_max = 3600 rpm at 16 V (12 V scaled by the square root of
the thrust ratio), the exponent b = 0.75 (a fractional exponent as eq. 39), propeller diameter
0.076 m and J0 = 1.0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..hydro.environment import STANDARD_GRAVITY
from ..spatial import Array, Floats
from . import t200

KGF = STANDARD_GRAVITY  # N per kilogram-force
PWM_NEUTRAL = 1500.0
PWM_MIN = 1100.0
PWM_MAX = 1900.0


@dataclass(frozen=True)
class ThrusterModel:
    """Static PWM -> thrust map of one thruster type (see module docstring)."""

    thrust_forward: float  # N at full forward command, bollard (u_a = 0)
    thrust_reverse: float  # N (positive number) at full reverse command
    rpm_max: float = 3600.0
    deadband: float = 25.0  # us each side of neutral
    exponent: float = 0.75  # b of Nielsen et al. 2018 eq. 39
    diameter: float = 0.076  # m
    zero_thrust_advance_ratio: float = 1.0  # J0 = -α0/α1 of eq. 13
    time_constant: float = 0.0  # s, first-order spin-up lag (0: static)
    pwm_min: float = PWM_MIN
    pwm_max: float = PWM_MAX
    voltage: float | None = None  # V: the T200 fit of Blue Robotics' tables (``t200``) instead of eq. 39

    def __post_init__(self) -> None:
        for name in ("thrust_forward", "thrust_reverse", "rpm_max", "exponent", "diameter"):
            if not getattr(self, name) > 0.0:
                raise ValueError(f"thruster model: {name} must be > 0, got {getattr(self, name)}")
        if not 0.0 <= self.deadband < PWM_MAX - PWM_NEUTRAL:
            raise ValueError(f"thruster model: deadband must be in [0, 400) us, got {self.deadband}")
        if not self.time_constant >= 0.0 or not self.zero_thrust_advance_ratio > 0.0:
            raise ValueError("thruster model: time_constant must be >= 0 and zero_thrust_advance_ratio > 0")
        if self.voltage is not None:
            t200.check_voltage(self.voltage)

    @property
    def n_max(self) -> float:
        """Shaft speed at full command, rev/s."""
        return self.rpm_max / 60.0

    @property
    def T_nn_forward(self) -> float:
        return self.thrust_forward / self.n_max**2

    @property
    def T_nn_reverse(self) -> float:
        return self.thrust_reverse / self.n_max**2

    @property
    def T_nu(self) -> float:
        """Advance-speed coefficient of eq. 12 (negative), forward-thrust based."""
        return -self.T_nn_forward / (self.zero_thrust_advance_ratio * self.diameter)

    def shaft_speed(self, pwm: Floats) -> Array:
        """Commanded shaft speed (rev/s, signed) for PWM (us): Nielsen et al. 2018 eq. 39, or with a
        ``voltage`` the speed whose bollard thrust is the T200 fit's (``t200``)."""
        if self.voltage is not None:
            return table_shaft_speed(pwm, self.voltage, self.n_max, self.thrust_forward, self.thrust_reverse)
        d = np.asarray(pwm, dtype=float) - PWM_NEUTRAL
        span = (PWM_MAX - PWM_NEUTRAL) - self.deadband
        x = np.clip((np.abs(d) - self.deadband) / span, 0.0, 1.0)
        return np.sign(d) * self.n_max * x**self.exponent

    def thrust(self, n: Floats, u_a: Floats) -> Array:
        """Thrust (N, along the thruster's direction) at shaft speed n and advance speed u_a,
        Nielsen et al. 2018 eq. 12, saturated at the bollard thrust of that direction."""
        return thrust_law(
            n, np.asarray(u_a, dtype=float), self.T_nn_forward, self.T_nn_reverse, self.T_nu,
            self.thrust_forward, -self.thrust_reverse,
        )  # fmt: skip

    def bollard_thrust(self, pwm: Array) -> Array:
        """Thrust at zero advance speed (the datasheet condition)."""
        n = self.shaft_speed(pwm)
        return self.thrust(n, np.zeros_like(n))


def thrust_terms(n: Floats, u_a: Floats, T_nn_forward: Floats, T_nn_reverse: Floats, T_nu: Floats) -> Array:
    """The three terms of the thrust (Nielsen et al. 2018 eq. 12), elementwise: forward bollard
    ``T_nn⁺|n|n`` (n >= 0), reverse bollard ``T_nn⁻|n|n`` (n < 0) and advance ``T_nu|n|u_a``,
    stacked (3 x ...). Their sum, saturated, is ``thrust_law``."""
    n = np.asarray(n, dtype=float)
    nn = np.abs(n) * n
    forward = np.where(n >= 0.0, np.multiply(T_nn_forward, nn), 0.0)
    reverse = np.where(n < 0.0, np.multiply(T_nn_reverse, nn), 0.0)
    return np.array([forward, reverse, np.multiply(T_nu, np.abs(n) * np.asarray(u_a, dtype=float))])


def thrust_law(
    n: Floats,
    u_a: Floats,
    T_nn_forward: Floats,
    T_nn_reverse: Floats,
    T_nu: Floats,
    T_max: Floats,
    T_min: Floats,
    out: Array | None = None,
) -> Array:
    """Thrust (N) at shaft speed n (rev/s) and advance speed u_a (m/s), elementwise: Nielsen
    et al. 2018 eq. 12 saturated at the bollard thrusts, ``T_min <= T <= T_max``. The one
    statement of the law: ``ThrusterModel.thrust`` and ``ThrusterBank.wrenches`` call it (the
    compiled kernels repeat it, held equal by the tests)."""
    n = np.asarray(n, dtype=float)
    T_nn = np.where(n >= 0.0, T_nn_forward, T_nn_reverse)
    return np.clip(T_nn * np.abs(n) * n + np.multiply(T_nu, np.abs(n) * u_a), T_min, T_max, out=out)


def table_shaft_speed(
    pwm: Floats, voltage: Floats, n_max: Floats, full_forward: Floats, full_reverse: Floats
) -> Array:
    """The shaft speed whose bollard thrust ``T_nn |n| n`` is the T200 tables' at ``pwm`` and
    ``voltage`` (``t200.thrust``): ``n = ± n_max sqrt(|T| / T_full)`` with the full-command
    thrust of that direction. Vectorised over thrusters."""
    T = t200.thrust(pwm, voltage)
    return np.sign(T) * n_max * np.sqrt(np.abs(T) / np.where(T >= 0.0, full_forward, full_reverse))


def t200_model(voltage: float = 16.0, **overrides) -> ThrusterModel:
    """A T200 on a ``voltage`` supply: bollard thrust and current from Blue Robotics' tables
    (``t200``), full-command thrusts and no-load speed at that voltage."""
    v = t200.check_voltage(voltage)
    base = {
        "thrust_forward": float(t200.thrust(PWM_MAX, v)),
        "thrust_reverse": float(-t200.thrust(PWM_MIN, v)),
        "rpm_max": t200.rpm_max(v),
        "deadband": t200.DEADBAND,
    }
    return ThrusterModel(**{**base, **overrides, "voltage": v})


def with_voltage(model: ThrusterModel, voltage: float) -> ThrusterModel:
    """The same thruster on another supply voltage (a model without ``voltage`` is kept)."""
    if model.voltage is None:
        return model
    keep = {
        k: getattr(model, k) for k in ("diameter", "zero_thrust_advance_ratio", "time_constant", "exponent")
    }
    return t200_model(voltage, **keep)


T200_16V = ThrusterModel(thrust_forward=5.25 * KGF, thrust_reverse=4.1 * KGF, rpm_max=3600.0)
T200_12V = ThrusterModel(
    thrust_forward=3.7 * KGF, thrust_reverse=2.9 * KGF, rpm_max=3600.0 * float(np.sqrt(3.7 / 5.25))
)
PRESETS = {"t200_16v": T200_16V, "t200_12v": T200_12V}
PRESET_NAMES = ("t200", *PRESETS)  # t200: Blue Robotics' tables at a supply voltage


def thruster_model(spec: tuple[tuple[str, object], ...] | dict) -> ThrusterModel:
    """A preset with overrides, as a description gives it (``Vehicle.thruster_model``):
    ``t200`` (Blue Robotics' tables at ``voltage``, default 16 V) or a fixed preset."""
    params = {k: float(v) for k, v in dict(spec).items() if k != "preset"}
    preset = str(dict(spec).get("preset", "t200_16v"))
    if preset == "t200":
        return t200_model(params.pop("voltage", 16.0), **params)
    if "voltage" in params:
        raise ValueError(f"voltage applies to the preset 't200' (Blue Robotics' tables), not {preset!r}")
    return replace(PRESETS[preset], **params)
