"""What a system IS: bodies, joints, the tree, the description files that define them, and
what follows from the configuration alone: placements (kinematics) and the joint-space
inertia (CRBA)."""

from .body import Body
from .description import load
from .joints import JOINT_TYPES, Joint
from .model import Data, Model
from .system import System, Thruster, Vehicle
from .yaml_source import ConfigError

__all__ = [
    "JOINT_TYPES",
    "Body",
    "ConfigError",
    "Data",
    "Joint",
    "Model",
    "System",
    "Thruster",
    "Vehicle",
    "load",
]
