"""What a system IS: bodies, joints, the tree."""

from .body import Body
from .joints import JOINT_TYPES, Joint
from .model import Data, Model

__all__ = ["JOINT_TYPES", "Body", "Data", "Joint", "Model"]
