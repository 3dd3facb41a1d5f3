"""Joint types: what a joint contributes to the configuration ``q`` and the velocity ``v``.

Every joint maps its slice of ``q`` to the transform from its joint frame to the child body
frame, ``(E_J, r_J)`` (conventions in ``uvms_sim.spatial``), and has a constant motion
subspace ``S`` (6 x nv, linear-first) expressed in the child frame, so that the joint's
spatial velocity is ``S @ v_i`` (McMillan et al. 1996 eq. 9, ``φ_i q̇_i``) and its velocity-product term
``c_J = Ṡ q̇`` vanishes for every type here.

- ``fixed``: nq = nv = 0.
- ``revolute`` / ``continuous``: angle about ``axis``; nq = nv = 1.
- ``prismatic``: displacement along ``axis``; nq = nv = 1.
- ``spherical`` (ball): q = unit quaternion ``[w x y z]`` of the child in the joint frame,
  v = child angular velocity in child coordinates; nq = 4, nv = 3.
- ``free`` (floating base): q = ``[x y z]`` position in the parent (world NED) frame and the
  quaternion ``[w x y z]`` parent_R_child; v = body-frame ``[u v w p q r]`` (Fossen/SNAME).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from transforms3d.axangles import axangle2mat
from transforms3d.quaternions import quat2mat

from ..spatial import Array

JOINT_TYPES = ("fixed", "revolute", "continuous", "prismatic", "spherical", "free")
_NQ = {"fixed": 0, "revolute": 1, "continuous": 1, "prismatic": 1, "spherical": 4, "free": 7}
_NV = {"fixed": 0, "revolute": 1, "continuous": 1, "prismatic": 1, "spherical": 3, "free": 6}


@dataclass(frozen=True)
class Joint:
    """A joint between a parent frame and a child body."""

    type: str
    axis: Array = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    lower: float = -np.inf
    upper: float = np.inf
    effort_limit: float = np.inf
    velocity_limit: float = np.inf
    # a mimic joint: (the leading joint's name, multiplier, offset), q = multiplier q_lead + offset
    mimic: tuple[str, float, float] | None = None
    S: Array = field(init=False, repr=False, compare=False)  # motion subspace, set from type and axis

    def __post_init__(self) -> None:
        if self.type not in JOINT_TYPES:
            raise ValueError(f"joint type {self.type!r} is not one of {JOINT_TYPES}")
        axis = np.asarray(self.axis, dtype=float).reshape(3)
        norm = np.linalg.norm(axis)
        if self.type in ("revolute", "continuous", "prismatic") and not norm > 0.0:
            raise ValueError(f"{self.type} joint needs a non-zero axis, got {axis}")
        object.__setattr__(self, "axis", axis / norm if norm > 0 else axis)
        S = np.zeros((6, _NV[self.type]))
        if self.type in ("revolute", "continuous"):
            S[3:, 0] = self.axis
        elif self.type == "prismatic":
            S[:3, 0] = self.axis
        elif self.type == "spherical":
            S[3:, :] = np.eye(3)
        elif self.type == "free":
            S[:, :] = np.eye(6)
        S.setflags(write=False)
        object.__setattr__(self, "S", S)

    @property
    def nq(self) -> int:
        return _NQ[self.type]

    @property
    def nv(self) -> int:
        return _NV[self.type]

    @property
    def has_quaternion(self) -> bool:
        return self.type in ("spherical", "free")

    def neutral(self) -> Array:
        """The zero configuration (identity quaternion where there is one)."""
        q = np.zeros(self.nq)
        if self.type == "spherical":
            q[0] = 1.0
        elif self.type == "free":
            q[3] = 1.0
        return q

    def transform(self, q: Array) -> tuple[Array, Array]:
        """``(E_J, r_J)``: joint frame -> child frame for this joint's slice of q."""
        t = self.type
        if t in ("revolute", "continuous"):
            return axangle2mat(self.axis, q[0], is_normalized=True).T, np.zeros(3)
        if t == "prismatic":
            return np.eye(3), self.axis * q[0]
        if t == "spherical":
            return quat2mat(q).T, np.zeros(3)
        if t == "free":
            return quat2mat(q[3:7]).T, np.array(q[:3], dtype=float)
        return np.eye(3), np.zeros(3)
