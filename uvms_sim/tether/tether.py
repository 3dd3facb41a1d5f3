"""A tether coupled to a simulated vehicle, both ways: its line's force on the attachment point
acts on the link (as a wrench about the link's origin, in link axes) until the next coupling
(``Simulator.tether_period``), and the link's motion drives the line's end
(``line.MoorDynLine``). The reel pays out or hauls in towards a target length at its speed;
hauling in, it stalls while the tension at the reel is above its ``max_tension``. The water the
nodes feel (current and waves) is updated every ``WATER_PERIOD`` seconds of simulated time."""

from __future__ import annotations

import math

import numpy as np

from ..hydro.environment import Environment
from ..hydro.waves import kinematics_at
from ..log import logger
from ..spatial import Array
from .line import MoorDynLine
from .properties import TetherSpec

WATER_PERIOD = 0.05  # s between updates of the water's kinematics at the nodes (waves: ω dt << 1)
DUE = 1e-6 * WATER_PERIOD  # a time short of the next update by this much has reached it (sums of steps)


class Tether:
    """A ``TetherSpec`` running against a simulation: ``wrench`` before a physics step,
    ``advance`` after it (``Simulator.step`` calls both)."""

    def __init__(self, spec: TetherSpec, body: int, env: Environment, x_end: Array, t: float = 0.0) -> None:
        self.spec = spec
        self.body = body
        self.end = tuple(float(c) for c in spec.position)  # the attachment point, link axes
        self.env = env
        depth = 1.0e4 if env.seafloor is None else max(1.0, float(env.seafloor.depth) - (env.surface or 0.0))
        self.line = MoorDynLine(spec, x_end, env.density, env.gravity, depth)
        self.target = float(spec.length)
        self.speed = float(spec.reel_speed)
        self.stalled = False
        self._next_water = -math.inf
        self._still = False  # the water the nodes feel is a constant current (checked for changes)
        self._current: tuple = ()
        self._warned_break = False
        self._update_water(t, force=True)

    @property
    def length(self) -> float:
        """The unstretched length paid out (m)."""
        return self.line.length

    @property
    def force(self) -> Array:
        """The tether's force on the vehicle at its attachment point (world NED, N)."""
        return self.line.force

    def command(self, length: float, speed: float | None = None) -> tuple[float, float]:
        """Pay out or haul in to ``length`` (m) at ``speed`` (m/s; default the reel's): the
        target is clamped to the reel's ``min_length``..``max_length`` and the speed to
        0..``reel_speed`` (ValueError for a value that is not a finite number, or a negative
        one); returns the target and speed taken."""
        spec = self.spec
        if not (isinstance(length, int | float) and math.isfinite(length)) or length < 0.0:
            raise ValueError(f"tether length must be a finite number >= 0 m, got {length!r}")
        if speed is not None and (
            not (isinstance(speed, int | float) and math.isfinite(speed)) or speed < 0.0
        ):
            raise ValueError(f"tether speed must be a finite number >= 0 m/s, got {speed!r}")
        self.target = min(max(float(length), spec.min_length), spec.max_length)
        self.speed = spec.reel_speed if speed is None else min(float(speed), spec.reel_speed)
        return self.target, self.speed

    def wrench(self, R, out: Array) -> None:
        """Add the tether's wrench on its link, link axes about the link's origin, for the link's
        world rotation ``R`` (link -> world; an array or its rows), into ``out`` (6)."""
        (a0, a1, a2), (b0, b1, b2), (c0, c1, c2) = R.tolist() if isinstance(R, np.ndarray) else R
        g0, g1, g2 = self.line.force.tolist()
        f0, f1, f2 = a0 * g0 + b0 * g1 + c0 * g2, a1 * g0 + b1 * g1 + c1 * g2, a2 * g0 + b2 * g1 + c2 * g2
        r0, r1, r2 = self.end
        out += (f0, f1, f2, r1 * f2 - r2 * f1, r2 * f0 - r0 * f2, r0 * f1 - r1 * f0)

    def advance(self, t: float, dt: float, x: Array, v: Array) -> None:
        """The reel and the line from t to t + dt, the vehicle's point ending at x moving at v
        (world NED)."""
        if self.target != self.line.length:
            self._reel(dt)
        if t >= self._next_water - DUE or self._still:
            self._update_water(t)
        force = self.line.step(x, v, t, dt)
        if not self._warned_break:
            tension = math.hypot(*force.tolist())
            if tension > self.spec.properties["breaking_strength"]:
                self._warned_break = True
                logger.warning(
                    f"tether {self.spec.name!r}: tension {tension:.0f} N at the vehicle is beyond its "
                    f"breaking strength {self.spec.properties['breaking_strength']:.0f} N (the line is "
                    "kept whole)"
                )

    def _reel(self, dt: float) -> None:
        gap = self.target - self.line.length
        if gap == 0.0:
            return
        hauling = gap < 0.0
        self.stalled = hauling and self.line.anchor_tension() > self.spec.max_tension
        if self.stalled:
            self.line.set_length(self.line.length, 0.0)
            return
        step = min(abs(gap), self.speed * dt)
        rate = -self.speed if hauling else self.speed
        self.line.set_length(self.line.length + (-step if hauling else step), rate if step else 0.0)

    def _update_water(self, t: float, force: bool = False) -> None:
        """The water's kinematics at the nodes, at the middle of the coming period (current
        alone and constant: once)."""
        env = self.env
        waves = env.waves if env.surface is not None else None
        moving = env.current_profile is not None or waves is not None
        current = tuple(env.current) + tuple(env.current_acceleration)
        self._still = not moving
        if not force and (t < self._next_water - DUE if moving else current == self._current):
            return
        self._current = current
        self._next_water = t + WATER_PERIOD
        tm = t + 0.5 * WATER_PERIOD if moving else t
        points = self.line.water_points()
        vel, acc = kinematics_at(waves, points, env.surface or 0.0, tm)
        v, a = env.fluid_state(tm)
        self.line.set_water(vel + v, acc + a, tm)

    def close(self) -> None:
        self.line.close()
