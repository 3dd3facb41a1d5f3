"""Hardware and software in the loop: the ArduPilot SITL JSON physics backend for ArduSub, and a
MAVLink HIL bridge for PX4 in SITL (lock-step over TCP) and HITL (sockets and pymavlink; no
ROS)."""

from .sitl_json import SitlJsonBackend, encode_servo_packet, parse_servo_packet

__all__ = ["SitlJsonBackend", "encode_servo_packet", "parse_servo_packet"]
