"""Inertia and hydrodynamics of simple shapes (for models built in code)."""

from __future__ import annotations

import numpy as np

from ..hydro.drag import CylinderDrag
from ..hydro.params import Hydrodynamics
from ..spatial import Array, shift_to_origin

RHO_FRESH = 1000.0


def cylinder_inertia(mass: float, radius: float, length: float, axis: int) -> Array:
    """Solid cylinder inertia about its centre, symmetry axis along ``axis`` (0, 1, 2)."""
    transverse = mass * (3.0 * radius**2 + length**2) / 12.0
    d = np.full(3, transverse)
    d[axis] = 0.5 * mass * radius**2
    return np.diag(d)


def slender_cylinder_hydro(
    radius: float,
    length: float,
    axis: int,
    center: Array,
    drag_coefficient: float = 1.1,
    rho: float = RHO_FRESH,
    drag_model: str = "cylinder",
) -> Hydrodynamics:
    """Hydrodynamics of a slender cylinder (strip theory) about the link origin.

    Added mass per unit length ``ρπr²`` across the axis (potential flow round a circle), none
    along it. Pressure drag per unit length ``½ρ C_d 2r |v_n| v_n`` across the axis, either
    integrated along the link (``drag_model="cylinder"``, ``uvms_sim.hydro.drag``) or
    ``"lumped"``: diagonal quadratic damping on the velocity of the link origin (cheaper, exact
    only for translation). Volume ``πr²L`` with the centre of buoyancy at the centre.
    """
    if drag_model not in ("cylinder", "lumped"):
        raise ValueError(f"drag_model must be 'cylinder' or 'lumped', got {drag_model!r}")
    area = np.pi * radius**2
    ma = rho * area * length
    MA = np.zeros((6, 6))
    rot = ma * length**2 / 12.0
    for k in range(3):
        if k != axis:
            MA[k, k] = ma
            MA[3 + k, 3 + k] = rot
    center = np.asarray(center, dtype=float)
    dq = np.zeros(6)
    drag = None
    if drag_model == "lumped":
        for k in range(3):
            if k != axis:
                dq[k] = 0.5 * rho * drag_coefficient * 2.0 * radius * length
                dq[3 + k] = 0.5 * rho * drag_coefficient * 2.0 * radius * length**4 / 32.0
    else:
        e = np.eye(3)[axis]
        drag = CylinderDrag(length, radius, e, center - 0.5 * length * e, drag_coefficient)
    return Hydrodynamics(
        added_mass=shift_to_origin(MA, center),
        quadratic_damping=dq,
        volume=area * length,
        center_of_buoyancy=center,
        drag=drag,
    )
