"""The same kinematic trees in Pinocchio and MuJoCo, for timing beside ``uvms_sim``.

Benchmark-only (``benchmarks/requirements.txt``). Both peers get the tree, joint types and axes,
joint placements, masses, centres of mass and inertias of a ``uvms_sim`` model. Neither has the
hydrodynamic terms: Pinocchio's ABA is rigid-body (no added mass, damping or buoyancy); MuJoCo
gets its own fluid model (``density``/``viscosity`` options: the inertia-box drag, viscous
resistance and buoyancy of each body), which is the closest it has. Fixed joints are merged
into the parent (Pinocchio) or become bodies without joints (MuJoCo).
"""

from __future__ import annotations

import numpy as np
from transforms3d.quaternions import mat2quat

from uvms_sim.model.model import Model

AXES = {(1.0, 0.0, 0.0): "X", (0.0, 1.0, 0.0): "Y", (0.0, 0.0, 1.0): "Z"}


def to_pinocchio(model: Model):
    """A ``pinocchio.Model`` of the tree (rigid bodies only)."""
    import pinocchio as pin

    pm = pin.Model()
    pm.name = model.name
    attach = {}  # our body -> (pinocchio joint id, placement of the body frame in that joint's frame)
    for i, body in enumerate(model.bodies):
        lam = model.parents[i]
        parent_id, parent_pl = (0, pin.SE3.Identity()) if lam < 0 else attach[lam]
        E_T, r_T = model.tree[i]
        placement = parent_pl * pin.SE3(np.asarray(E_T).T.copy(), np.asarray(r_T, dtype=float))
        inertia = pin.Inertia(float(body.mass), np.asarray(body.com, dtype=float), np.asarray(body.inertia))
        joint = body.joint
        if joint.type == "fixed":
            pm.appendBodyToJoint(parent_id, inertia, placement)
            attach[i] = (parent_id, placement)
            continue
        axis = tuple(float(x) for x in joint.axis)
        if joint.type == "free":
            jm = pin.JointModelFreeFlyer()
        elif joint.type == "spherical":
            jm = pin.JointModelSpherical()
        elif joint.type in ("revolute", "continuous"):
            jm = (
                getattr(pin, f"JointModelR{AXES[axis]}")()
                if axis in AXES
                else pin.JointModelRevoluteUnaligned(*axis)
            )
        else:
            jm = (
                getattr(pin, f"JointModelP{AXES[axis]}")()
                if axis in AXES
                else pin.JointModelPrismaticUnaligned(*axis)
            )
        jid = pm.addJoint(parent_id, jm, placement, body.joint_name or body.name)
        pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        attach[i] = (jid, pin.SE3.Identity())
    return pm


def _geoms(body, indent: str, is_object: bool) -> list[str]:
    """MuJoCo geoms of a body's collision shapes (``link_collisions``; meshes left out), in the
    collision group of the robot or of the free objects (``_GROUPS``)."""
    from transforms3d.euler import euler2quat

    from uvms_sim.model.visual import link_collisions

    out = []
    for v in link_collisions(body):
        kind = {"box": "box", "cylinder": "cylinder", "sphere": "sphere"}.get(v.shape)
        if kind is None:
            continue
        if kind == "box":
            size = [0.5 * x for x in v.size]
        elif kind == "cylinder":
            size = [v.size[0], 0.5 * v.size[1]]
        else:
            size = [v.size[0]]
        quat = euler2quat(*v.rpy, axes="sxyz")  # URDF rpy: fixed-axis x, y, z
        group = _GROUPS["object" if is_object else "robot"]
        out.append(
            f'{indent}<geom type="{kind}" size="{" ".join(f"{x:.9g}" for x in size)}" '
            f'pos="{" ".join(f"{x:.9g}" for x in v.xyz)}" quat="{" ".join(f"{x:.9g}" for x in quat)}" '
            f'{group} mass="0"/>'
        )
    return out


# contype / conaffinity: a robot's links touch the scene and the objects but not each other (as
# uvms_sim's touch: no link touches its own vehicle or arm); objects touch everything
_GROUPS = {"robot": 'contype="2" conaffinity="1"', "object": 'contype="1" conaffinity="3"'}


def to_mjcf(
    model: Model,
    timestep: float = 0.002,
    integrator: str = "Euler",
    density: float = 1000.0,
    collisions: bool = False,
    world: str = "",
    assets: str = "",
    gravity: str = "0 0 -9.81",
    objects: frozenset[str] = frozenset(),
) -> str:
    """MJCF text of the tree with MuJoCo's fluid model (water: density, viscosity 0.0009 Pa s);
    with ``collisions`` each body's collision shapes as geoms (massless: the inertia is the
    body's; ``objects``: the bodies that are free objects), ``world`` added to the world body
    (a floor) and ``assets`` to the assets."""

    def vec(x) -> str:
        return " ".join(f"{float(v):.9g}" for v in x)

    children: dict[int, list[int]] = {}
    for i in range(model.nbodies):
        children.setdefault(int(model.parents[i]), []).append(i)

    def body_xml(i: int, indent: str) -> str:
        b = model.bodies[i]
        E_T, r_T = model.tree[i]
        quat = mat2quat(np.asarray(E_T).T)
        inertia = np.asarray(b.inertia)
        full = tuple(inertia[k, j] for k, j in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)))
        mass = max(float(b.mass), 1e-6)
        if not np.any(full):
            full = (1e-9, 1e-9, 1e-9, 0.0, 0.0, 0.0)
        lines = [f'{indent}<body name="b{i}" pos="{vec(r_T)}" quat="{vec(quat)}">']
        lines.append(f'{indent}  <inertial pos="{vec(b.com)}" mass="{mass:.9g}" fullinertia="{vec(full)}"/>')
        t = b.joint.type
        if t == "free":
            lines.append(f"{indent}  <freejoint/>")
        elif t == "spherical":
            lines.append(f'{indent}  <joint type="ball"/>')
        elif t in ("revolute", "continuous"):
            lines.append(f'{indent}  <joint type="hinge" axis="{vec(b.joint.axis)}"/>')
        elif t == "prismatic":
            lines.append(f'{indent}  <joint type="slide" axis="{vec(b.joint.axis)}"/>')
        if collisions:
            lines += _geoms(b, indent + "  ", b.name in objects)
        for c in children.get(i, []):
            lines.append(body_xml(c, indent + "  "))
        lines.append(f"{indent}</body>")
        return "\n".join(lines)

    bodies = "\n".join(body_xml(i, "    ") for i in children.get(-1, []))
    return f"""<mujoco model="{model.name}">
  <compiler angle="radian" boundmass="1e-6" boundinertia="1e-9"/>
  <option timestep="{timestep}" integrator="{integrator}" density="{density}" viscosity="0.0009"
          gravity="{gravity}"/>
  <asset>{assets}</asset>
  <worldbody>
{world}
{bodies}
  </worldbody>
</mujoco>
"""


def to_mujoco(model: Model, **kwargs):
    """``(mujoco.MjModel, mujoco.MjData)`` of ``to_mjcf``."""
    import mujoco

    m = mujoco.MjModel.from_xml_string(to_mjcf(model, **kwargs))
    return m, mujoco.MjData(m)
