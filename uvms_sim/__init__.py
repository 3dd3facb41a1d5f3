"""uvms_sim: underwater vehicle and vehicle-manipulator simulation.

The physics core (``spatial``, ``model``, ``dynamics``, ``hydro``) is pure numpy/scipy; only
``uvms_sim.ros`` imports rclpy.
"""

__version__ = "0.1.0"
