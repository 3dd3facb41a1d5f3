"""What a link looks like: boxes, cylinders, spheres and meshes in link axes, as a URDF
``<visual>`` holds them, read from a description or made from what the description already
says about the link's shape.

A description gives them per link (``visual:`` in YAML, ``<visual>`` in a URDF; see
``docs/config.md``). A link without one is drawn from its hull (``hydrodynamics.hull``: box,
cylinder, sphere; an ellipsoid as a sphere scaled per axis, a mesh-free stand-in), else from its
drag cylinder (an arm link), else as a cube of its displaced volume (or of its mass at the
density of aluminium) about its centre of buoyancy or mass; a massless link with none of these
is not drawn. Thrusters are drawn as cylinders along their thrust axes (T200 size: 0.1 m across,
0.11 m long) on the links they sit on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from transforms3d.euler import mat2euler

from ..hydro.params import Hydrodynamics
from .system import Thruster

Array = np.ndarray
SHAPES = ("box", "cylinder", "sphere", "mesh")
HULL_COLOR = (0.95, 0.55, 0.1, 0.75)  # an orange hull, a little see-through (thrusters, arrows)
LINK_COLOR = (0.75, 0.75, 0.78, 1.0)
THRUSTER_COLOR = (0.15, 0.15, 0.17, 1.0)
THRUSTER_SIZE = (0.05, 0.11)  # radius, length: a Blue Robotics T200
ALUMINIUM = 2700.0  # kg/m^3: the stand-in cube of a dry link with mass


@dataclass(frozen=True)
class Visual:
    """One shape in link axes: ``size`` is ``(x, y, z)`` for a box, ``(radius, length)`` for a
    cylinder along the z axis of its origin, ``(radius,)`` for a sphere and the scale
    ``(sx, sy, sz)`` of ``mesh`` (a file name or URI); ``xyz`` and ``rpy`` place it as a URDF
    ``<origin>`` does."""

    shape: str
    size: tuple[float, ...]
    xyz: Array = field(default_factory=lambda: np.zeros(3))
    rpy: Array = field(default_factory=lambda: np.zeros(3))
    color: tuple[float, float, float, float] = LINK_COLOR
    mesh: str = ""

    def __post_init__(self) -> None:
        sizes = {"box": 3, "cylinder": 2, "sphere": 1, "mesh": 3}
        if self.shape not in sizes:
            raise ValueError(f"visual shape must be one of {list(sizes)}, got {self.shape!r}")
        size = tuple(float(x) for x in self.size)
        if len(size) != sizes[self.shape] or not all(np.isfinite(x) and x > 0.0 for x in size):
            raise ValueError(
                f"a {self.shape} visual needs {sizes[self.shape]} positive sizes, got {list(size)}"
            )
        if self.shape == "mesh" and not self.mesh:
            raise ValueError("a mesh visual needs a file name")
        color = tuple(float(c) for c in self.color)
        if len(color) != 4 or not all(0.0 <= c <= 1.0 for c in color):
            raise ValueError(f"a colour is r, g, b, a in [0, 1], got {list(color)}")
        for name in ("xyz", "rpy"):
            v = np.array(getattr(self, name), dtype=float).reshape(3)
            if not np.all(np.isfinite(v)):
                raise ValueError(f"visual {name} must be finite")
            object.__setattr__(self, name, v)
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "color", color)


def axis_rpy(axis: Array) -> Array:
    """The URDF ``rpy`` of a frame whose z axis is ``axis`` (for a cylinder along it)."""
    z = np.asarray(axis, dtype=float)
    z = z / np.linalg.norm(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    R = np.column_stack([x, np.cross(z, x), z])
    return np.array(mat2euler(R, "sxyz"))


def link_collisions(body) -> tuple[Visual, ...]:
    """The shapes with which a body (``model.body.Body``) touches the world: its ``collision``
    shapes as described, else its hull (the displaced volume's shape), else its drag cylinder,
    else a cube of its displaced volume, else a cube of aluminium of its mass (the shapes that
    ``default_visuals`` draws); none for a link with neither mass nor volume."""
    if body.collisions is not None:
        return tuple(body.collisions)
    return tuple(
        Visual(v.shape, v.size, v.xyz, v.rpy) for v in default_visuals(body.mass, body.com, body.hydro)
    )


def default_visuals(mass: float, com: Array, hydro: Hydrodynamics | None) -> tuple[Visual, ...]:
    """A link's look from its hull, drag cylinder, displaced volume or mass (module doc)."""
    hull = hydro.hull if hydro is not None else None
    if hull is not None and hull.spec:
        spec = dict(hull.spec)
        center = hull.centroid
        shape = spec.get("shape")
        if shape == "box":
            return (Visual("box", tuple(spec["size"]), center, color=HULL_COLOR),)
        if shape == "sphere":
            return (Visual("sphere", (spec["radius"],), center, color=HULL_COLOR),)
        if shape == "cylinder":
            axis = {"x": [1, 0, 0], "y": [0, 1, 0], "z": [0, 0, 1]}[spec.get("axis", "x")]
            size = (spec["radius"], spec["length"])
            return (Visual("cylinder", size, center, axis_rpy(np.array(axis, float)), HULL_COLOR),)
        if shape == "ellipsoid":  # three crossed boxes would hide it; a box of its extent does not
            a = np.asarray(spec["semi_axes"], dtype=float)
            return (Visual("box", tuple(1.6 * a), center, color=HULL_COLOR),)  # 1.6 a: the same volume
    if hydro is not None and hydro.drag is not None:
        d = hydro.drag
        middle = d.start + 0.5 * d.length * d.axis
        return (Visual("cylinder", (d.radius, d.length), middle, axis_rpy(d.axis), LINK_COLOR),)
    if hydro is not None and hydro.volume > 0.0:
        side = hydro.volume ** (1.0 / 3.0)
        color = HULL_COLOR if mass > 1.0 else LINK_COLOR
        return (Visual("box", (side, side, side), hydro.center_of_buoyancy, color=color),)
    if mass > 0.0:
        side = (mass / ALUMINIUM) ** (1.0 / 3.0)
        return (Visual("box", (side, side, side), com, color=LINK_COLOR),)
    return ()


def thruster_visual(thruster: Thruster) -> Visual:
    """A thruster as a cylinder along its thrust axis, centred on its position."""
    return Visual("cylinder", THRUSTER_SIZE, thruster.position, axis_rpy(thruster.direction), THRUSTER_COLOR)
