"""Reading a description: the YAML (or URDF, through ``uvms_sim.model.urdf``) cursors of
``load`` turned into plain specs (``LinkSpec``, ``JointSpec``, ``VehicleSpec``, thrusters,
the environment, contacts), every value checked where it is written: the first problem raises
``ConfigError`` naming the file, the line, the key path and what was expected. A link's
``hydrodynamics`` block is read by ``uvms_sim.model.hydro_reader``; assembling the specs into
a ``System`` is ``uvms_sim.model.assembly``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..hydro.current import SinusoidalCurrent, TabulatedCurrent
from ..hydro.environment import STANDARD_GRAVITY, Environment, Seafloor
from ..hydro.params import Hydrodynamics
from ..log import logger
from ..spatial import Array
from .body import inertia_problem
from .hydro_reader import read_hydrodynamics
from .sensor_specs import DEFAULTS as SENSOR_DEFAULTS
from .sensor_specs import MAIN_NOISE, SensorSpec, check_pair, check_value
from .sensor_specs import MAX_OFFSET as MAX_SENSOR_OFFSET
from .sensor_specs import NOISE_KEYS as SENSOR_NOISE_KEYS
from .system import (
    THRUSTER_MODEL_KEYS,
    THRUSTER_MODEL_RANGES,
    THRUSTER_PRESETS,
    Anchor,
    ContactPoint,
    Seabed,
    Thruster,
)
from .visual import SHAPES as VISUAL_SHAPES
from .visual import Visual
from .yaml_source import Cursor, read_yaml

YAML_SUFFIXES = (".yaml", ".yml")
URDF_SUFFIXES = (".urdf", ".xacro")
FRAMES = {"frd": "x forward, y right, z down", "flu": "REP-103"}
BASES = {"free": "a floating vehicle", "fixed": "bolted to the world"}
METHODS = {"tree": "a fixed joint", "constraint": "Udwadia-Kalaba"}
JOINT_KINDS = ("fixed", "revolute", "continuous", "prismatic", "spherical", "floating")


FLU_TO_FRD_RPY = (np.pi, 0.0, 0.0)


@dataclass
class LinkSpec:
    name: str
    mass: float
    com: Array
    inertia: Array
    hydro: Hydrodynamics | None
    cur: Cursor
    visuals: tuple[Visual, ...] = ()
    collisions: tuple[Visual, ...] | None = None  # None: the defaults (model.visual.default_collisions)


@dataclass
class JointSpec:
    name: str
    type: str
    parent: str
    child: str
    xyz: Array
    rpy: Array
    axis: Array
    limits: dict
    cur: Cursor  # where it was written (for errors)
    mimic: tuple[str, float, float] | None = None  # (leading joint, multiplier, offset)


@dataclass
class VehicleSpec:
    name: str
    root: str
    links: list[LinkSpec]
    joints: list[JointSpec]
    thrusters: list[Thruster]
    thruster_model: tuple[tuple[str, object], ...]
    base: str
    position: Array
    rpy: Array
    initial_positions: dict[str, tuple[float, Cursor]]
    cur: Cursor
    frame: str = "frd"
    sensors: tuple[SensorSpec, ...] = ()
    kind: str = "vehicle"  # or "object" (model.objects)


def read_contacts(cur: Cursor, links: set[str]) -> tuple[tuple[Seabed, ...], tuple[Anchor, ...]]:
    seabeds, anchors = [], []
    for c in cur.seq("a list of contacts"):
        kind = c.mapping(("type",), c.keys())["type"].choice(("seabed", "anchor"))
        gains = ("stiffness", "damping")
        if kind == "seabed":
            c.mapping(("type", "depth", "points"), (*gains, "friction", "slip_velocity", "description"))
            points = [_contact_point(pc, links) for pc in c["points"].seq("a list of contact points")]
            kwargs = {k: c[k].number(lo=0.0) for k in (*gains, "friction") if k in c}
            if "slip_velocity" in c:
                kwargs["slip_velocity"] = c["slip_velocity"].number(positive=True)
            seabeds.append(Seabed(c["depth"].number(), tuple(points), **kwargs))
        else:
            c.mapping(("type", "name", "link", "position", "anchor"), (*gains, "description"))
            point = _contact_point(c, links, extra=("type", "anchor", *gains, "description"))
            kwargs = {k: c[k].number(lo=0.0) for k in gains if k in c}
            anchors.append(Anchor(point, c["anchor"].vector(3), **kwargs))
    return tuple(seabeds), tuple(anchors)


def _contact_point(cur: Cursor, links: set[str], extra: tuple[str, ...] = ()) -> ContactPoint:
    cur.mapping(("name", "link", "position"), extra)
    return ContactPoint(cur["name"].text(), _link_name(cur["link"], links), cur["position"].vector(3))


def _link_name(cur: Cursor, links: set[str] | dict[str, Any], prefix: str = "") -> str:
    """The link this entry names (after the vehicle's ``prefix``); an error listing the links if
    there is none of that name."""
    link = prefix + cur.text()
    if link not in links:
        raise cur.error(f"no link named {link!r}; links are {sorted(links)}")
    return link


def read_environment(cur: Cursor) -> Environment:
    env = _environment_without_surface(cur)
    surface: float | None = 0.0
    if "surface" in cur:
        surface = None if cur["surface"].value is None else cur["surface"].number()
    env.surface = surface
    if "waves" in cur:
        from .water_reader import read_waves

        env.waves = read_waves(cur["waves"], env)
    if "seafloor" in cur:
        sf = cur["seafloor"].mapping(("depth",), ("slope",))
        slope = sf["slope"].vector(2) if "slope" in sf else np.zeros(2)
        env.seafloor = Seafloor(sf["depth"].number(), (float(slope[0]), float(slope[1])))
    return env


def _environment_without_surface(cur: Cursor) -> Environment:
    cur.mapping(optional=("gravity", "water_density", "current", "surface", "seafloor", "waves"))
    g = cur["gravity"].number(lo=0.0) if "gravity" in cur else STANDARD_GRAVITY
    rho = cur["water_density"].number(positive=True) if "water_density" in cur else 1000.0
    if "current" not in cur:
        return Environment(gravity=g, density=rho)
    c = cur["current"]
    if isinstance(c.value, list):
        return Environment(gravity=g, density=rho, current=c.vector(3))
    c.mapping(("type",), ("velocity", "mean", "amplitude", "period", "phase", "time"))
    allowed = {
        "constant": (("velocity",), ()),
        "sinusoidal": (("mean", "amplitude", "period"), ("phase",)),
        "table": (("time", "velocity"), ()),
    }
    kind = c["type"].choice(sorted(allowed))
    req, opt = allowed[kind]
    c.mapping(("type", *req), opt)
    if kind == "constant":
        return Environment(gravity=g, density=rho, current=c["velocity"].vector(3))
    if kind == "sinusoidal":
        phase = c["phase"] if "phase" in c else None
        values = (
            c["mean"].vector(3),
            c["amplitude"].vector(3),
            c["period"].number(positive=True),
            0.0 if phase is None else (phase.vector(3) if isinstance(phase.value, list) else phase.number()),
        )
        try:
            sinusoid = SinusoidalCurrent(*values)
        except ValueError as exc:  # beyond what water does (hydro.current)
            raise c.error(str(exc)) from None
        return Environment(gravity=g, density=rho, current_profile=sinusoid)
    times = c["time"].vector(len(c["time"].value) if isinstance(c["time"].value, list) else -1)
    vel = c["velocity"].matrix(len(times), 3)
    try:
        profile = TabulatedCurrent(times, vel)
    except ValueError as exc:
        raise c.error(str(exc)) from None
    return Environment(gravity=g, density=rho, current_profile=profile)


VEHICLE_KEYS = (
    "include",
    "xacro_args",
    "frame",
    "prefix",
    "base",
    "links",
    "joints",
    "hydrodynamics",
    "thrusters",
    "thruster_model",
    "initial_pose",
    "initial_positions",
    "sensors",
    "description",
)


def read_vehicle(cur: Cursor, base_dir: Path, index: int) -> VehicleSpec:
    cur.mapping(("name",), VEHICLE_KEYS)
    desc = cur
    if "include" in cur:
        desc = _include(cur, base_dir)
    elif "xacro_args" in cur:
        raise cur["xacro_args"].error("xacro_args only apply with `include` of a .xacro file")
    if "links" not in desc:
        raise desc.error("missing required key 'links'")

    def items(key: str, what: str) -> list[Cursor]:
        """The included description's entries, then the ones written inline (which extend it)."""
        out = desc[key].seq(what) if key in desc else []
        if desc is not cur and key in cur:
            out += cur[key].seq(what)
        return out

    def pick(key: str) -> Cursor | None:
        return cur[key] if key in cur else desc.get(key)

    name_cur = cur["name"]
    if name_cur.value is None:  # a URDF loaded directly: the robot's name
        name = str(desc["name"].value) if "name" in desc else f"vehicle{index}"
    else:
        name = name_cur.text()
    prefix = cur["prefix"].value if "prefix" in cur else ""
    if not isinstance(prefix, str):
        raise cur["prefix"].error("expected a text")
    frame_cur, base_cur = pick("frame"), pick("base")
    frame = frame_cur.choice(FRAMES) if frame_cur is not None else "frd"
    base = base_cur.choice(BASES) if base_cur is not None else "free"

    overlay = pick("hydrodynamics")
    overlay_map: dict[str, Cursor] = {}
    if overlay is not None:
        overlay.mapping(optional=overlay.keys())
        overlay_map = {str(k): c for k, c in overlay.items()}
    links = []
    for lc in items("links", "a list of links"):
        ls = _link(lc, prefix)
        raw = ls.name[len(prefix) :]
        if raw in overlay_map:
            ls.hydro = read_hydrodynamics(overlay_map.pop(raw))
        links.append(ls)
    if overlay_map:
        k = next(iter(overlay_map))
        raise overlay_map[k].error(f"no link named {k!r} in vehicle {name!r}")
    joints = [_joint_spec(jc, prefix) for jc in items("joints", "a list of joints")]
    root = _tree_root(desc, links, joints)
    if frame == "flu":
        frd = LinkSpec(f"{root}_frd", 0.0, np.zeros(3), np.zeros((3, 3)), None, desc)
        joints.append(
            JointSpec(
                f"{root}_frd_to_{root}",
                "fixed",
                frd.name,
                root,
                np.zeros(3),
                np.array(FLU_TO_FRD_RPY),
                np.zeros(3),
                {},
                desc,
            )
        )
        links.insert(0, frd)
        root = frd.name
    link_names = {ls.name for ls in links}
    thr_cur = pick("thrusters")
    thrusters = (
        [_thruster(tc, prefix, link_names) for tc in thr_cur.seq("a list of thrusters")] if thr_cur else []
    )
    if thr_cur is not None:
        _unique(thrusters, thr_cur, "name", lambda t: t.name)
        _unique([t for t in thrusters if t.motor is not None], thr_cur, "motor", lambda t: t.motor)
    position, rpy = _pose(cur, "initial_pose", "position")
    init: dict[str, tuple[float, Cursor]] = {}
    init_cur = pick("initial_positions")
    if init_cur is not None:
        init_cur.mapping(optional=init_cur.keys())
        init = {prefix + str(k): (c.number(), c) for k, c in init_cur.items()}
    tm_cur = pick("thruster_model")
    thruster_model = _thruster_model(tm_cur) if tm_cur is not None else (("preset", "t200_16v"),)
    sensors = (
        [_sensor(sc, prefix, link_names, root) for sc in cur["sensors"].seq("a list of sensors")]
        if "sensors" in cur
        else []
    )
    if "sensors" in cur:
        _unique(sensors, cur["sensors"], "name", lambda s: s.name, "sensors")
    return VehicleSpec(
        name,
        root,
        links,
        joints,
        thrusters,
        thruster_model,
        base,
        position,
        rpy,
        init,
        cur,
        frame,
        tuple(sensors),
    )


def _sensor(cur: Cursor, prefix: str, links: set[str], root: str) -> SensorSpec:
    """``{type: imu|pressure|magnetometer|altimeter|dvl|camera|imaging_sonar, name, link,
    position, rpy, rate, noise, <parameters>}`` (``model.sensor_specs``)."""
    cur.mapping(("type",), optional=cur.keys())
    kind = cur["type"].choice(tuple(SENSOR_DEFAULTS))
    cur.mapping(
        ("type",), ("name", "link", "position", "rpy", "noise", "description", *SENSOR_DEFAULTS[kind])
    )
    link = _link_name(cur["link"], links, prefix) if "link" in cur else root
    values: dict[str, float] = {}
    where: dict[str, Cursor] = {}
    for k in SENSOR_DEFAULTS[kind]:
        if k in cur and k != "noise":
            values[k], where[k] = cur[k].number(), cur[k]
    noise = True
    if "noise" in cur:  # sensor_specs module doc: a switch, a standard deviation or a mapping of them
        noise = _sensor_noise(cur["noise"], kind, values, where)
    for k, v in values.items():
        why = check_value(kind, k, v)
        if why is not None:
            raise where[k].error(why)
    pair = check_pair({**SENSOR_DEFAULTS[kind], **values})
    if pair is not None:
        raise (where.get(pair[0]) or cur).error(pair[1])
    position, rpy = _pose(cur, None, "position")
    for key, vector in (("position", position), ("rpy", rpy)):
        if not np.all(np.abs(vector) <= MAX_SENSOR_OFFSET):
            raise cur[key].error(f"expected numbers within +-{MAX_SENSOR_OFFSET:g}, got {list(vector)}")
    try:
        return SensorSpec(
            kind,
            prefix + (cur["name"].text() if "name" in cur else kind),
            link,
            position,
            rpy,
            tuple(values.items()),
            noise,
        )
    except ValueError as exc:
        raise cur.error(str(exc)) from None


def _sensor_noise(cur: Cursor, kind: str, values: dict[str, float], where: dict[str, Cursor]) -> bool:
    """``noise``: true/false (the defaults / exact readings), a number (the type's one standard
    deviation) or a mapping of standard deviations, set into ``values``; the switch."""
    if isinstance(cur.value, bool):
        return cur.value
    keys = SENSOR_NOISE_KEYS[kind]
    if isinstance(cur.value, dict):
        cur.mapping(optional=keys)
        given = {k: cur[k] for k in keys if k in cur}
    elif kind in MAIN_NOISE and not isinstance(cur.value, (str, list)) and cur.value is not None:
        given = {MAIN_NOISE[kind]: cur}
    else:
        number = f"a standard deviation ({MAIN_NOISE[kind]}), " if kind in MAIN_NOISE else ""
        raise cur.error(f"expected true, false, {number}or a mapping of {list(keys)}, got {cur.value!r}")
    for k, c in given.items():
        if k in where and where[k] is not c:
            raise c.error(f"{k} is given twice (beside noise and in it)")
        values[k], where[k] = c.number(), c
    return True


def _thruster_model(cur: Cursor) -> tuple[tuple[str, object], ...]:
    """``t200_16v`` or ``{preset: t200_12v, time_constant: 0.1, ...}``."""
    where = cur
    if isinstance(cur.value, str):
        cur = Cursor({"preset": cur.value}, cur.file, cur.path, cur.line)
    cur.mapping(optional=("preset", *THRUSTER_MODEL_KEYS))
    preset = cur["preset"].text() if "preset" in cur else "t200_16v"
    if preset not in THRUSTER_PRESETS:
        where = where if where is not cur else cur["preset"]
        raise where.error(f"unknown thruster preset {preset!r}; expected one of {list(THRUSTER_PRESETS)}")
    out: list[tuple[str, object]] = [("preset", preset)]
    for key in THRUSTER_MODEL_KEYS:
        if key in cur:
            lo, hi, closed = THRUSTER_MODEL_RANGES[key]
            top = key == "voltage"  # the T200 tables' 10-20 V include 20 V
            v = cur[key].number()
            if not ((v >= lo if closed else v > lo) and (hi is None or v < hi or (top and v == hi))):
                end = "inf)" if hi is None else f"{hi:g}{']' if top else ')'}"
                span = f"{'[' if closed else '('}{lo:g}, {end}"
                raise cur[key].error(f"expected a number in {span}, got {v:g}")
            out.append((key, v))
    if "voltage" in cur and preset != "t200":
        raise cur["voltage"].error(
            f"voltage applies to the preset 't200' (Blue Robotics' tables), not {preset!r}"
        )
    return tuple(out)


def _unique(items, cur: Cursor, what: str, key, owners: str = "thrusters") -> None:
    seen = set()
    for k, item in enumerate(items):
        if key(item) in seen:
            raise cur.seq()[k].error(f"{what} {key(item)!r} is used by two {owners}")
        seen.add(key(item))


def _include(cur: Cursor, base_dir: Path) -> Cursor:
    inc = cur["include"]
    path = Path(inc.text())
    if not path.is_absolute():
        path = base_dir / path
    if not path.is_file():
        raise inc.error(f"no such file: {path}")
    suffix = path.suffix.lower()
    if suffix in URDF_SUFFIXES:
        from .urdf import read_urdf

        args = {}
        if "xacro_args" in cur:
            xa = cur["xacro_args"].mapping(optional=cur["xacro_args"].keys())
            args = {str(k): str(c.value) for k, c in xa.items()}
        return read_urdf(path, args)
    if suffix in YAML_SUFFIXES:
        # only its vehicle is taken: its environment and scene are the including description's
        top = Cursor(read_yaml(path), path).mapping(
            ("vehicles",), ("name", "description", "sources", "environment", "scene")
        )
        vs = top["vehicles"].seq("a list of vehicles")
        if len(vs) != 1:
            raise inc.error(f"an included YAML file must describe exactly one vehicle, {path} has {len(vs)}")
        if "include" in vs[0]:
            raise vs[0]["include"].error("included files cannot include further files")
        return vs[0].mapping(("name",), VEHICLE_KEYS)
    raise inc.error(f"cannot include {suffix!r} files: expected {YAML_SUFFIXES + URDF_SUFFIXES}")


def _tree_root(desc: Cursor, links: list[LinkSpec], joints: list[JointSpec]) -> str:
    names = {}
    for ls in links:
        if ls.name in names:
            raise ls.cur.error(f"link name {ls.name!r} is used twice")
        names[ls.name] = ls
    parent_of: dict[str, JointSpec] = {}
    jnames: set[str] = set()
    for j in joints:
        if j.name in jnames:
            raise j.cur.error(f"joint name {j.name!r} is used twice")
        jnames.add(j.name)
        for role, link in (("parent", j.parent), ("child", j.child)):
            if link not in names:
                raise j.cur[role].error(f"no link named {link!r}; links are {sorted(names)}")
        if j.child in parent_of:
            raise j.cur["child"].error(
                f"link {j.child!r} is already the child of joint {parent_of[j.child].name!r}"
            )
        parent_of[j.child] = j
    roots = [ls.name for ls in links if ls.name not in parent_of]
    if len(roots) != 1:
        what = (
            "no link without a parent joint (the joints form a loop)"
            if not roots
            else f"several roots {roots}"
        )
        raise desc["links"].error(f"a vehicle's links must form one tree: {what}")
    return roots[0]


def _link(cur: Cursor, prefix: str) -> LinkSpec:
    cur.mapping(
        ("name",),
        ("mass", "center_of_mass", "inertia", "hydrodynamics", "visual", "collision", "description"),
    )
    name = prefix + cur["name"].text()
    mass = cur["mass"].number(lo=0.0) if "mass" in cur else 0.0
    com = cur["center_of_mass"].vector(3) if "center_of_mass" in cur else np.zeros(3)
    inertia = _inertia(cur["inertia"]) if "inertia" in cur else np.zeros((3, 3))
    if mass > 0.0 and "inertia" not in cur:
        raise cur.error("a link with mass needs an inertia (about its centre of mass)")
    hydro = read_hydrodynamics(cur["hydrodynamics"]) if "hydrodynamics" in cur else None
    visuals = tuple(_visual(v) for v in cur["visual"].seq("a list of shapes")) if "visual" in cur else ()
    collisions = None
    if "collision" in cur:  # [] or null: a link that touches nothing
        given = cur["collision"]
        collisions = (
            ()
            if given.value is None
            else tuple(_visual(v, "collision") for v in given.seq("a list of shapes"))
        )
    return LinkSpec(name, mass, com, inertia, hydro, cur, visuals, collisions)


def _visual(cur: Cursor, what: str = "visual") -> Visual:
    """``{box: [x, y, z]}``, ``{cylinder: {radius, length}}``, ``{sphere: r}`` or ``{mesh: FILE,
    scale: [sx, sy, sz]}``, with optional ``xyz``, ``rpy`` (link axes) and, for a visual,
    ``color`` (r g b a). A collision shape has the same form, without colour."""
    colour = ("color",) if what == "visual" else ()
    cur.mapping(optional=(*VISUAL_SHAPES, "scale", "xyz", "rpy", *colour))
    shapes = [s for s in VISUAL_SHAPES if s in cur]
    if len(shapes) != 1:
        raise cur.error(f"a {what} is exactly one of {list(VISUAL_SHAPES)}, got {shapes or 'none'}")
    shape = shapes[0]
    g = cur[shape]
    if shape == "box":
        size: tuple[float, ...] = tuple(g.vector(3))
    elif shape == "cylinder":
        g.mapping(("radius", "length"))
        size = (g["radius"].number(positive=True), g["length"].number(positive=True))
    elif shape == "sphere":
        size = (g.number(positive=True),)
    else:
        size = tuple(cur["scale"].vector(3)) if "scale" in cur else (1.0, 1.0, 1.0)
    extra = {"mesh": g.text()} if shape == "mesh" else {}
    if "color" in cur:
        extra["color"] = tuple(cur["color"].vector(4))  # type: ignore[assignment]
    try:
        return Visual(
            shape,
            size,
            *_pose(cur, None),
            **extra,  # type: ignore[arg-type]
        )
    except ValueError as exc:
        raise cur.error(str(exc)) from None


def _inertia(cur: Cursor) -> Array:
    """``{ixx, iyy, izz, ixy, ixz, iyz}`` (URDF names), a diagonal ``[a, b, c]`` or a 3x3
    matrix, about the centre of mass in link axes; checked physically valid."""
    if isinstance(cur.value, dict):
        cur.mapping(("ixx", "iyy", "izz"), ("ixy", "ixz", "iyz"))
        v = {k: cur[k].number() if k in cur else 0.0 for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
        inertia = np.array(
            [[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]]
        )
    elif cur.is_matrix():
        inertia = cur.matrix(3, 3)
    else:
        inertia = np.diag(cur.vector(3))
    problem = inertia_problem(inertia)
    if problem:
        raise cur.error(problem)
    return inertia


def _pose(cur: Cursor, key: str | None = "origin", position: str = "xyz") -> tuple[Array, Array]:
    """``{xyz, rpy}`` under ``key`` (or this entry's own keys when ``key`` is None): a position in
    metres and roll, pitch, yaw in radians, zero where left out."""
    if key is not None:
        if key not in cur:
            return np.zeros(3), np.zeros(3)
        cur = cur[key].mapping(optional=(position, "rpy"))
    xyz = cur[position].vector(3) if position in cur else np.zeros(3)
    return xyz, (_angles(cur["rpy"]) if "rpy" in cur else np.zeros(3))


def _angles(cur: Cursor) -> Array:
    """Roll, pitch, yaw in radians; a value beyond 2 pi is warned about (degrees?)."""
    rpy = cur.vector(3)
    if np.any(np.abs(rpy) > 2 * np.pi):
        logger.warning(
            f"{cur.where()}: rpy {rpy.tolist()} has angles beyond 2 pi: radians are expected (degrees?)"
        )
    return rpy


def _joint_spec(cur: Cursor, prefix: str) -> JointSpec:
    cur.mapping(("name", "type", "parent", "child"), ("origin", "axis", "limits", "mimic", "description"))
    kind = cur["type"].choice(JOINT_KINDS)
    xyz, rpy = _pose(cur)
    axis = np.array([1.0, 0.0, 0.0])
    if "axis" in cur:
        axis = cur["axis"].vector(3)
        if not np.linalg.norm(axis) > 0.0:
            raise cur["axis"].error("the axis must be non-zero")
    elif kind in ("revolute", "continuous", "prismatic"):
        raise cur.error(f"a {kind} joint needs an axis")
    limits: dict = {}
    if "limits" in cur:
        lc = cur["limits"].mapping(optional=("lower", "upper", "effort", "velocity"))
        limits = {k: lc[k].number() for k in ("lower", "upper") if k in lc}
        limits.update({k: lc[k].number(lo=0.0) for k in ("effort", "velocity") if k in lc})
        if limits.get("lower", -np.inf) > limits.get("upper", np.inf):
            raise lc.error(f"lower limit {limits['lower']} is above the upper limit {limits['upper']}")
    mimic = None
    if "mimic" in cur:
        if kind not in ("revolute", "continuous", "prismatic"):
            raise cur["mimic"].error(f"a {kind} joint cannot mimic another (1-DOF joints only)")
        mc = cur["mimic"].mapping(("joint",), ("multiplier", "offset"))
        multiplier = mc["multiplier"].number() if "multiplier" in mc else 1.0
        if multiplier == 0.0:
            raise mc["multiplier"].error("the multiplier must be non-zero")
        mimic = (prefix + mc["joint"].text(), multiplier, mc["offset"].number() if "offset" in mc else 0.0)
    return JointSpec(
        prefix + cur["name"].text(),
        kind,
        prefix + cur["parent"].text(),
        prefix + cur["child"].text(),
        xyz,
        rpy,
        axis,
        limits,
        cur,
        mimic,
    )


def _thruster(cur: Cursor, prefix: str, links: set[str]) -> Thruster:
    cur.mapping(("name", "link", "position", "direction"), ("motor", "reversed", "description"))
    link = _link_name(cur["link"], links, prefix)
    direction = cur["direction"].vector(3)
    if not np.linalg.norm(direction) > 0.0:
        raise cur["direction"].error("the thrust direction must be non-zero")
    return Thruster(
        prefix + cur["name"].text(),
        link,
        cur["position"].vector(3),
        direction,
        cur["motor"].integer(lo=1) if "motor" in cur else None,
        cur["reversed"].boolean() if "reversed" in cur else False,
    )


def read_connection(cur: Cursor, links: dict[str, LinkSpec], owner: dict) -> tuple[JointSpec, str]:
    """A rigid connection and how it is kept: ``tree`` (a fixed joint: the child vehicle joins
    the parent's tree, reduced coordinates) or ``constraint`` (Udwadia-Kalaba)."""
    cur.mapping(("type", "parent", "child"), ("name", "origin", "method", "description"))
    method = cur["method"].choice(METHODS) if "method" in cur else "tree"
    cur["type"].choice({"rigid": ""})
    parent, child = _link_name(cur["parent"], links), _link_name(cur["child"], links)
    if owner[child].root != child:
        raise cur["child"].error(
            f"the child of a connection must be a vehicle's root link ({owner[child].root!r})"
        )
    if owner[child] is owner[parent]:
        raise cur.error("a rigid connection joins two different vehicles")
    xyz, rpy = _pose(cur)
    name = cur["name"].text() if "name" in cur else f"{parent}_to_{child}"
    return JointSpec(name, "fixed", parent, child, xyz, rpy, np.zeros(3), {}, cur), method
