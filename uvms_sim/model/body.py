"""A rigid body of a tree and the joint that attaches it to its parent."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from transforms3d.euler import euler2mat

from ..hydro.params import Hydrodynamics
from ..spatial import Array
from .joints import Joint


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

    def __post_init__(self) -> None:
        if not self.mass >= 0.0:
            raise ValueError(f"body {self.name!r}: mass must be >= 0, got {self.mass}")
        inertia = np.array(self.inertia, dtype=float).reshape(3, 3)
        if not np.allclose(inertia, inertia.T, atol=1e-12):
            raise ValueError(f"body {self.name!r}: inertia must be symmetric")
        ev = np.linalg.eigvalsh(inertia)
        if ev.min() < -1e-12 or (ev.sum() - 2.0 * ev.max()) < -1e-9 * max(1.0, ev.sum()):
            raise ValueError(
                f"body {self.name!r}: inertia {ev} violates positivity or the triangle inequality"
            )
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
