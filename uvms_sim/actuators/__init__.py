"""Actuators: thrusters (PWM -> shaft speed -> thrust), ArduSub frames, mixing and modes, joint
motors. Pure numpy; the ROS node and the SITL/HIL bridges feed them."""

from .bank import ThrusterBank
from .thruster import PRESETS, T200_12V, T200_16V, ThrusterModel, thruster_model

__all__ = ["PRESETS", "T200_12V", "T200_16V", "ThrusterBank", "ThrusterModel", "thruster_model"]
