"""A user's BlueROV2 control script written against MAVROS (rclpy + mavros_msgs + common
message packages only, nothing from uvms_sim): run as a separate process by test_mavros.py.

It refuses a bogus mode, tries to arm with throttle applied (refused), arms, drives forward
in MANUAL with the RC override, checks the servo outputs and that the vehicle moves forward,
then disarms and checks the outputs return to neutral. Prints one JSON line of findings and
exits 0 when every step behaved as on a real ArduSub.
"""

from __future__ import annotations

import json
import math
import sys
import time

import rclpy
from geometry_msgs.msg import PoseStamped
from mavros_msgs.msg import OverrideRCIn, RCOut, State
from mavros_msgs.srv import CommandBool, SetMode
from rclpy.qos import DurabilityPolicy, QoSProfile, qos_profile_sensor_data


def main() -> int:
    rclpy.init()
    node = rclpy.create_node("bluerov2_pilot")
    last: dict[str, object] = {}
    node.create_subscription(
        State,
        "/mavros/state",
        lambda m: last.__setitem__("state", m),
        QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL),
    )
    node.create_subscription(RCOut, "/mavros/rc/out", lambda m: last.__setitem__("rc_out", m), 10)
    node.create_subscription(
        PoseStamped,
        "/mavros/local_position/pose",
        lambda m: last.__setitem__("pose", m),
        qos_profile_sensor_data,
    )
    override = node.create_publisher(OverrideRCIn, "/mavros/rc/override", 10)
    arming = node.create_client(CommandBool, "/mavros/cmd/arming")
    set_mode = node.create_client(SetMode, "/mavros/set_mode")

    def spin(seconds: float, until=None, every=None) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if until is not None and until():
                return True
            if every is not None:
                every()
            rclpy.spin_once(node, timeout_sec=0.05)
        return until() if until is not None else True

    def call(client, request):
        assert client.wait_for_service(timeout_sec=10.0)
        future = client.call_async(request)
        rclpy.spin_until_future_complete(node, future, timeout_sec=10.0)
        return future.result()

    def sticks(throttle=1500, forward=1500):
        msg = OverrideRCIn()
        msg.channels = [1500, 1500, throttle, 1500, forward, 1500] + [OverrideRCIn.CHAN_NOCHANGE] * 12
        return msg

    found: dict[str, object] = {}
    found["connected"] = spin(20.0, lambda: "state" in last and last["state"].connected and "pose" in last)
    found["bogus_mode_sent"] = call(set_mode, SetMode.Request(custom_mode="WARP_DRIVE")).mode_sent
    found["manual_mode_sent"] = call(set_mode, SetMode.Request(custom_mode="MANUAL")).mode_sent
    override.publish(sticks(throttle=1800))
    spin(0.5)
    refused = call(arming, CommandBool.Request(value=True))
    found["arm_with_throttle"] = refused.success
    override.publish(sticks())
    spin(0.5)
    found["arm"] = call(arming, CommandBool.Request(value=True)).success
    found["state_armed"] = spin(5.0, lambda: last["state"].armed and last["state"].mode == "MANUAL")
    y0 = last["pose"].pose.position.y
    forward = sticks(forward=1600)  # forward 0.25: vectored motors 1, 2 at 1500 - 100, 3, 4 at 1500 + 100

    def rc_out_forward() -> bool:
        return "rc_out" in last and list(last["rc_out"].channels[:4]) == [1400, 1400, 1600, 1600]

    found["rc_out_forward"] = spin(5.0, rc_out_forward, every=lambda: override.publish(forward))
    spin(3.0, every=lambda: override.publish(forward))
    found["moved_north_m"] = last["pose"].pose.position.y - y0  # heading north: forward is +y (ENU)
    found["disarm"] = call(arming, CommandBool.Request(value=False)).success
    found["rc_out_neutral"] = spin(
        5.0, lambda: list(last["rc_out"].channels) == [1500] * 6 and not last["state"].armed
    )
    print(json.dumps(found))
    ok = (
        found["connected"] and not found["bogus_mode_sent"] and found["manual_mode_sent"]
        and not found["arm_with_throttle"] and found["arm"] and found["state_armed"]
        and found["rc_out_forward"] and found["moved_north_m"] > 0.2
        and found["disarm"] and found["rc_out_neutral"]
        and not math.isnan(found["moved_north_m"])
    )  # fmt: skip
    node.destroy_node()
    rclpy.shutdown()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
