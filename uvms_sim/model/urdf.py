"""URDF (and xacro) robot descriptions, read into the same structure a YAML vehicle has.

What is read:

- ``<link>``: ``<inertial>`` (mass, inertia about the centre of mass; an ``<origin rpy>``
  rotates the inertia into link axes); ``<visual>`` (box, cylinder, sphere, mesh; origin;
  colour) for the views. Collision elements are not used.
- ``<joint>``: revolute, continuous, prismatic, fixed, floating; origin, axis, limits.
  ``<mimic joint multiplier offset>`` holds a 1-DOF joint at the multiplier times another's
  position plus the offset (a joint coupling, ``dynamics.constraints.JointCoupling``).
- Hydrodynamics, in the blocks Gazebo users already write:

  * the Gazebo Hydrodynamics system plugin (``gz::sim::systems::Hydrodynamics``, also its
    ``ignition::gazebo`` name): ``<link_name>`` and SNAME coefficients in Fossen's sign
    convention, ``<xDotU>`` (added mass; any pair such as ``<xDotQ>``), ``<xU>`` (linear
    damping; any pair), ``<xUabsU>`` (quadratic damping; diagonal only);
  * ``<gazebo reference="LINK"><uvms_sim>`` with ``<volume>`` (m^3),
    ``<center_of_buoyancy>x y z</center_of_buoyancy>`` and
    ``<drag model="cylinder" length=".." radius=".." axis=".." start=".." drag_coefficient=".."/>``,
    which Gazebo ignores.

URDF frames follow REP-103 (x forward, y left, z up), so a URDF vehicle is read with
``frame: flu``: the loader puts an FRD body ``<root>_frd`` under it (see ``docs/config.md``).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from transforms3d.euler import euler2mat

from ..log import logger
from .yaml_source import ConfigError, Cursor

_GZ_ADDED = re.compile(r"^([xyzkmn])Dot([UVWPQR])$")
_GZ_LINEAR = re.compile(r"^([xyzkmn])([UVWPQR])$")
_GZ_QUADRATIC = re.compile(r"^([xyzkmn])([UVWPQR])abs([UVWPQR])$")
_GZ_IGNORED = (
    "link_name",
    "water_density",
    "default_current",
    "namespace",
    "disable_coriolis",
    "disable_added_mass",
)


def read_urdf(path: str | Path, xacro_args: dict[str, str] | None = None) -> Cursor:
    """Parse a URDF or xacro file into a vehicle description (a Cursor over plain data)."""
    path = Path(path)
    text = _expand(path, xacro_args or {})
    try:
        robot = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ConfigError(path, "", f"not valid XML: {exc}") from None
    if robot.tag != "robot":
        raise ConfigError(path, "", f"expected a <robot> element at the top, got <{robot.tag}>")
    reader = _Reader(path)
    reader.materials = {
        m.get("name"): c for m in robot.findall("material") if (c := m.find("color")) is not None
    }
    links = [reader.link(e) for e in robot.findall("link")]
    joints = [reader.joint(e) for e in robot.findall("joint")]
    by_name = {ln["name"]: ln for ln in links}
    for gz in robot.findall("gazebo"):
        reader.gazebo(gz, by_name)
    vehicle = {"name": robot.get("name") or path.stem, "frame": "flu", "links": links, "joints": joints}
    return Cursor(vehicle, path, "")


def _expand(path: Path, args: dict[str, str]) -> str | bytes:
    """The URDF's XML: a .urdf file's bytes (the XML parser decodes them as its declaration
    says, and names a byte that is not of that encoding), a .xacro file expanded."""
    if path.suffix.lower() != ".xacro":
        try:
            return path.read_bytes()
        except OSError as exc:
            raise ConfigError(path, "", f"cannot read the file: {exc.strerror}") from None
    import xacro

    try:
        doc = xacro.process_file(str(path), mappings=dict(args))
    except Exception as exc:  # xacro raises XacroException and plain errors alike
        raise ConfigError(path, "", f"xacro failed: {exc}") from None
    return doc.toxml()


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.materials: dict[str | None, ET.Element] = {}  # top-level <material name><color>

    def error(self, where: str, message: str) -> ConfigError:
        return ConfigError(self.path, where, message)

    def floats(self, where: str, text: str | None, n: int, default: list[float] | None = None) -> list[float]:
        if text is None:
            if default is None:
                raise self.error(where, f"missing; expected {n} numbers")
            return list(default)
        try:
            vals = [float(x) for x in text.split()]
        except ValueError:
            raise self.error(where, f"expected {n} numbers, got {text!r}") from None
        if len(vals) != n or not all(np.isfinite(vals)):
            raise self.error(where, f"expected {n} finite numbers, got {text!r}")
        return vals

    def origin(self, el: ET.Element | None, where: str) -> tuple[list[float], list[float]]:
        if el is None:
            return [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
        return (
            self.floats(f"{where}.origin.xyz", el.get("xyz"), 3, [0.0, 0.0, 0.0]),
            self.floats(f"{where}.origin.rpy", el.get("rpy"), 3, [0.0, 0.0, 0.0]),
        )

    def link(self, el: ET.Element) -> dict:
        name = el.get("name")
        if not name:
            raise self.error("link", "a <link> without a name")
        where = f"link[{name}]"
        out: dict = {"name": name}
        visuals = [
            v for k, ve in enumerate(el.findall("visual")) if (v := self.visual(ve, f"{where}.visual[{k}]"))
        ]
        if visuals:
            out["visual"] = visuals
        if el.findall("collision"):  # URDF <collision>: the link's collision shapes (colours dropped)
            out["collision"] = [
                {k: x for k, x in c.items() if k != "color"}
                for k, ce in enumerate(el.findall("collision"))
                if (c := self.visual(ce, f"{where}.collision[{k}]"))
            ]
        inertial = el.find("inertial")
        if inertial is None:
            return out
        xyz, rpy = self.origin(inertial.find("origin"), f"{where}.inertial")
        mass_el = inertial.find("mass")
        out["mass"] = self.floats(
            f"{where}.inertial.mass", None if mass_el is None else mass_el.get("value"), 1
        )[0]
        out["center_of_mass"] = xyz
        ie = inertial.find("inertia")
        if ie is None:
            raise self.error(f"{where}.inertial", "missing <inertia>")
        v = {
            k: self.floats(f"{where}.inertial.inertia.{k}", ie.get(k), 1, [0.0])[0]
            for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        }
        inertia = np.array(
            [[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]]
        )
        R = euler2mat(*rpy, axes="sxyz")
        out["inertia"] = (R @ inertia @ R.T).tolist()
        return out

    def visual(self, el: ET.Element, where: str) -> dict | None:
        """A ``<visual>`` as a YAML ``visual`` entry (``model.visual``); None without geometry.
        The colour is the ``<material><color rgba>`` given inline (a named material defined
        elsewhere in the file is looked up by name)."""
        geometry = el.find("geometry")
        shape = None if geometry is None else next(iter(geometry), None)
        if shape is None:
            return None
        xyz, rpy = self.origin(el.find("origin"), where)
        out: dict = {"xyz": xyz, "rpy": rpy}
        tag, g = shape.tag, f"{where}.geometry.{shape.tag}"
        if tag == "box":
            out["box"] = self.floats(f"{g}.size", shape.get("size"), 3)
        elif tag == "cylinder":
            out["cylinder"] = {k: self.floats(f"{g}.{k}", shape.get(k), 1)[0] for k in ("radius", "length")}
        elif tag == "sphere":
            out["sphere"] = self.floats(f"{g}.radius", shape.get("radius"), 1)[0]
        elif tag == "mesh":
            if not shape.get("filename"):
                raise self.error(g, "a <mesh> without a filename")
            out["mesh"] = shape.get("filename")
            out["scale"] = self.floats(f"{g}.scale", shape.get("scale"), 3, [1.0, 1.0, 1.0])
        else:
            raise self.error(g, f"unknown geometry <{tag}> (box, cylinder, sphere, mesh)")
        material = el.find("material")
        color = None if material is None else material.find("color")
        if color is None and material is not None and material.get("name") in self.materials:
            color = self.materials[material.get("name")]
        if color is not None:
            out["color"] = self.floats(f"{where}.material.color", color.get("rgba"), 4)
        return out

    def joint(self, el: ET.Element) -> dict:
        name = el.get("name")
        if not name:
            raise self.error("joint", "a <joint> without a name")
        where = f"joint[{name}]"
        kind = el.get("type")
        if kind == "planar":
            raise self.error(f"{where}.type", "planar joints are not supported")
        out: dict = {"name": name, "type": kind}
        for role in ("parent", "child"):
            e = el.find(role)
            if e is None or not e.get("link"):
                raise self.error(f"{where}.{role}", f"missing <{role} link=...>")
            out[role] = e.get("link")
        xyz, rpy = self.origin(el.find("origin"), where)
        out["origin"] = {"xyz": xyz, "rpy": rpy}
        if kind in ("revolute", "continuous", "prismatic"):
            axis = el.find("axis")
            out["axis"] = self.floats(
                f"{where}.axis", None if axis is None else axis.get("xyz"), 3, [1.0, 0.0, 0.0]
            )
        lim = el.find("limit")
        if lim is not None and kind != "fixed":
            limits = {}
            keys = (
                ("effort", "velocity") if kind == "continuous" else ("lower", "upper", "effort", "velocity")
            )
            for k in keys:
                if lim.get(k) is not None:
                    limits[k] = self.floats(f"{where}.limit.{k}", lim.get(k), 1)[0]
            if limits:
                out["limits"] = limits
        mimic = el.find("mimic")
        if mimic is not None and kind in ("revolute", "continuous", "prismatic"):
            if not mimic.get("joint"):
                raise self.error(f"{where}.mimic", "missing <mimic joint=...>")
            out["mimic"] = {"joint": mimic.get("joint")} | {
                k: self.floats(f"{where}.mimic.{k}", mimic.get(k), 1)[0]
                for k in ("multiplier", "offset")
                if mimic.get(k) is not None
            }
        return out

    def gazebo(self, gz: ET.Element, links: dict[str, dict]) -> None:
        for plugin in gz.findall("plugin"):
            name = plugin.get("name") or plugin.get("filename") or ""
            if "Hydrodynamics" in name:
                self.hydro_plugin(plugin, links)
            elif "Thruster" in name or "Buoyancy" in name:
                logger.warning(
                    f"{self.path}: Gazebo plugin {name!r} ignored: give thrusters and volumes in the "
                    "description or a YAML overlay (docs/config.md)"
                )
        ref = gz.get("reference")
        block = gz.find("uvms_sim")
        if block is None:
            return
        where = f"gazebo[{ref}].uvms_sim"
        if ref not in links:
            raise self.error(where, f"reference {ref!r} is not a link of this robot")
        hydro = links[ref].setdefault("hydrodynamics", {})
        for child in block:
            if child.tag == "volume":
                hydro["volume"] = self.floats(f"{where}.volume", child.text, 1)[0]
            elif child.tag == "center_of_buoyancy":
                hydro["center_of_buoyancy"] = self.floats(f"{where}.center_of_buoyancy", child.text, 3)
            elif child.tag == "drag":
                drag: dict = {"model": child.get("model", "cylinder")}
                for k, v in child.attrib.items():
                    if k in ("axis", "start"):
                        drag[k] = self.floats(f"{where}.drag.{k}", v, 3)
                    elif k == "points":
                        drag[k] = int(self.floats(f"{where}.drag.{k}", v, 1)[0])
                    elif k != "model":
                        drag[k] = self.floats(f"{where}.drag.{k}", v, 1)[0]
                hydro["drag"] = drag
            else:
                raise self.error(
                    f"{where}.{child.tag}", "unknown element; expected volume, center_of_buoyancy or drag"
                )

    def hydro_plugin(self, plugin: ET.Element, links: dict[str, dict]) -> None:
        ln = plugin.find("link_name")
        name = None if ln is None else (ln.text or "").strip()
        where = f"plugin[{plugin.get('name')}]"
        if name not in links:
            raise self.error(f"{where}.link_name", f"{name!r} is not a link of this robot")
        hydro = links[name].setdefault("hydrodynamics", {})
        for child in plugin:
            tag = child.tag
            if tag in _GZ_IGNORED:
                continue
            value = self.floats(f"{where}.{tag}", child.text, 1)[0]
            if m := _GZ_ADDED.match(tag):
                hydro.setdefault("added_mass", {})[f"{m.group(1).upper()}_{m.group(2).lower()}dot"] = value
            elif m := _GZ_QUADRATIC.match(tag):
                if m.group(2) != m.group(3):
                    raise self.error(
                        f"{where}.{tag}", "only diagonal quadratic damping (such as xUabsU) is supported"
                    )
                hydro.setdefault("quadratic_damping", {})[
                    f"{m.group(1).upper()}_{m.group(2).lower() * 2}"
                ] = value
            elif m := _GZ_LINEAR.match(tag):
                hydro.setdefault("linear_damping", {})[f"{m.group(1).upper()}_{m.group(2).lower()}"] = value
            else:
                raise self.error(f"{where}.{tag}", "not a hydrodynamics coefficient (xDotU, xU, xUabsU, ...)")
