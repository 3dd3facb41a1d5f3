"""What a tether is: its cable's properties (a preset: Blue Robotics' Fathom ROV tether), where
it runs (from a surface point or reel, world NED, to a point of a vehicle's link) and its reel.

Fathom ROV tether, R2 (Blue Robotics, "Fathom ROV Tether (R2)" product documentation): diameter
7.6 mm, 0.043 kg/m, neutrally buoyant in fresh water, 350 lbf (1557 N) breaking strength, Kevlar
strength fibres. Blue Robotics publishes no axial stiffness: it is the breaking strength over
the elongation at break of its Kevlar 29 strength member, 3.6 % (DuPont, "Kevlar aramid fiber
technical guide", table 2): EA = 1557 N / 0.036 = 43 kN. Drag: a smooth circular cylinder in
cross flow at the tether's Reynolds numbers (10^3-10^4) has C_d = 1.2 (Hoerner 1965, ch. 3,
fig. 8; DNV-RP-C205 2010 §6.7.1, fig. 6-6); along its axis the skin friction on its wetted
surface is C_f = 0.01 (Hoerner 1965, ch. 2, §5: a long thin cylinder in axial flow);
transverse added mass C_a = 1 (a circular cylinder, DNV-RP-C205 table D-1), none along the axis.
The internal damping (half the critical damping of a segment's axial mode) is numerical: it
damps the segments' axial ringing, which the real tether's jacket does too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..spatial import Array

# Blue Robotics' Fathom ROV tether (R2), see the module docstring. Drag coefficients in
# MoorDyn's convention: the normal one on the projected area d L, the tangential one on the
# wetted surface π d L.
FATHOM = {
    "diameter": 0.0076,  # m
    "mass_per_length": 0.043,  # kg/m in air
    "breaking_strength": 1557.0,  # N (350 lbf)
    "axial_stiffness": 43_000.0,  # N: EA = 1557 N / 0.036 (Kevlar 29 elongation at break)
    "normal_drag": 1.2,
    "tangential_drag": 0.01,
    "normal_added_mass": 1.0,
    "axial_added_mass": 0.0,
    "internal_damping": 0.5,  # of the critical damping of one segment's axial mode
}
PRESETS = {"fathom": FATHOM}
PROPERTIES = tuple(FATHOM)


@dataclass(frozen=True)
class TetherSpec:
    """One tether of a description (``tethers[]`` in docs/config.md): from ``anchor`` (world
    NED: the surface point or reel) to ``position`` on ``link`` (link axes), ``length`` metres
    of it paid out (unstretched) in ``segments`` lumped-mass segments, with the cable
    properties of ``PROPERTIES`` (default: the Fathom tether) and a reel that pays out and hauls
    in at ``reel_speed`` between ``min_length`` and ``max_length``, stalling while hauling in
    against more than ``max_tension``."""

    name: str
    link: str
    position: Array
    anchor: Array
    length: float
    segments: int = 50
    properties: dict = field(default_factory=lambda: dict(FATHOM))
    reel_speed: float = 0.5  # m/s
    min_length: float = 1.0  # m
    max_length: float = 300.0  # m (a Fathom spool holds 300 m)
    max_tension: float = 0.5 * FATHOM["breaking_strength"]  # N: the reel stalls above it hauling in

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", _vec3("position", self.position))
        object.__setattr__(self, "anchor", _vec3("anchor", self.anchor))
        p = self.properties
        missing = sorted(set(PROPERTIES) - set(p))
        if missing:
            raise ValueError(f"tether {self.name!r}: missing properties {missing}")
        for key in ("diameter", "mass_per_length", "breaking_strength", "axial_stiffness"):
            if not (math.isfinite(p[key]) and p[key] > 0.0):
                raise ValueError(f"tether {self.name!r}: {key} must be a finite number > 0, got {p[key]}")
        for key in (
            "normal_drag",
            "tangential_drag",
            "normal_added_mass",
            "axial_added_mass",
            "internal_damping",
        ):
            if not (math.isfinite(p[key]) and p[key] >= 0.0):
                raise ValueError(f"tether {self.name!r}: {key} must be a finite number >= 0, got {p[key]}")
        if not 1 <= int(self.segments) <= 500:
            raise ValueError(f"tether {self.name!r}: segments must be 1 to 500, got {self.segments}")
        for key in ("length", "reel_speed", "min_length", "max_length", "max_tension"):
            value = getattr(self, key)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"tether {self.name!r}: {key} must be a finite number > 0, got {value}")
        if not self.min_length <= self.length <= self.max_length:
            raise ValueError(
                f"tether {self.name!r}: length {self.length:g} m is outside the reel's "
                f"{self.min_length:g} to {self.max_length:g} m"
            )

    def wet_weight(self, density: float, gravity: float) -> float:
        """Weight minus buoyancy per metre (N/m; negative: it floats) in water of ``density``."""
        d = self.properties["diameter"]
        return (self.properties["mass_per_length"] - density * math.pi * d * d / 4.0) * gravity


def _vec3(name: str, x) -> Array:
    arr = np.asarray(x, dtype=float).reshape(-1)
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be 3 finite numbers, got {x!r}")
    return arr
