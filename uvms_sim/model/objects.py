"""Free objects of a scene (``scene.objects`` in a description): each a body of the system on a
free joint (a one-link vehicle without thrusters), with its mass, inertia and hydrodynamics
from its shape (``hydro.shapes``) unless the description gives them, touching everything
through its shape (``dynamics.touch``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from transforms3d.euler import euler2quat

from ..hydro.params import Hydrodynamics
from ..hydro.shapes import shape_hydrodynamics, solid_properties
from ..spatial import Array, shift_to_origin
from .body import Body
from .hydro_reader import read_hydrodynamics
from .joints import Joint
from .model import Model
from .reader import LinkSpec, VehicleSpec, _angles
from .scene_reader import read_shape
from .system import System, Vehicle
from .visual import Visual
from .yaml_source import ConfigError, Cursor

OBJECT_KEYS = (
    "size",
    "file",
    "scale",
    "mass",
    "density",
    "xyz",
    "rpy",
    "hydrodynamics",
    "color",
    "description",
)
OBJECT_COLOR = (0.85, 0.45, 0.15, 1.0)


def read_objects(cur: Cursor, base_dir: Path, water_density: float) -> list[VehicleSpec]:
    """The objects of ``scene.objects``, as one-link vehicles placed at their ``xyz``, ``rpy``
    (world NED)."""
    out = []
    for c in cur.seq("a list of objects"):
        c.mapping(("name", "shape"), OBJECT_KEYS)
        out.append(read_object(c, base_dir, water_density))
    return out


def read_object(cur: Cursor, base_dir: Path, water_density: float) -> VehicleSpec:
    name = cur["name"].text()
    xyz = cur["xyz"].vector(3) if "xyz" in cur else np.zeros(3)
    rpy = _angles(cur["rpy"]) if "rpy" in cur else np.zeros(3)
    # xyz and rpy place the body; the shape is at the origin of its frame
    shape = replace(read_shape(cur, base_dir), xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0))
    mesh = shape.triangles() if shape.kind == "mesh" else None
    try:
        volume, centroid, unit_inertia, extents = solid_properties(shape.kind, shape.size, mesh)
    except ValueError as exc:
        raise cur["file"].error(str(exc)) from None
    if ("mass" in cur) == ("density" in cur):
        raise cur.error("an object needs exactly one of `mass` (kg) or `density` (kg/m^3)")
    mass = (
        cur["mass"].number(positive=True) if "mass" in cur else cur["density"].number(positive=True) * volume
    )
    if not mass <= 1e6:
        raise cur["mass" if "mass" in cur else "density"].error(f"an object of {mass:.3g} kg: at most 1000 t")
    inertia = unit_inertia * (mass / volume)
    if "hydrodynamics" in cur:
        hydro = read_hydrodynamics(cur["hydrodynamics"])
    else:
        MA, drag = shape_hydrodynamics(shape.kind, volume, extents, water_density)
        hydro = Hydrodynamics(
            added_mass=_shifted(MA, centroid), quadratic_damping=drag, volume=volume,
            center_of_buoyancy=centroid, damping_center=centroid,
        )  # fmt: skip
    color = tuple(cur["color"].vector(4)) if "color" in cur else OBJECT_COLOR
    size = shape.size
    visual = Visual(shape.kind, size, mesh=shape.mesh, color=color)
    collision = Visual(shape.kind, size, mesh=shape.mesh)
    link = LinkSpec(name, mass, centroid, inertia, hydro, cur, (visual,), (collision,))
    return VehicleSpec(
        name, name, [link], [], [], (("preset", "t200_16v"),), "free", xyz, rpy, {}, cur, kind="object"
    )


def _shifted(MA: Array, centroid: Array) -> Array:
    """The added mass about the centroid, moved to the link origin (``spatial.shift_to_origin``)."""
    return shift_to_origin(MA, np.asarray(centroid, dtype=float)) if np.any(centroid) else MA


def object_spec(spec: dict, water_density: float, base_dir: Path | None = None) -> VehicleSpec:
    """An object given at run time (the mapping a description's ``scene.objects`` entry has),
    checked as one: a ``ConfigError`` names the key and what was expected."""
    if not isinstance(spec, dict):
        raise ConfigError("<object>", "", f"an object is a mapping of its keys, got {type(spec).__name__}")
    cur = Cursor(spec, "<object>", "object")
    cur.mapping(("name", "shape"), OBJECT_KEYS)
    return read_object(cur, base_dir or Path.cwd(), water_density)


def with_object(system: System, spec: VehicleSpec) -> System:
    """``system`` with the object ``spec`` added as its last body (placed at its pose)."""
    names = {b.name for b in system.model.bodies} | {v.name for v in system.vehicles}
    if spec.name in names:
        raise ConfigError("<object>", "object.name", f"the name {spec.name!r} is taken")
    ls = spec.links[0]
    body = Body(
        name=ls.name, parent=-1, joint=Joint("free"), mass=ls.mass, com=ls.com, inertia=ls.inertia,
        hydro=ls.hydro, joint_name=f"{ls.name}_joint", visuals=ls.visuals, collisions=ls.collisions,
    )  # fmt: skip
    model = Model([*system.model.bodies, body], name=system.model.name)
    q = np.concatenate([system.initial_q, spec.position, euler2quat(*spec.rpy, axes="sxyz")])
    vehicle = Vehicle(spec.name, ls.name, (ls.name,), kind="object")
    return replace(system, model=model, vehicles=(*system.vehicles, vehicle), initial_q=q)


def without_object(system: System, name: str) -> System:
    """``system`` without its object ``name`` (KeyError naming the objects there are)."""
    objects = [v for v in system.vehicles if v.kind == "object"]
    if name not in [v.name for v in objects]:
        raise KeyError(f"no object named {name!r}: {[v.name for v in objects]}")
    i = system.model.body_index(name)
    m = system.model
    keep = [b for k, b in enumerate(m.bodies) if k != i]
    s = m.q_slice(i)
    q = np.concatenate([system.initial_q[: s.start], system.initial_q[s.stop :]])
    model = Model(keep, name=m.name)
    return replace(
        system, model=model, vehicles=tuple(v for v in system.vehicles if v.name != name), initial_q=q
    )
