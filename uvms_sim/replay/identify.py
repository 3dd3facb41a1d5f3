"""Damping identification from a bag (equation error, linear least squares).

With the thrust computed from the bag's PWM by the thruster model (advance speed included) and
the recorded motion, the vehicle's equations of motion (seed 000 eq. 2; Fossen's model for one
body) give, per degree of freedom i of the root body,

    y_i = f_thrust,i - τ0_i(q, v, v̇) = D_ii v_i + d_i |v_i| v_i

where ``τ0`` is the inverse dynamics (RNEA) of the model with its damping removed: what is
left of the thrust once inertia (added mass included), Coriolis, gravity and buoyancy are paid
is the damping, linear in the unknown coefficients. ``v̇`` is the Savitzky-Golay derivative of
the recorded body velocity (which also smooths its noise). The coefficients are fitted by
bounded linear least squares (``scipy.optimize.lsq_linear``, D, d >= 0) with standard errors
from ``σ² (AᵀA)⁻¹``. Assumes no current and diagonal damping, as the shipped descriptions.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.optimize import lsq_linear
from scipy.signal import savgol_filter

from ..dynamics import forward_kinematics, rnea
from ..hydro.params import AXES, FORCES
from ..model.model import Model
from ..model.system import System
from ..simulator import Simulator
from .bag import BagContents
from .run import state_from_odometry


def _undamped(model: Model, body: int) -> Model:
    b = model.bodies[body]
    hydro = replace(b.hydro, linear_damping=np.zeros((6, 6)), quadratic_damping=np.zeros(6))
    bodies = list(model.bodies)
    bodies[body] = replace(b, hydro=hydro)
    return Model(bodies, name=model.name)


def identify_damping(system: System, bag: BagContents, axes=(0, 1, 2, 5), window: int = 11) -> dict:
    """Fit linear and quadratic damping of the root body on ``axes`` (0..5 = u v w p q r).

    Returns ``{SNAME name: (value, standard error)}`` in Fossen's sign convention (X_u = -D)."""
    model = system.model
    t, odo = bag.odometry.arrays()
    if len(t) < window + 2:
        raise ValueError(f"identification needs at least {window + 2} odometry samples, the bag has {len(t)}")
    dt = float(np.median(np.diff(t)))
    states = [state_from_odometry(system, row) for row in odo]
    v = np.array([s[1][:6] for s in states])
    vdot = savgol_filter(v, window, 3, deriv=1, delta=dt, axis=0)
    v_smooth = savgol_filter(v, window, 3, axis=0)
    model0 = _undamped(model, 0)
    data0 = model0.create_data()
    sim = Simulator.from_system(system)
    bank = sim.thrusters
    t_cmd, pwm = bag.commands.arrays()
    y = np.zeros((len(t), 6))
    for n, (q, _) in enumerate(states):
        vn = np.zeros(model.nv)
        vn[:6] = v_smooth[n]
        an = np.zeros(model.nv)
        an[:6] = vdot[n]
        k = np.searchsorted(t_cmd, t[n], side="right") - 1
        if k >= 0:
            bank.set_motor_pwm(pwm[k])
        bank.advance(1e3)  # steady shaft speed (the static map; lag is not identified here)
        forward_kinematics(model, sim.data, q, vn, system.environment)
        thrust = bank.wrenches(sim.data)[0]
        tau0 = rnea(model0, data0, q, vn, an, system.environment)
        y[n] = thrust - tau0[:6]
    edge = window // 2  # the filter's edges are one-sided: leave them out
    result = {}
    for i in axes:
        vi = v_smooth[edge:-edge, i]
        A = np.column_stack([vi, np.abs(vi) * vi])
        b = y[edge:-edge, i]
        fit = lsq_linear(A, b, bounds=(0.0, np.inf))
        dof = max(1, len(b) - 2)
        sigma2 = float(np.sum((A @ fit.x - b) ** 2) / dof)
        cov = sigma2 * np.linalg.pinv(A.T @ A)
        se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        f, a = FORCES[i], AXES[i]
        result[f"{f}_{a}"] = (-float(fit.x[0]), float(se[0]))
        result[f"{f}_{a}{a}"] = (-float(fit.x[1]), float(se[1]))
    return result


def overlay_yaml(system: System, fitted: dict) -> str:
    """A YAML ``hydrodynamics`` overlay for the root link with the fitted damping (the other
    hydrodynamic terms as in the description)."""
    import yaml

    from ..model.export import _hydro

    root = system.model.bodies[0]
    block = _hydro(root.hydro)
    lin = {
        f"{f}_{a}": -float(root.hydro.linear_damping[k, k])
        for k, (f, a) in enumerate(zip(FORCES, AXES, strict=True))
    }
    quad = {
        f"{f}_{a}{a}": -float(root.hydro.quadratic_damping[k])
        for k, (f, a) in enumerate(zip(FORCES, AXES, strict=True))
    }
    for name, (value, _) in fitted.items():
        (quad if name[-1] == name[-2] else lin)[name] = value
    block["linear_damping"] = lin
    block["quadratic_damping"] = quad
    return yaml.safe_dump({"hydrodynamics": {root.name: block}}, sort_keys=False)
