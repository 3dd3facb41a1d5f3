"""Rigid connections between bodies of different trees by the Udwadia-Kalaba equation
(Nielsen et al. 2018 sections 2.3-2.4, eqs. 16-20; Nielsen et al. 2016 sections 3-5).

Each vehicle keeps its own free joint; a rigid connection says that the child body moves as if
bolted to the parent body at a fixed relative pose ``(E, r)`` (child_R_parent, child origin in
parent coordinates). With ``X = [[E, -E r~], [0, E]]`` the body-frame spatial velocities obey
``V_c = X V_p``, hence at acceleration level, with body Jacobians ``J`` and the accelerations
``a⁰`` the bodies have when ``q̈ = 0``:

    A q̈ = b,   A = J_c - X J_p,   b = X a⁰_p - a⁰_c - 2α ė - β² e

(the six rows of Nielsen et al. 2018 eqs. 25-26 and 32-33 in body-frame form). ``e`` is the pose error
of the child from where the parent says it should be: position in child axes, and the
rotation vector of the quaternion error ``q*⁻¹ ⊗ q_c`` (the quaternion constraint of Nielsen et al. 2018
eq. 22, Nielsen et al. 2016 section 5); ``ė = V_c - X V_p``. The ``α, β`` terms are Baumgarte's
stabilisation of the drift that integrating an acceleration-level constraint leaves.

Constrained accelerations (Udwadia-Kalaba, Nielsen et al. 2018 eq. 20) with the Cholesky factor
``M = L Lᵀ`` standing in for ``M^{1/2}`` (the same minimiser of Gauss's principle
``(q̈ - q̈_u)ᵀ M (q̈ - q̈_u)`` subject to ``A q̈ = b``):

    q̈ = q̈_u + L⁻ᵀ (A L⁻ᵀ)⁺ (b - A q̈_u)

The Moore-Penrose pseudo-inverse makes redundant constraints (a loop of three vehicles)
harmless: the least-norm correction is unique whatever the rank of ``A``.

A joint coupling (a URDF ``mimic``: a gripper's fingers driven by one push rod) is one row in
joint space, ``q_f = m q_l + o``: ``A = e_f - m e_l``, ``b = -2α ė - β² e`` with
``e = q_f - m q_l - o`` (no bias: the row is constant). It is laid out as a connection's six
rows, the other five zero (the pseudo-inverse drops them), so both kinds share one solver. The
correction's force on the leader is ``-m`` times the one on the follower: the reaction of an
ideal, massless linkage (virtual work).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from transforms3d.quaternions import mat2quat, qinverse, qmult

from ..hydro.environment import Environment
from ..model.crba import crba
from ..model.model import Data, Model
from ..spatial import Array, motion_matrix
from .aba import aba
from .kinematics import ExternalWrench, body_accelerations


@dataclass(frozen=True)
class RigidConstraint:
    """Body ``child`` held at pose ``(E, r)`` relative to body ``parent`` (indices)."""

    name: str
    parent: int
    child: int
    E: Array  # child_R_parent
    r: Array  # child origin in parent coordinates

    @property
    def X(self) -> Array:
        return motion_matrix(self.E, self.r)


@dataclass(frozen=True)
class JointCoupling:
    """The 1-DOF joint of body ``child`` held at ``multiplier`` times that of body ``parent``
    plus ``offset`` (a URDF mimic joint; indices of the joints' child bodies)."""

    name: str
    parent: int
    child: int
    multiplier: float
    offset: float = 0.0


Constraint = RigidConstraint | JointCoupling


def body_jacobian(model: Model, data: Data, i: int) -> Array:
    """6 x nv Jacobian of body i's spatial velocity in its own axes (``V_i = J_i v``); needs
    ``data.X`` from ``placements``."""
    J = np.zeros((6, model.nv))
    Xacc = np.eye(6)
    k = i
    while k >= 0:
        joint = model.joints[k]
        if joint.nv:
            s = model.idx_v[k]
            J[:, s : s + joint.nv] = Xacc @ joint.S
        Xacc = Xacc @ data.X[k]
        k = model.parents[k]
    return J


def zero_acceleration_bias(model: Model, data: Data) -> Array:
    """Body accelerations at ``q̈ = 0`` (``a⁰_i = X_i a⁰_λ + c_i``), from ``data.c``."""
    return body_accelerations(model, data, np.zeros(model.nv))


def coupling_error(model: Model, q: Array, c: JointCoupling) -> float:
    """``q_f - m q_l - o`` of a joint coupling."""
    return float(q[model.idx_q[c.child]] - c.multiplier * q[model.idx_q[c.parent]] - c.offset)


def pose_error(data: Data, c: RigidConstraint) -> Array:
    """``[e_p; e_R]`` in child axes: position error and rotation vector of the quaternion error."""
    Rp, pp = data.R_world[c.parent], data.p_world[c.parent]
    Rc, pc = data.R_world[c.child], data.p_world[c.child]
    R_target = Rp @ c.E.T
    e = np.empty(6)
    e[:3] = Rc.T @ (pc - (pp + Rp @ c.r))
    q_err = qmult(qinverse(mat2quat(R_target)), mat2quat(Rc))
    e[3:] = 2.0 * np.sign(q_err[0] or 1.0) * q_err[1:]
    return e


def constraint_equations(
    model: Model, data: Data, constraints: list[Constraint], q: Array, v: Array, alpha: float, beta: float
) -> tuple[Array, Array]:
    """``(A, b)`` of all constraints (6 rows each); needs placements, velocities and ``data.c``."""
    A = np.zeros((6 * len(constraints), model.nv))
    b = np.zeros(6 * len(constraints))
    a0 = zero_acceleration_bias(model, data)
    for k, c in enumerate(constraints):
        if isinstance(c, JointCoupling):
            f, lead = model.idx_v[c.child], model.idx_v[c.parent]
            A[6 * k, f] = 1.0
            A[6 * k, lead] -= c.multiplier
            edot = v[f] - c.multiplier * v[lead]
            b[6 * k] = -2.0 * alpha * edot - beta * beta * coupling_error(model, q, c)
            continue
        X = c.X
        Jp, Jc = body_jacobian(model, data, c.parent), body_jacobian(model, data, c.child)
        rows = slice(6 * k, 6 * k + 6)
        A[rows] = Jc - X @ Jp
        edot = data.v[c.child] - X @ data.v[c.parent]
        b[rows] = X @ a0[c.parent] - a0[c.child] - 2.0 * alpha * edot - beta * beta * pose_error(data, c)
    return A, b


def udwadia_kalaba(M: Array, qdd_u: Array, A: Array, b: Array, rcond: float = 1e-10) -> Array:
    """``q̈ = q̈_u + L⁻ᵀ (A L⁻ᵀ)⁺ (b - A q̈_u)`` with ``M = L Lᵀ`` (Nielsen et al. 2018 eq. 20)."""
    from scipy.linalg import cho_factor, solve_triangular  # here: 27 MB that unconnected systems never need

    L, _ = cho_factor(M, lower=True)
    L = np.tril(L)
    G = solve_triangular(L, A.T, lower=True).T  # A L⁻ᵀ
    z = np.linalg.pinv(G, rcond=rcond) @ (b - A @ qdd_u)
    return qdd_u + solve_triangular(L.T, z, lower=False)


def constrained_aba(
    model: Model,
    data: Data,
    q: Array,
    v: Array,
    tau: Array,
    constraints: list[Constraint],
    env: Environment | None = None,
    f_ext: ExternalWrench = None,
    t: float = 0.0,
    alpha: float = 5.0,
    beta: float = 5.0,
) -> Array:
    """Unconstrained ``q̈_u`` by ABA, then the Udwadia-Kalaba correction (``M`` by CRBA, with
    added mass). Without constraints this is ``aba``."""
    qdd_u = aba(model, data, q, v, tau, env, f_ext, t)
    if not constraints:
        return qdd_u
    A, b = constraint_equations(model, data, constraints, q, v, alpha, beta)  # data still holds this state
    M = crba(model, data, q)
    return udwadia_kalaba(M, qdd_u, A, b)


def project_velocity(model: Model, data: Data, q: Array, v: Array, constraints: list[Constraint]) -> Array:
    """The velocity closest to v in the kinetic-energy metric that satisfies the constraints:
    ``v - L⁻ᵀ (A L⁻ᵀ)⁺ A v``, the perfectly inelastic impulse of docking (momentum kept)."""
    from .kinematics import forward_kinematics

    forward_kinematics(model, data, q, v)
    A, _ = constraint_equations(model, data, constraints, q, v, 0.0, 0.0)
    M = crba(model, data, q)
    return udwadia_kalaba(M, v, A, np.zeros(A.shape[0]))
