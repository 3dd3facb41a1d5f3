"""Per-body fluid terms: hydrodynamic inertia and bias force (McMillan et al. 1996 eqs. 2-10)."""

from .environment import Environment
from .params import Hydrodynamics

__all__ = ["Environment", "Hydrodynamics"]
