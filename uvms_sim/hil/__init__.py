"""Hardware and software in the loop: the ArduPilot SITL JSON physics backend and a MAVLink HIL
bridge (sockets and pymavlink; no ROS)."""

from .sitl_json import SitlJsonBackend, encode_servo_packet, parse_servo_packet

__all__ = ["SitlJsonBackend", "encode_servo_packet", "parse_servo_packet"]
