"""``System``: what a description file describes - a model, its vehicles and thrusters, the
environment and the initial state."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..hydro.environment import Environment
from ..scene import PlaneSeabed, Scene
from ..spatial import Array, cross
from .kinematics import placements
from .model import Model


@dataclass(frozen=True)
class Thruster:
    """A thruster's pose on a body: thrust ``T`` along ``direction`` at ``position`` (body axes)
    gives the body the wrench ``[T d; p × T d]`` (Nielsen et al. 2018 eq. 8).

    ``motor`` is the autopilot output it is wired to (ArduSub motor n = SERVOn, 1-based);
    ``reversed`` mirrors ArduSub's per-motor direction parameter (MOT_n_DIRECTION = -1)."""

    name: str
    body: str
    position: Array
    direction: Array
    motor: int | None = None
    reversed: bool = False

    def __post_init__(self) -> None:
        p = np.asarray(self.position, dtype=float).reshape(3)
        d = np.asarray(self.direction, dtype=float).reshape(3)
        norm = float(np.linalg.norm(d))
        if not norm > 0.0:
            raise ValueError(f"thruster {self.name!r}: direction must be non-zero")
        object.__setattr__(self, "position", p)
        object.__setattr__(self, "direction", d / norm)

    @property
    def unit_wrench(self) -> Array:
        """Wrench of 1 N of thrust about the body origin, body axes."""
        return np.concatenate([self.direction, cross(self.position, self.direction)])


# Thruster types a description may name, and the parameters it may override; the models
# themselves are ``uvms_sim.actuators.thruster`` (a test keeps the two in step).
THRUSTER_PRESETS = ("t200", "t200_16v", "t200_12v")
THRUSTER_MODEL_KEYS = (
    "thrust_forward",
    "thrust_reverse",
    "rpm_max",
    "deadband",
    "exponent",
    "diameter",
    "zero_thrust_advance_ratio",
    "voltage",
    "time_constant",
)
# the range of each (lowest, highest, whether the lowest itself is allowed): what
# ``ThrusterModel`` accepts, so that a description that loads also runs
THRUSTER_MODEL_RANGES = {
    "thrust_forward": (0.0, None, False),
    "thrust_reverse": (0.0, None, False),
    "rpm_max": (0.0, None, False),
    "deadband": (0.0, 400.0, True),
    "exponent": (0.0, None, False),
    "diameter": (0.0, None, False),
    "zero_thrust_advance_ratio": (0.0, None, False),
    "voltage": (10.0, 20.0, True),
    "time_constant": (0.0, None, True),
}


@dataclass(frozen=True)
class Vehicle:
    """One vehicle of a system: its root body (free joint, or fixed into another vehicle by a
    rigid connection), its bodies, its thrusters and their type (``thruster_model``: a preset
    name and parameter overrides)."""

    name: str
    root: str
    bodies: tuple[str, ...]
    thrusters: tuple[Thruster, ...] = ()
    thruster_model: tuple[tuple[str, object], ...] = (("preset", "t200_16v"),)
    frame: str = "frd"  # axes of the description's root link: frd, or flu (the root is then <name>_frd)
    sensors: tuple = ()  # model.sensor_specs.SensorSpec: what the vehicle carries besides ground truth
    kind: str = "vehicle"  # or "object": a free object of the scene (model.objects)


@dataclass(frozen=True)
class ContactPoint:
    """A point of a link that can touch the seabed or hang on an anchor (link axes)."""

    name: str
    link: str
    position: Array


@dataclass(frozen=True)
class Seabed:
    """A horizontal seabed at ``depth`` (world NED z) and the points that can touch it;
    spring-damper normal force and regularised Coulomb friction (``uvms_sim.dynamics.contact``)."""

    depth: float
    points: tuple[ContactPoint, ...]
    stiffness: float = 1.0e4  # N/m
    damping: float = 200.0  # N s/m
    friction: float = 0.5
    slip_velocity: float = 0.01  # m/s

    def __post_init__(self) -> None:
        if not (self.stiffness >= 0 and self.damping >= 0 and self.friction >= 0 and self.slip_velocity > 0):
            raise ValueError("seabed: stiffness, damping and friction must be >= 0, slip_velocity > 0")


@dataclass(frozen=True)
class Anchor:
    """A spring-damper from a link point to a fixed world point (NED)."""

    point: ContactPoint
    anchor: Array
    stiffness: float = 1.0e3
    damping: float = 50.0


@dataclass(frozen=True)
class Connection:
    """A rigid connection kept by a constraint (Udwadia-Kalaba): link ``child`` at pose
    ``(E, r)`` (child_R_parent, child origin in parent axes) relative to link ``parent``."""

    name: str
    parent: str
    child: str
    E: Array
    r: Array


@dataclass
class System:
    """A loaded description: ``model`` plus everything a simulation of it needs."""

    name: str
    model: Model
    environment: Environment = field(default_factory=Environment)
    vehicles: tuple[Vehicle, ...] = ()
    initial_q: Array = field(default_factory=lambda: np.zeros(0))  # empty: the model's neutral q
    source: str = ""
    description: str = ""
    constraints: tuple[Connection, ...] = ()
    seabeds: tuple[Seabed, ...] = ()
    anchors: tuple[Anchor, ...] = ()
    tethers: tuple = ()  # tether.properties.TetherSpec: a vehicle's tether to a surface point or reel
    scene: Scene | None = None  # the world's geometry; None: from environment.seafloor or a contact seabed

    def __post_init__(self) -> None:
        if self.initial_q is None or np.size(self.initial_q) == 0:
            self.initial_q = self.model.neutral()
        if self.scene is None:
            self.scene = default_scene(self.environment, self.seabeds)

    @property
    def thrusters(self) -> tuple[Thruster, ...]:
        return tuple(t for v in self.vehicles for t in v.thrusters)

    def vehicle(self, name: str) -> Vehicle:
        for v in self.vehicles:
            if v.name == name:
                return v
        raise KeyError(f"no vehicle named {name!r} in {self.name!r}: {[v.name for v in self.vehicles]}")

    def allocation_matrix(self, vehicle: str | int = 0) -> Array:
        """6 x n thrust configuration matrix of a vehicle's thrusters, in its root body frame
        about the root origin (Nielsen et al. 2018 eq. 8; León-González et al. 2024 eq. 38):
        column j is the wrench of 1 N from thruster j, so ``τ = B T`` for the thrust vector ``T``.

        Thrusters on other bodies of the vehicle are placed with the initial configuration.
        """
        veh = self.vehicles[vehicle] if isinstance(vehicle, int) else self.vehicle(vehicle)
        data = self.model.create_data()
        placements(self.model, data, self.initial_q)
        root = self.model.body_index(veh.root)
        R0, p0 = data.R_world[root], data.p_world[root]
        B = np.zeros((6, len(veh.thrusters)))
        for j, t in enumerate(veh.thrusters):
            b = self.model.body_index(t.body)
            R = R0.T @ data.R_world[b]
            p = R0.T @ (data.p_world[b] - p0) + R @ t.position
            d = R @ t.direction
            B[:3, j] = d
            B[3:, j] = cross(p, d)
        return B


def default_scene(env: Environment, seabeds: tuple[Seabed, ...] = ()) -> Scene:
    """The scene of a system declared without one: the plane of ``environment.seafloor``, else
    the first contact seabed's (one seabed for contacts and sensors), else none."""
    if env.seafloor is not None:
        return Scene(PlaneSeabed(float(env.seafloor.depth), env.seafloor.slope))
    return Scene(PlaneSeabed(float(seabeds[0].depth))) if seabeds else Scene()
