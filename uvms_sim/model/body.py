"""A rigid body of a tree and the joint that attaches it to its parent."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from transforms3d.euler import euler2mat

from ..hydro.params import Hydrodynamics
from ..spatial import Array
from .joints import Joint


def inertia_problem(inertia: Array) -> str | None:
    """What makes a 3x3 rotational inertia (about the centre of mass) impossible for a rigid
    body, or None: it must be symmetric, positive semi-definite, and its principal moments must
    satisfy the triangle inequality (each at most the sum of the other two)."""
    scale = max(1.0, float(np.abs(inertia).max()))
    if not np.allclose(inertia, inertia.T, rtol=0.0, atol=1e-12 * scale):
        return "the inertia matrix must be symmetric"
    ev = np.linalg.eigvalsh(inertia)
    if ev.min() < -1e-12:
        return f"the inertia must be positive (semi-)definite, its eigenvalues are {ev.round(9).tolist()}"
    if ev.sum() - 2.0 * ev.max() < -1e-9 * max(1.0, ev.sum()):
        moments = ev.round(9).tolist()
        return f"principal moments {moments} violate the triangle inequality (no rigid body has them)"
    return None


@dataclass(frozen=True)
class Body:
    """One link of a tree.

    ``parent`` is the index of the parent body, -1 for the world. The joint frame sits in the
    parent frame at ``origin_xyz`` with orientation ``origin_rpy`` (roll, pitch, yaw about the
    parent's fixed x, y, z axes, as a URDF ``<origin>``). The body frame coincides with the
    joint frame at the joint's zero configuration. ``com`` and ``inertia`` (3x3 about the centre
    of mass, body axes) describe the rigid body; ``hydro`` its fluid terms (None: dry link).
    """

    name: str
    parent: int
    joint: Joint
    mass: float
    com: Array = field(default_factory=lambda: np.zeros(3))
    inertia: Array = field(default_factory=lambda: np.zeros((3, 3)))
    origin_xyz: Array = field(default_factory=lambda: np.zeros(3))
    origin_rpy: Array = field(default_factory=lambda: np.zeros(3))
    hydro: Hydrodynamics | None = None
    joint_name: str = ""
    visuals: tuple = ()  # model.visual.Visual, link axes; () = drawn from the hull, drag or mass
    collisions: tuple | None = (
        None  # model.visual.Visual shapes that touch; None: from the hull, drag or mass
    )

    def __post_init__(self) -> None:
        if not self.mass >= 0.0:
            raise ValueError(f"body {self.name!r}: mass must be >= 0, got {self.mass}")
        inertia = np.array(self.inertia, dtype=float).reshape(3, 3)
        problem = inertia_problem(inertia)
        if problem:
            raise ValueError(f"body {self.name!r}: {problem}")
        object.__setattr__(self, "inertia", inertia)
        object.__setattr__(self, "com", np.array(self.com, dtype=float).reshape(3))
        object.__setattr__(self, "origin_xyz", np.array(self.origin_xyz, dtype=float).reshape(3))
        object.__setattr__(self, "origin_rpy", np.array(self.origin_rpy, dtype=float).reshape(3))
        if not self.joint_name:
            object.__setattr__(self, "joint_name", f"{self.name}_joint")

    def tree_transform(self) -> tuple[Array, Array]:
        """``(E_T, r_T)``: parent frame -> joint frame (constant)."""
        R = euler2mat(*self.origin_rpy, axes="sxyz")
        return R.T, self.origin_xyz.copy()
