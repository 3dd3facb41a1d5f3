"""Models built in code from published parameters, for tests, benchmarks and examples.

The YAML/URDF descriptions in ``config/`` are the user-facing form; these functions give the
same systems without file I/O and document where every number comes from.
"""

from __future__ import annotations

import numpy as np

from ..hydro.params import Hydrodynamics
from .body import Body
from .joints import Joint
from .model import Model
from .shapes import RHO_FRESH, cylinder_inertia, slender_cylinder_hydro

BLUEROV2_VOLUME = 0.011702344  # B / (ρ g) = 114.8 N / (1000 kg/m^3 * 9.81 m/s^2)


def bluerov2_body(name: str = "base_link", parent: int = -1, joint: Joint | None = None) -> Body:
    """BlueROV2 as one rigid body (C.-J. Wu 2018; León-González et al. 2024 section 6.1).

    m = 11.5 kg, W = 112.8 N, B = 114.8 N (so V = B / (ρ g) in fresh water), I = diag(0.16),
    r_g = (0, 0, 0.02) m, r_b = 0; added mass, linear and quadratic damping as listed.
    """
    hydro = Hydrodynamics.from_fossen(
        {
            "X_udot": -5.5, "Y_vdot": -12.7, "Z_wdot": -14.57,
            "K_pdot": -0.12, "M_qdot": -0.12, "N_rdot": -0.12,
            "X_u": -4.03, "Y_v": -6.22, "Z_w": -5.18, "K_p": -0.07, "M_q": -0.07, "N_r": -0.07,
            "X_uu": -18.18, "Y_vv": -21.66, "Z_ww": -36.99, "K_pp": -1.55, "M_qq": -1.55, "N_rr": -1.55,
        },
        volume=BLUEROV2_VOLUME,
        center_of_buoyancy=np.zeros(3),
    )  # fmt: skip
    return Body(
        name=name,
        parent=parent,
        joint=joint or Joint("free"),
        mass=11.5,
        com=np.array([0.0, 0.0, 0.02]),
        inertia=np.diag([0.16, 0.16, 0.16]),
        hydro=hydro,
    )


def bluerov2() -> Model:
    """The BlueROV2 as a floating base."""
    return Model([bluerov2_body()], name="bluerov2")


# A light 4-joint arm of the Reach Alpha class mounted under the front of the vehicle.
# Illustrative values (masses and lengths of a ~1 kg electric arm), not a datasheet.
LIGHT_ARM = (
    # name, axis, origin in parent, mass, length along +x, radius
    ("arm_link1", (0.0, 0.0, 1.0), (0.20, 0.0, 0.10), 0.25, 0.05, 0.02),
    ("arm_link2", (0.0, 1.0, 0.0), (0.05, 0.0, 0.0), 0.30, 0.15, 0.02),
    ("arm_link3", (0.0, 1.0, 0.0), (0.15, 0.0, 0.0), 0.25, 0.15, 0.02),
    ("arm_link4", (1.0, 0.0, 0.0), (0.15, 0.0, 0.0), 0.20, 0.08, 0.02),
)


def light_arm_bodies(first_parent: int, spec=LIGHT_ARM, rho: float = RHO_FRESH) -> list[Body]:
    """Serial chain of slender links along +x, joint i on link i's origin."""
    bodies = []
    parent = first_parent
    for k, (name, axis, origin, mass, length, radius) in enumerate(spec):
        center = np.array([length / 2.0, 0.0, 0.0])
        bodies.append(
            Body(
                name=name,
                parent=parent,
                joint=Joint("revolute", axis=np.array(axis), effort_limit=10.0),
                mass=mass,
                com=center,
                inertia=cylinder_inertia(mass, radius, length, 0),
                origin_xyz=np.array(origin),
                hydro=slender_cylinder_hydro(radius, length, 0, center, rho=rho),
                joint_name=f"arm_joint{k + 1}",
            )
        )
        parent = first_parent + k + 1
    return bodies


def bluerov2_with_arm() -> Model:
    """BlueROV2 with the light 4-joint arm (5 bodies, nv = 10)."""
    return Model([bluerov2_body(), *light_arm_bodies(0)], name="bluerov2_arm")


