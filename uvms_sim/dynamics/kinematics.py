"""Forward kinematics pass shared by ABA, RNEA and CRBA (McMillan et al. 1996 eqs. A1-A5, 9, 10)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..hydro.environment import Environment
from ..hydro.forces import body_bias
from ..hydro.hull import submerged
from ..hydro.waves import WaveField
from ..model.kinematics import placements
from ..model.model import Data, Model
from ..spatial import Array, motion_cross

DEFAULT_ENV = Environment()

# External wrenches on the bodies (n x 6, body axes, about each body origin): an array, or a
# function of the forward pass (velocities relative to the water in ``data.v_rel``), evaluated
# once per call - thrusters, whose thrust depends on the advance speed, are such a function.
ExternalWrench = Array | Callable[[Data], Array] | None


def wrench_sum(f_ext: Array, data: Data, *sources) -> Array:
    """``f_ext`` plus the wrenches of each source at this forward pass: thrusters and contacts,
    anything with ``wrenches(data)`` (None: absent). The one place the external loads add up."""
    out = f_ext.copy()
    for source in sources:
        if source is not None:
            out += source.wrenches(data)
    return out


def velocities_and_bias(
    model: Model,
    data: Data,
    v: Array,
    env: Environment,
    f_ext: ExternalWrench,
    t: float = 0.0,
) -> None:
    """Body velocities, velocity-product accelerations and hydrodynamic bias forces.

    ``v_i = X_i v_λ + S_i q̇_i`` (McMillan et al. 1996 eq. 9), ``c_i = v_i × S_i q̇_i`` (eq. A3), and the
    bias ``p_i`` of ``uvms_sim.hydro.forces`` with gravity, current and fluid acceleration
    rotated into body axes (eq. 10); the current and its acceleration are taken at time t.
    ``f_ext`` (see ``ExternalWrench``) is subtracted from the bias.
    """
    wrench_fn = f_ext if callable(f_ext) else None
    f_arr = None if callable(f_ext) else f_ext
    gravity = env.gravity_vector
    rho = env.density
    current0, current_accel0 = env.fluid_state(t)
    current, current_accel = current0, current_accel0
    surface = env.surface
    waves = env.waves if surface is not None and env.waves is not None and len(env.waves) else None
    for i, joint in enumerate(model.joints):
        lam = model.parents[i]
        vJ = joint.S @ v[model.idx_v[i] : model.idx_v[i] + joint.nv]
        if lam < 0:
            data.v[i] = vJ
        else:
            data.v[i] = data.X[i] @ data.v[lam] + vJ
        data.c[i] = motion_cross(data.v[i], vJ)
        volume, cob, wet = model.volume[i], model.cob[i], 1.0
        if waves is not None and surface is not None:
            volume, cob, wet, u, a = wave_water(model, data, i, surface, waves, t)
            current, current_accel = current0 + u, current_accel0 + a
        elif env.surface is not None:
            volume, cob, wet = wet_part(model, data, i, env.surface)
        data.bias[i] = body_bias(
            model.I_RB[i],
            model.M_A[i],
            model.D_lin[i],
            model.d_quad[i],
            model.mass[i],
            model.com[i],
            rho * volume,
            cob,
            data.R_world[i],
            data.v[i],
            gravity,
            current,
            current_accel,
            data.v_rel[i],
            data.hydro_wrench[i],
            model.drag[i],
            rho,
            wet,
            model.damping_center[i],
        )
        if f_arr is not None:
            data.bias[i] -= f_arr[i]
    if wrench_fn is not None:
        data.bias -= wrench_fn(data)


def wet_part(
    model: Model, data: Data, i: int, surface: float, slope: tuple[float, float] = (0.0, 0.0)
) -> tuple[float, Array, float]:
    """``(volume, centre of buoyancy, wet share)`` of body i at its world pose in ``data`` with
    the free surface at NED depth ``surface`` (or the plane ``s_x x + s_y y + z = surface``
    for ``slope`` = (s_x, s_y); ``hydro.hull.submerged``); a body without a volume is wet (its
    damping on) while its origin is under water."""
    hull = model.hull[i]
    if hull is None:
        p = data.p_world[i]
        depth = slope[0] * p[0] + slope[1] * p[1] + p[2] - surface
        return 0.0, model.cob[i], 1.0 if depth > 0.0 else 0.0
    wet = submerged(hull, data.R_world[i], data.p_world[i], surface, slope)
    if wet is None:
        return model.volume[i], model.cob[i], 1.0
    return wet[0], wet[1], wet[0] / hull.volume


def wave_water(
    model: Model, data: Data, i: int, surface: float, waves: WaveField, t: float
) -> tuple[float, Array, float, Array, Array]:
    """Body i in linear waves (``hydro.waves``): ``(volume, centre of buoyancy, wet share)``
    of its hull below the plane tangent to the moving surface at the hull's centre, and the
    water's velocity and acceleration (world NED) at the centroid of that wet part (taken at
    the hull centre's horizontal position), which the body feels as its current and fluid
    acceleration. A body whose hull cannot reach the surface (below the highest trough by more
    than its bounding radius, with the steepest slope) keeps its whole volume."""
    R, p = data.R_world[i], data.p_world[i]
    hull = model.hull[i]
    c, radius = (p, 0.0) if hull is None else (p + R @ hull.center, hull.radius)
    volume, cob, wet = model.volume[i], model.cob[i], 1.0
    highest, steepest = float(waves.amplitude.sum()), float(waves.amplitude @ waves.k)
    if c[2] - surface - highest < radius * np.sqrt(1.0 + steepest * steepest):
        eta, gx, gy = waves.surface_plane(c[0], c[1], t)
        volume, cob, wet = wet_part(model, data, i, surface - eta + gx * c[0] + gy * c[1], (gx, gy))
    z = p[2] + R[2] @ cob
    u, a = waves.kinematics(c[0], c[1], surface - z, t)
    return volume, cob, wet, u, a


def forward_kinematics(
    model: Model,
    data: Data,
    q: Array,
    v: Array | None = None,
    env: Environment | None = None,
    f_ext: ExternalWrench = None,
    t: float = 0.0,
) -> None:
    """Placements, and with ``v`` also velocities and bias forces (at time t), into ``data``."""
    placements(model, data, q)
    if v is not None:
        velocities_and_bias(model, data, v, env or DEFAULT_ENV, f_ext, t)


def body_accelerations(model: Model, data: Data, qdd: Array, bodies: Sequence[int] | None = None) -> Array:
    """Spatial accelerations of every body (body axes) for joint accelerations ``qdd``: the
    outward recursion ``a_i = X_i a_λ + c_i + S_i q̈_i`` (McMillan et al. 1996 eq. A2), after
    the forward pass of the same state in ``data`` (``X`` and ``c``). The ABA's forward pass
    runs the same recursion inline, solving for ``q̈_i`` between the parent's acceleration and
    the child's. With ``bodies``, only theirs (and their ancestors'): the other rows stay 0."""
    out = np.zeros((model.nbodies, 6))
    order: Iterable[int] = range(model.nbodies)
    if bodies is not None:
        chain: set[int] = set()
        for i in bodies:
            while i >= 0 and i not in chain:
                chain.add(i)
                i = int(model.parents[i])
        order = sorted(chain)  # parents before children (a parent's index is smaller)
    for i in order:
        joint = model.joints[i]
        lam = model.parents[i]
        a = data.c[i] if lam < 0 else data.X[i] @ out[lam] + data.c[i]
        if joint.nv:
            a = a + joint.S @ qdd[model.idx_v[i] : model.idx_v[i] + joint.nv]
        out[i] = a
    return out
