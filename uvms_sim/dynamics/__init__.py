"""Algorithms over (model, data): ABA, RNEA, CRBA, kinematics, integration, energy/momentum."""

from .aba import aba
from .crba import crba
from .integrate import NonFiniteStateError, integrate, normalize, step, step_rk4, step_semi_implicit_euler
from .kinematics import forward_kinematics
from .quantities import kinetic_energy, momentum_world
from .rnea import nonlinear_effects, rnea

__all__ = [
    "NonFiniteStateError",
    "aba",
    "crba",
    "forward_kinematics",
    "integrate",
    "kinetic_energy",
    "momentum_world",
    "nonlinear_effects",
    "normalize",
    "rnea",
    "step",
    "step_rk4",
    "step_semi_implicit_euler",
]