def walker() -> Model:
    """A 28-body / 45-DOF underwater hexapod in the image of McMillan et al.'s (1996) Aquarobot.

    McMillan et al. 1996 (section 6) reports 28 rigid bodies / 45 DOF including foot pads and a camera
    boom: here a floating body (6), six legs of hip yaw, hip pitch and knee pitch revolutes with
    a ball-jointed foot pad (6 x 4 bodies, 6 x 6 DOF) and a three-joint camera boom (3 bodies,
    3 DOF). Masses and sizes are illustrative (a ~0.7 t walker), for performance work.
    """
    bodies = [
        Body(
            "body",
            -1,
            Joint("free"),
            mass=400.0,
            inertia=np.diag([60.0, 60.0, 110.0]),
            hydro=Hydrodynamics.from_fossen(
                {
                    "X_udot": -150.0,
                    "Y_vdot": -150.0,
                    "Z_wdot": -400.0,
                    "K_pdot": -30.0,
                    "M_qdot": -30.0,
                    "N_rdot": -20.0,
                    "X_u": -50.0,
                    "Y_v": -50.0,
                    "Z_w": -120.0,
                    "K_p": -20.0,
                    "M_q": -20.0,
                    "N_r": -20.0,
                    "X_uu": -300.0,
                    "Y_vv": -300.0,
                    "Z_ww": -800.0,
                },
                volume=0.3,
                center_of_buoyancy=np.array([0.0, 0.0, -0.1]),
            ),
        )
    ]
    for leg in range(6):
        yaw = np.pi / 6.0 + leg * np.pi / 3.0
        hip = np.array([0.8 * np.cos(yaw), 0.8 * np.sin(yaw), 0.0])
        base = len(bodies)
        segments = (
            ("coxa", "revolute", (0, 0, 1), hip, (0.0, 0.0, yaw), 8.0, 0.15, 0.06),
            ("femur", "revolute", (0, 1, 0), (0.15, 0, 0), (0, 0, 0), 15.0, 0.6, 0.06),
            ("tibia", "revolute", (0, 1, 0), (0.6, 0, 0), (0, 0, 0), 12.0, 0.7, 0.05),
            ("foot", "spherical", (0, 0, 1), (0.7, 0, 0), (0, 0, 0), 3.0, 0.05, 0.12),
        )
        for k, (name, jtype, axis, xyz, rpy, mass, length, radius) in enumerate(segments):
            center = np.array([length / 2.0, 0.0, 0.0])
            bodies.append(
                Body(
                    f"leg{leg}_{name}",
                    0 if k == 0 else base + k - 1,
                    Joint(jtype, axis=np.array(axis, dtype=float)),
                    mass=mass,
                    com=center,
                    inertia=cylinder_inertia(mass, radius, length, 0),
                    origin_xyz=np.array(xyz, dtype=float),
                    origin_rpy=np.array(rpy, dtype=float),
                    hydro=slender_cylinder_hydro(radius, length, 0, center, drag_model="lumped"),
                )
            )
    boom = len(bodies)
    for k, (name, jtype, axis, xyz, mass, length) in enumerate(
        (
            ("boom_pan", "revolute", (0, 0, 1), (0.0, 0.0, -0.3), 5.0, 0.2),
            ("boom_tilt", "revolute", (0, 1, 0), (0.2, 0.0, 0.0), 6.0, 0.8),
            ("boom_extend", "prismatic", (1, 0, 0), (0.8, 0.0, 0.0), 4.0, 0.4),
        )
    ):
        center = np.array([length / 2.0, 0.0, 0.0])
        bodies.append(
            Body(
                name,
                0 if k == 0 else boom + k - 1,
                Joint(jtype, axis=np.array(axis, dtype=float)),
                mass=mass,
                com=center,
                inertia=cylinder_inertia(mass, 0.05, length, 0),
                origin_xyz=np.array(xyz),
                hydro=slender_cylinder_hydro(0.05, length, 0, center, drag_model="lumped"),
            )
        )
    return Model(bodies, name="walker")


MODELS = {"bluerov2": bluerov2, "bluerov2_arm": bluerov2_with_arm, "walker": walker}
