"""What every view draws, computed once per frame from the simulator's state: the world pose of
each link and each thruster's thrust as an arrow, in the ROS world frame (``odom``: ENU, z up),
and the fixed scene (the water surface and a plane seabed: ``world_planes``; the other
surfaces of the description's scene: ``scene_meshes``) — used by the RViz
markers (``ros.scene``) and the browser view (``viz.rerun_view``) alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..frames import NED_TO_ENU
from ..model.kinematics import placements
from ..model.system import System

ARROW_SCALE = 0.02  # m of arrow per newton of thrust (a T200 at full forward: 1 m)
SURFACE_HALF_SIZE = 3.0  # m: the drawn patch of water surface and seabed around the origin


@dataclass(frozen=True)
class Plane:
    """A plane of the world that the views draw: ``kind`` ``"surface"`` (the free surface) or
    ``"seabed"``, through ``point`` with the unit ``normal`` pointing up (both world ENU)."""

    kind: str
    point: np.ndarray
    normal: np.ndarray

    def height(self, x: float, y: float) -> float:
        """The plane's ENU z above the point (x, y)."""
        n, p = self.normal, self.point
        return float(p[2] - (n[0] * (x - p[0]) + n[1] * (y - p[1])) / n[2])


def world_planes(system: System) -> list[Plane]:
    """The world's planes: the free surface (``environment.surface``) and the scene's seabed
    when it is a plane (``scene.seabed``, which may slope; contacts and sensors read the same)."""
    env = system.environment
    up = np.array([0.0, 0.0, 1.0])
    planes = [] if env.surface is None else [Plane("surface", np.array([0.0, 0.0, -float(env.surface)]), up)]
    plane = system.scene.plane if system.scene is not None else None
    if plane is not None:  # NED z = depth + s0 x + s1 y; its upward normal in ENU
        n = NED_TO_ENU @ plane.seafloor.normal
        planes.append(Plane("seabed", np.array([0.0, 0.0, -float(plane.depth)]), n))
    return planes


def scene_meshes(system: System) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The scene's surfaces that are not a plane (a heightmap or mesh seabed, the structures):
    (kind ``"seabed"`` or ``"structure"``, vertices world ENU, triangles)."""
    scene = system.scene
    if scene is None:
        return []
    return [
        ("seabed" if name == "seabed" else "structure", vertices @ NED_TO_ENU.T, faces)
        for name, vertices, faces in scene.surfaces()
        if not (name == "seabed" and scene.plane is not None)
    ]


@dataclass
class Frame:
    """One frame of the scene: link poses (world ENU; rotation link axes -> world) and thrust
    arrows (origins and vectors, world ENU, arrow metres)."""

    R: np.ndarray  # nbodies x 3 x 3
    p: np.ndarray  # nbodies x 3
    arrow_origins: np.ndarray  # nthrusters x 3
    arrows: np.ndarray  # nthrusters x 3
    thrust: np.ndarray  # nthrusters, N
    # the working water (viz.water): each tether's (name, nodes ENU, tension N), and the wave
    # surface's (vertices ENU, triangles) or None
    tethers: list = field(default_factory=list)
    surface: tuple | None = None


class SceneState:
    """Link poses and thrust arrows of a system, one ``frame`` per call (no allocation of the
    model's data per call)."""

    def __init__(self, system: System) -> None:
        self.system = system
        self.model = system.model
        self.data = self.model.create_data()
        self.thruster_body = np.array([self.model.body_index(t.body) for t in system.thrusters], dtype=int)
        self.thruster_p = np.array([t.position for t in system.thrusters]).reshape(-1, 3)
        self.thruster_d = np.array([t.direction for t in system.thrusters]).reshape(-1, 3)

    def frame(self, q: np.ndarray, thrust: np.ndarray | None) -> Frame:
        placements(self.model, self.data, q)
        R = np.einsum("ij,bjk->bik", NED_TO_ENU, self.data.R_world)
        p = self.data.p_world @ NED_TO_ENU.T
        if len(self.thruster_body):
            Rb, pb = R[self.thruster_body], p[self.thruster_body]
            origins = pb + np.einsum("tij,tj->ti", Rb, self.thruster_p)
            force = np.zeros(len(self.thruster_body)) if thrust is None else np.asarray(thrust, dtype=float)
            arrows = np.einsum("tij,tj->ti", Rb, self.thruster_d) * (ARROW_SCALE * force)[:, None]
        else:
            origins = arrows = force = np.zeros((0, 3))
        return Frame(R, p, origins, arrows, np.asarray(force))

    def surface_height(self) -> float | None:
        """The free surface's height in the world (ENU z), None without one."""
        s = self.system.environment.surface
        return None if s is None else -float(s)

    def current(self, t: float) -> np.ndarray:
        """The water's velocity at time t, world ENU (m/s)."""
        return NED_TO_ENU @ self.system.environment.fluid_state(t)[0]
