"""``Scene``: the seabed and the fixed structures of the world, declared once."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .geometry import GeometryError, Shape
from .seabed import PlaneSeabed, Seabed

Array = np.ndarray


@dataclass(frozen=True)
class Structure:
    """A fixed structure: a named shape placed in the world (NED)."""

    name: str
    shape: Shape


@dataclass(frozen=True)
class ContactLaw:
    """How bodies touch the scene and each other (``dynamics.contact``, ``dynamics.touch``):
    the normal ``stiffness`` (N/m) of a touching pair, shared among its points, the
    ``restitution`` of its impacts (0: none, 1: elastic), Coulomb's ``friction`` coefficient,
    the ``tangential_stiffness`` (N/m) of the sticking spring, the ``margin`` (m) within which
    a pair is watched and the ``period`` (s) of the detection."""

    stiffness: float = 2.0e4
    restitution: float = 0.2
    friction: float = 0.6
    tangential_stiffness: float = 2.0e4
    margin: float = 0.02
    period: float = 0.005

    def __post_init__(self) -> None:
        checks = {
            "stiffness": (self.stiffness, 0.0, 1e9, "N/m"),
            "restitution": (self.restitution, 0.0, 1.0, ""),
            "friction": (self.friction, 0.0, 10.0, ""),
            "tangential_stiffness": (self.tangential_stiffness, 0.0, 1e9, "N/m"),
            "margin": (self.margin, 1e-4, 1.0, "m"),
            "period": (self.period, 1e-4, 0.1, "s"),
        }
        for name, (value, lo, hi, unit) in checks.items():
            if not (np.isfinite(value) and lo <= value <= hi) or (name == "stiffness" and value == 0.0):
                raise GeometryError(
                    f"contact {name} must be in [{lo:g}, {hi:g}] {unit}, got {value}".rstrip()
                )


@dataclass(frozen=True)
class Scene:
    """The world's fixed geometry (NED): ``seabed`` (None: no seabed in range) and
    ``structures``, and how bodies touch it (``contact``; free objects are bodies of the
    system). ``triangles()`` gives every surface that rays hit, but a plane seabed,
    which ``raycast.SceneRays`` treats in closed form."""

    seabed: Seabed | None = None
    structures: tuple[Structure, ...] = ()
    contact: ContactLaw | None = None  # None: nothing touches (but through the older seabed points)
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        names = [s.name for s in self.structures]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise GeometryError(f"structure names must be unique, {twice} used twice")

    @property
    def plane(self) -> PlaneSeabed | None:
        return self.seabed if isinstance(self.seabed, PlaneSeabed) else None

    def surfaces(self) -> list[tuple[str, Array, Array]]:
        """(name, vertices NED, triangles) of the seabed ("seabed") and of each structure."""
        if "surfaces" not in self._cache:
            out = [] if self.seabed is None else [("seabed", *self.seabed.triangles())]
            out += [(s.name, *s.shape.triangles()) for s in self.structures]
            self._cache["surfaces"] = out
        return self._cache["surfaces"]

    def triangles(self) -> tuple[Array, Array]:
        """Every triangle that rays are cast on (a plane seabed left out), one mesh."""
        if "mesh" not in self._cache:
            parts = [(v, f) for name, v, f in self.surfaces() if not (name == "seabed" and self.plane)]
            vertices, faces, n = [], [], 0
            for v, f in parts:
                vertices.append(v)
                faces.append(f + n)
                n += len(v)
            self._cache["mesh"] = (
                np.concatenate(vertices) if vertices else np.zeros((0, 3)),
                np.concatenate(faces) if faces else np.zeros((0, 3), dtype=np.int64),
            )
        return self._cache["mesh"]

    def water_depth(self) -> float | None:
        return None if self.seabed is None else self.seabed.water_depth()
