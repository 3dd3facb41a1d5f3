"""Random physically valid trees for property tests."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from uvms_sim.hydro import Hydrodynamics
from uvms_sim.model import Body, Joint, Model


def random_inertia(rng: np.random.Generator) -> np.ndarray:
    """A rotated inertia whose principal moments satisfy the triangle inequality."""
    x, y, z = rng.uniform(0.05, 1.0, 3)
    R = Rotation.random(random_state=rng).as_matrix()
    return R @ np.diag([y + z, x + z, x + y]) @ R.T


def random_hydro(rng: np.random.Generator, damping: bool = True) -> Hydrodynamics:
    A = rng.normal(size=(6, 6))
    B = rng.normal(size=(6, 6))
    return Hydrodynamics(
        added_mass=A @ A.T,
        linear_damping=B @ B.T if damping else np.zeros((6, 6)),
        quadratic_damping=rng.uniform(0.0, 2.0, 6) if damping else np.zeros(6),
        volume=float(rng.uniform(0.0, 0.01)),
        center_of_buoyancy=rng.normal(size=3) * 0.1,
    )


ALL_TYPES = (
    "revolute",
    "prismatic",
    "spherical",
    "fixed",
    "continuous",
    "revolute",
    "spherical",
    "prismatic",
)


def random_tree(
    rng: np.random.Generator,
    root: str = "free",
    types: tuple[str, ...] = ALL_TYPES,
    hydro: bool = True,
    damping: bool = True,
) -> Model:
    """Root joint ``root`` then one body per entry of ``types`` on a random earlier parent."""
    bodies = []
    for i, t in enumerate((root, *types)):
        bodies.append(
            Body(
                name=f"b{i}",
                parent=-1 if i == 0 else int(rng.integers(0, i)),
                joint=Joint(t, axis=rng.normal(size=3)),
                mass=float(rng.uniform(0.5, 3.0)),
                com=rng.normal(size=3) * 0.1,
                inertia=random_inertia(rng),
                origin_xyz=rng.normal(size=3) * 0.5,
                origin_rpy=rng.normal(size=3),
                hydro=random_hydro(rng, damping) if hydro else None,
            )
        )
    return Model(bodies, name="random")


def random_state(model: Model, rng: np.random.Generator, speed: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    q = model.neutral()
    for i, joint in enumerate(model.joints):
        s = model.q_slice(i)
        if joint.type == "free":
            x = rng.normal(size=7)
            x[3:] /= np.linalg.norm(x[3:])
            q[s] = x
        elif joint.type == "spherical":
            x = rng.normal(size=4)
            q[s] = x / np.linalg.norm(x)
        else:
            q[s] = rng.normal(size=joint.nq)
    return q, speed * rng.normal(size=model.nv)
