"""A tether as a MoorDyn line (Hall & Goupee 2015: lumped masses joined by axial
spring-dampers, with weight, buoyancy and Morison drag and added mass on every node), through
MoorDyn's Python package (``moordyn``, C++ MoorDyn v2).

The surface end is a fixed point (the reel); the vehicle end is a coupled point that the
simulator drives: ``step`` takes its world position and velocity at the end of the step and
returns the line's force on it, which acts on the vehicle's link over the next step (an explicit,
staggered coupling: the force lags the motion by one physics step). The water's velocity and
acceleration at every node (current and waves, ``hydro.environment.Environment.wave_state``)
are MoorDyn's external kinematics (``WaveKin 1``), set every ``water_period`` seconds of
simulated time at the middle of the coming period; the nodes then feel them in their drag and
Froude-Krylov forces.

MoorDyn advances a call of ``dt`` in steps of its ``dtM``, the last one the remainder, and
returns the force its last step computed: MoorDyn's second-order Runge-Kutta step computes the
forces at its middle, so a call of whole steps returns the force half a step (0.25 ms) before
its end. ``step`` sets ``dtM`` to ``dt / n`` for the fewest ``n`` steps within the stable step
(``time_step``), a hair shorter (a relative 1e-12), so that every call is ``n`` equal steps and
a last one of 1e-12 ``dt``, whose middle is the end of the call: the force is the one at the
coupling's instant for every length and period (before, it was the force at the middle of
whatever remainder the length left, 1e-18 s for the shipped 50 m in 50 segments).

MoorDyn's axes are z up from the mean surface; the simulator's are NED: (x, y, z) -> (x, -y, -z).
MoorDyn prints a time stamp on every step unless its input says ``DisableOutput``; it also
prints while it reads its input. Both are kept off the process's standard output: the option is
given, and creating and initialising the line run with file descriptor 1 sent to /dev/null
(``quiet``). The first step is watched as well: if it still prints (another MoorDyn build),
every step is run quietly from then on.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..spatial import Array
from .properties import TetherSpec

FLIP = np.array([1.0, -1.0, -1.0])  # NED <-> MoorDyn's z-up axes
_LIBC = ctypes.CDLL(None)


@contextlib.contextmanager
def quiet(capture: list[int] | None = None) -> Iterator[None]:
    """Run the body with file descriptor 1 (the process's standard output, where MoorDyn's C++
    code writes) sent to a temporary file, flushed on both sides; with ``capture`` the number of
    bytes written there is appended to it."""
    sys.stdout.flush()
    _LIBC.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        try:
            yield
        finally:
            _LIBC.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
            if capture is not None:
                capture.append(os.fstat(sink.fileno()).st_size)


def time_step(spec: TetherSpec, length: float) -> float:
    """MoorDyn's internal step for segments of ``length / segments``: half the time an axial
    wave takes along one segment (c = sqrt(EA / m)). The fastest mode of the chain of lumped
    masses has ω = 2c/l; with the internal damping at ζ of its critical damping, MoorDyn's
    explicit second-order Runge-Kutta scheme is stable up to about 2/(2ζ ω) = l/(2ζc) for
    ζ near 1 and 1.7/ω for ζ = 0.5: this step keeps a margin of 1.7 at the preset's ζ = 0.5
    (a 50-segment Fathom tether of 50 m: 0.5 ms; at ζ = 1 it would be at the limit)."""
    p = spec.properties
    c = math.sqrt(p["axial_stiffness"] / p["mass_per_length"])
    return 0.5 * (length / spec.segments) / c


def input_file(
    spec: TetherSpec, x_end: Array, density: float, gravity: float, depth: float, dt: float
) -> str:
    """MoorDyn's input for the tether: its line type, the fixed reel point and the coupled
    vehicle point (MoorDyn axes), one line of ``segments`` segments, and the options."""
    p = {k: float(v) for k, v in spec.properties.items()}
    a, b = [float(c) for c in spec.anchor * FLIP], [float(c) for c in x_end * FLIP]
    dt, density, gravity, depth = float(dt), float(density), float(gravity), float(depth)
    return "\n".join([
        "--------------------- MoorDyn Input File ------------------------------------",
        f"tether {spec.name}",
        "----------------------- LINE TYPES ------------------------------------------",
        "TypeName Diam Mass/m EA BA/-zeta EI Cd Ca CdAx CaAx",
        "(name) (m) (kg/m) (N) (N-s/-) (N-m^2) (-) (-) (-) (-)",
        f"tether {p['diameter']!r} {p['mass_per_length']!r} {p['axial_stiffness']!r} "
        f"{-p['internal_damping']!r} 0 {p['normal_drag']!r} {p['normal_added_mass']!r} "
        f"{p['tangential_drag']!r} {p['axial_added_mass']!r}",
        "---------------------- POINTS --------------------------------",
        "ID Attachment X Y Z Mass Volume CdA Ca",
        "(#) (-) (m) (m) (m) (kg) (m^3) (m^2) (-)",
        f"1 Fixed {a[0]!r} {a[1]!r} {a[2]!r} 0 0 0 0",
        f"2 Coupled {b[0]!r} {b[1]!r} {b[2]!r} 0 0 0 0",
        "---------------------- LINES --------------------------------------",
        "ID LineType AttachA AttachB UnstrLen NumSegs Outputs",
        "(#) (name) (#) (#) (m) (-) (-)",
        f"1 tether 1 2 {float(spec.length)!r} {int(spec.segments)} -",
        "---------------------- OPTIONS -----------------------------------------",
        f"{dt!r} dtM",
        f"{density!r} rho",
        f"{gravity!r} g",
        f"{depth!r} WtrDpth",
        "1 WaveKin",
        "0 dtIC",
        "1 DisableOutput",
        "1 DisableOutTime",
        "---------------------- OUTPUTS -----------------------------------------",
        "END",
        "------------------------- need this line --------------------------------------",
        "",
    ])  # fmt: skip


class MoorDynLine:
    """One tether in its own MoorDyn system (see the module docstring). Positions, velocities
    and forces in and out are world NED."""

    def __init__(self, spec: TetherSpec, x_end: Array, density: float, gravity: float, depth: float) -> None:
        import cmoordyn  # MoorDyn's C extension, from the ``moordyn`` package

        self._md = cmoordyn
        self.spec = spec
        self.length = float(spec.length)
        self.dt = time_step(spec, self.length)
        self._dir = tempfile.TemporaryDirectory(prefix="uvms_sim_tether_")
        path = Path(self._dir.name) / "tether.txt"
        path.write_text(input_file(spec, np.asarray(x_end, dtype=float), density, gravity, depth, self.dt))
        x = list(np.asarray(x_end, dtype=float) * FLIP)
        with quiet():
            self._system = cmoordyn.create(str(path))
            cmoordyn.set_verbosity(self._system, 4096)  # LEVEL_NONE: errors come back as exceptions
            err = cmoordyn.init(self._system, x, [0.0, 0.0, 0.0], 0)
            if err == 0:
                cmoordyn.ext_wave_init(self._system)
        if err != 0:
            raise ValueError(f"tether {spec.name!r}: MoorDyn could not start the line (error {err})")
        self._line = cmoordyn.get_line(self._system, 1)
        self._anchor_point = cmoordyn.get_point(self._system, 1)
        self.n_water = int(cmoordyn.ext_wave_n(self._system))
        self.force = np.zeros(3)  # the line's force on the vehicle's point, NED, N
        self._quiet_steps: bool | None = None  # whether every step must run quietly (decided at the first)
        self._divided = (0.0, 0.0)  # (call's dt, stable dt) MoorDyn's dtM was last set for

    def close(self) -> None:
        if self._system is not None:
            with quiet():
                self._md.close(self._system)
            self._system = None
            self._dir.cleanup()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def water_points(self) -> Array:
        """Where MoorDyn wants the water's kinematics (its nodes and points), world NED."""
        return np.asarray(self._md.ext_wave_coords(self._system), dtype=float).reshape(-1, 3) * FLIP

    def set_water(self, velocity: Array, acceleration: Array, t: float) -> None:
        """The water's velocity and acceleration (NED, one row per ``water_points`` point)."""
        u = (np.asarray(velocity, dtype=float) * FLIP).ravel().tolist()
        a = (np.asarray(acceleration, dtype=float) * FLIP).ravel().tolist()
        self._md.ext_wave_set(self._system, u, a, float(t))

    def set_length(self, length: float, rate: float) -> None:
        """Unstretched length (m) and its rate of change (m/s, paying out > 0); MoorDyn's
        internal step follows the segments' length."""
        self.length = float(length)
        self._md.line_set_ulen(self._line, self.length)
        self._md.line_set_ulenv(self._line, float(rate))
        dt = time_step(self.spec, self.length)
        if dt < 0.995 * self.dt or dt > 1.1 * self.dt:  # shorter segments at once: stability
            self.dt = dt  # MoorDyn's dtM follows at the next step (``_divide``)

    def _divide(self, dt: float) -> None:
        """MoorDyn's ``dtM`` for calls of ``dt``: ``dt / n`` for the fewest n steps within the
        stable step (1e-9 of it allowed for rounding), times 1 - 1e-12 (module docstring)."""
        n = max(1, math.ceil(dt / self.dt - 1e-9))
        self._md.set_dt(self._system, dt / n * (1.0 - 1e-12))
        self._divided = (dt, self.dt)

    def step(self, x: Array, v: Array, t: float, dt: float) -> Array:
        """Advance the line from t to t + dt with the vehicle's point ending at x moving at v
        (NED); returns (and keeps in ``force``) the line's force on that point (NED, N).
        FloatingPointError when MoorDyn fails or its force is not finite (the line is then
        lost: ``Simulator.reset`` starts it again)."""
        xs = [float(x[0]), -float(x[1]), -float(x[2])]
        vs = [float(v[0]), -float(v[1]), -float(v[2])]
        if (self._divided[0] != dt or self._divided[1] != self.dt) and dt > 0.0:
            self._divide(dt)
        try:
            f = self._step(xs, vs, t, dt)
        except RuntimeError as exc:  # MoorDyn's integration failed (a NaN in the line)
            raise FloatingPointError(f"tether {self.spec.name!r}: MoorDyn: {exc}") from None
        if not all(map(math.isfinite, f)):
            raise FloatingPointError(f"tether {self.spec.name!r}: non-finite force {tuple(f)} from MoorDyn")
        self.force[0], self.force[1], self.force[2] = f[0], -f[1], -f[2]
        return self.force

    def _step(self, xs: list[float], vs: list[float], t: float, dt: float):
        if self._quiet_steps is None:
            written: list[int] = []
            with quiet(written):
                f = self._md.step(self._system, xs, vs, float(t), float(dt))
            self._quiet_steps = written[0] > 0
        elif self._quiet_steps:
            with quiet():
                f = self._md.step(self._system, xs, vs, float(t), float(dt))
        else:
            f = self._md.step(self._system, xs, vs, float(t), float(dt))
        return f

    def nodes(self) -> Array:
        """The positions of the line's nodes from the reel (row 0) to the vehicle, NED."""
        md, line = self._md, self._line
        return np.array([md.line_get_node_pos(line, i) for i in range(self.spec.segments + 1)]) * FLIP

    def tensions(self) -> Array:
        """The tension of each segment (N), from the reel's to the vehicle's."""
        md, line = self._md, self._line
        return np.array([math.sqrt(sum(c * c for c in md.line_get_node_ten(line, i)))
                         for i in range(self.spec.segments + 1)])  # fmt: skip

    def anchor_tension(self) -> float:
        """The tension at the reel (N)."""
        f = self._md.line_get_node_ten(self._line, 0)
        return math.sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])
