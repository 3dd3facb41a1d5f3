"""What a vehicle's sensors read: the ground truth of the simulated state (``truth``), and the
noisy sensors a description declares (``vehicles[].sensors``): IMU, pressure, magnetometer,
altimeter and DVL (``imu``, ``pressure``, ``magnetometer``, ``acoustic``), sampled at their
rates in simulated time by a ``suite.SensorSuite``. Pure numpy, no ROS."""

from .truth import P_ATM, absolute_pressure, accelerometer, current_accelerations, specific_force

__all__ = ["P_ATM", "absolute_pressure", "accelerometer", "current_accelerations", "specific_force"]
