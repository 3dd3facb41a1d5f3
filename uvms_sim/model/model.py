"""``Model``: the immutable description of a tree-structured system, and its ``Data`` scratch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..hydro.hull import default_hull
from ..hydro.params import Hydrodynamics
from ..spatial import Array, spatial_inertia
from .body import Body


class Model:
    """A tree of rigid bodies joined by joints (McMillan et al. 1996 section 3).

    Bodies are numbered so that a parent precedes its children (McMillan et al. 1996: "a link's number
    always greater than its predecessor"), which lets every recursion be a plain loop.
    ``q`` and ``v`` are the concatenation of the joints' slices in body order.
    """

    def __init__(self, bodies: Sequence[Body], name: str = "system") -> None:
        if not bodies:
            raise ValueError("a model needs at least one body")
        names = [b.name for b in bodies]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"body names must be unique, repeated: {dup}")
        for i, b in enumerate(bodies):
            if not -1 <= b.parent < i:
                raise ValueError(
                    f"body {b.name!r} (index {i}) has parent {b.parent}: parents must precede children"
                )
        self.name = name
        self.bodies: tuple[Body, ...] = tuple(bodies)
        self.nbodies = len(bodies)
        self.parents = np.array([b.parent for b in bodies], dtype=int)
        self.children: tuple[tuple[int, ...], ...] = tuple(
            tuple(j for j in range(self.nbodies) if self.parents[j] == i) for i in range(self.nbodies)
        )
        nq = [b.joint.nq for b in bodies]
        nv = [b.joint.nv for b in bodies]
        self.idx_q = np.concatenate(([0], np.cumsum(nq)[:-1])).astype(int)
        self.idx_v = np.concatenate(([0], np.cumsum(nv)[:-1])).astype(int)
        self.nq = int(sum(nq))
        self.nv = int(sum(nv))
        self.joints = tuple(b.joint for b in bodies)
        self.tree = [b.tree_transform() for b in bodies]
        self.I_RB = np.array([spatial_inertia(b.mass, b.com, b.inertia) for b in bodies])
        hydro = [b.hydro or Hydrodynamics() for b in bodies]
        self.M_A = np.array([h.added_mass for h in hydro])
        self.D_lin = np.array([h.linear_damping for h in hydro])
        self.d_quad = np.array([h.quadratic_damping for h in hydro])
        self.volume = np.array([h.volume for h in hydro])
        self.cob = np.array([h.center_of_buoyancy for h in hydro])
        self.damping_center = np.array([h.damping_center for h in hydro])
        self.drag = tuple(h.drag for h in hydro)  # per-link strip-theory drag models (or None)
        # displaced-volume shapes for the free surface: given, or a sphere of the volume at the CoB
        self.hull = tuple(
            h.hull if h.hull is not None or h.volume <= 0 else default_hull(h.volume, h.center_of_buoyancy)
            for h in hydro
        )
        self.mass = np.array([b.mass for b in bodies])
        self.com = np.array([b.com for b in bodies])
        self.I_H = self.I_RB + self.M_A  # McMillan et al. 1996 eq. 3
        for arr in (
            self.I_RB,
            self.M_A,
            self.D_lin,
            self.d_quad,
            self.volume,
            self.cob,
            self.damping_center,
            self.I_H,
        ):
            arr.setflags(write=False)

    # -- naming ---------------------------------------------------------------------------
    def body_index(self, name: str) -> int:
        for i, b in enumerate(self.bodies):
            if b.name == name:
                return i
        raise KeyError(f"no body named {name!r} in model {self.name!r}")

    @property
    def joint_names(self) -> list[str]:
        """Names of the joints that have degrees of freedom, in v order."""
        return [b.joint_name for b in self.bodies if b.joint.nv > 0]

    def q_slice(self, i: int) -> slice:
        return slice(self.idx_q[i], self.idx_q[i] + self.joints[i].nq)

    def v_slice(self, i: int) -> slice:
        return slice(self.idx_v[i], self.idx_v[i] + self.joints[i].nv)

    # -- states ---------------------------------------------------------------------------
    def neutral(self) -> Array:
        """Zero configuration (identity quaternions)."""
        return np.concatenate([j.neutral() for j in self.joints]) if self.nq else np.zeros(0)

    def create_data(self) -> Data:
        return Data(self)

    def __repr__(self) -> str:
        return f"Model({self.name!r}, bodies={self.nbodies}, nq={self.nq}, nv={self.nv})"


class Data:
    """Per-call scratch arrays of the algorithms, allocated once per model (as Pinocchio)."""

    def __init__(self, model: Model) -> None:
        n = model.nbodies
        self.E = np.zeros((n, 3, 3))  # parent -> body rotation
        self.r = np.zeros((n, 3))  # body origin in parent coordinates
        self.X = np.zeros((n, 6, 6))  # parent -> body motion transform
        self.R_world = np.zeros((n, 3, 3))  # world_R_body
        self.p_world = np.zeros((n, 3))  # body origin in world NED
        self.v = np.zeros((n, 6))  # body spatial velocity (body coordinates)
        self.v_rel = np.zeros((n, 6))  # velocity relative to the fluid (McMillan et al. 1996 eq. 9)
        self.c = np.zeros((n, 6))  # velocity-product acceleration
        self.a = np.zeros((n, 6))  # body spatial acceleration
        self.bias = np.zeros((n, 6))  # hydrodynamic bias p_i: f_i = I_H a_i + p_i
        self.f = np.zeros((n, 6))  # joint reaction wrench parent -> body, body coordinates
        self.IA = np.zeros((n, 6, 6))
        self.pA = np.zeros((n, 6))
        self.U: list[Array] = [np.zeros((6, j.nv)) for j in model.joints]
        self.Dinv: list[Array] = [np.zeros((j.nv, j.nv)) for j in model.joints]
        self.u: list[Array] = [np.zeros(j.nv) for j in model.joints]
        self.ddq = np.zeros(model.nv)
        self.tau = np.zeros(model.nv)
        self.M = np.zeros((model.nv, model.nv))
        self.Ic = np.zeros((n, 6, 6))
        self.hydro_wrench = np.zeros((n, 6))  # fluid + gravity wrench on each body (diagnostics)
