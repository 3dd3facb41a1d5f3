"""Live replay: publish a bag's thruster commands into a running simulator node, with /clock
from the bag, paced at real time.

The commands go out as std_msgs/UInt16MultiArray on ``thrusters/pwm`` in servo order (the
simulator node takes the first servo channel per thruster; run it with
``-p ardusub_frame:=none`` so that PWM drives the thrusters directly). A bag with the pilot's
RC override instead goes to the node's MAVROS interface, as the pilot's station sent it:
``mavros/rc/override``, and each mavros State of the bag as ``mavros/cmd/arming`` and
``mavros/set_mode`` requests. /clock carries the bag's own time, so recorders and tools with
``use_sim_time`` follow the bag.

A bag that logs commands only when they change (a servo log, a pilot who holds a stick) would
let the simulator's ``command_timeout`` (0.5 s) or ArduSub's pilot-input failsafe (3 s) drop
the vehicle to neutral between changes: the last command is published again every
``resend`` seconds (0.1 s), as an autopilot streams its servo outputs and a ground station its
overrides. Ctrl-C stops the playback quietly (exit 130).
"""

from __future__ import annotations

import sys
import time

import rclpy
from builtin_interfaces.msg import Time
from mavros_msgs.msg import OverrideRCIn
from mavros_msgs.srv import CommandBool, SetMode
from rclpy.client import Client
from rclpy.executors import ExternalShutdownException
from rosgraph_msgs.msg import Clock
from std_msgs.msg import UInt16MultiArray

from ..replay.bag import BagContents


def play(
    bag: BagContents,
    rate: float = 1.0,
    clock_rate: float = 100.0,
    context=None,
    topic: str = "thrusters/pwm",
    mavros: str = "mavros",
    resend: float = 0.1,
) -> int:
    """Publish the commands at their bag times (x ``rate``), the last one again every
    ``resend`` s; returns 0 when the bag is done, 130 when stopped by Ctrl-C."""
    own = context is None and not rclpy.ok()
    if own:
        rclpy.init()
    node = rclpy.create_node("bag_player", context=context)
    t = 0.0
    try:
        pilot = bag.command_source == "rc_override"
        if pilot:
            pwm_pub = node.create_publisher(OverrideRCIn, f"{mavros}/rc/override", 10)
            arming: Client = node.create_client(CommandBool, f"{mavros}/cmd/arming")
            set_mode: Client = node.create_client(SetMode, f"{mavros}/set_mode")
            t_cmd, pwm = bag.overrides.arrays()
            t_state, states = list(bag.autopilot_states.t), bag.autopilot_states.values
        else:
            pwm_pub = node.create_publisher(UInt16MultiArray, topic, 10)
            t_cmd, pwm = bag.commands.arrays()
            t_state, states = [], []
        clock_pub = node.create_publisher(Clock, "/clock", 10)
        end = t_cmd[-1] if len(bag.odometry.t) == 0 else max(t_cmd[-1], bag.odometry.t[-1])
        k_state = 0
        wall0 = time.monotonic()
        k = 0
        sent = -float("inf")  # bag time of the last command published
        while t <= end:
            t = (time.monotonic() - wall0) * rate
            while k_state < len(t_state) and t_state[k_state] <= t:
                armed, mode = states[k_state]
                set_mode.call_async(SetMode.Request(custom_mode=mode))
                arming.call_async(CommandBool.Request(value=armed))
                k_state += 1
            due = k < len(t_cmd) and t_cmd[k] <= t
            while k < len(t_cmd) and t_cmd[k] <= t:
                k += 1
            if k and (due or t - sent >= resend * rate):  # the newest due command, or the last again
                values = [int(x) for x in pwm[k - 1]]
                pwm_pub.publish(OverrideRCIn(channels=values) if pilot else UInt16MultiArray(data=values))
                sent = t
            ns = bag.start_ns + round(t * 1e9)
            clock_pub.publish(Clock(clock=Time(sec=ns // 10**9, nanosec=ns % 10**9)))
            time.sleep(1.0 / clock_rate)
        return 0
    except (KeyboardInterrupt, ExternalShutdownException):
        print(f"stopped at {t:.1f} s of the bag", file=sys.stderr)
        return 130
    except Exception:
        if node.context.ok():
            raise
        print(f"stopped at {t:.1f} s of the bag", file=sys.stderr)  # Ctrl-C shut the context down
        return 130
    finally:
        node.destroy_node()
        if own:
            rclpy.try_shutdown()
