"""The interface packages are real ROS 2 types: round trips over Fast DDS, in and across processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from mavros_msgs.msg import OverrideRCIn, State
from mavros_msgs.srv import CommandBool, SetMode
from ros_helpers import ros_context, spin_until
from tf2_msgs.msg import TFMessage

pytestmark = pytest.mark.ros


def test_tfmessage_and_override_round_trip_between_two_nodes() -> None:
    with ros_context() as (ctx, executor):
        import rclpy

        talker = rclpy.create_node("talker", context=ctx)
        listener = rclpy.create_node("listener", context=ctx)
        executor.add_node(talker)
        executor.add_node(listener)
        got_tf: list[TFMessage] = []
        got_rc: list[OverrideRCIn] = []
        listener.create_subscription(TFMessage, "/tf", got_tf.append, 10)
        listener.create_subscription(OverrideRCIn, "/mavros/rc/override", got_rc.append, 10)
        pub_tf = talker.create_publisher(TFMessage, "/tf", 10)
        pub_rc = talker.create_publisher(OverrideRCIn, "/mavros/rc/override", 10)

        tf = TransformStamped()
        tf.header.stamp = Time(sec=12, nanosec=345)
        tf.header.frame_id = "odom"
        tf.child_frame_id = "base_link"
        tf.transform.translation.x = 1.5
        tf.transform.rotation.w = 1.0
        rc = OverrideRCIn()
        rc.channels[4] = 1700
        rc.channels[8] = OverrideRCIn.CHAN_NOCHANGE

        def publish() -> None:
            pub_tf.publish(TFMessage(transforms=[tf]))
            pub_rc.publish(rc)

        assert spin_until(executor, lambda: bool(got_tf and got_rc), every=publish)
        out = got_tf[0].transforms[0]
        assert (out.header.frame_id, out.child_frame_id) == ("odom", "base_link")
        assert out.transform.translation.x == 1.5 and out.header.stamp.nanosec == 345
        assert got_rc[0].channels[4] == 1700 and got_rc[0].channels[8] == 65535
        assert len(got_rc[0].channels) == 18 and OverrideRCIn.CHAN_RELEASE == 0


def test_command_bool_and_set_mode_services() -> None:
    with ros_context() as (ctx, executor):
        import rclpy

        server = rclpy.create_node("fcu", context=ctx)
        client_node = rclpy.create_node("user", context=ctx)
        executor.add_node(server)
        executor.add_node(client_node)
        state = State(mode="MANUAL")

        def arming(req: CommandBool.Request, resp: CommandBool.Response) -> CommandBool.Response:
            state.armed = bool(req.value)
            resp.success, resp.result = True, 0
            return resp

        def set_mode(req: SetMode.Request, resp: SetMode.Response) -> SetMode.Response:
            resp.mode_sent = req.custom_mode in ("MANUAL", "STABILIZE", "ALT_HOLD")
            if resp.mode_sent:
                state.mode = req.custom_mode
            return resp

        server.create_service(CommandBool, "/mavros/cmd/arming", arming)
        server.create_service(SetMode, "/mavros/set_mode", set_mode)
        arm = client_node.create_client(CommandBool, "/mavros/cmd/arming")
        mode = client_node.create_client(SetMode, "/mavros/set_mode")
        assert spin_until(executor, lambda: arm.service_is_ready() and mode.service_is_ready())
        future = arm.call_async(CommandBool.Request(value=True))
        assert spin_until(executor, future.done)
        assert future.result().success and state.armed
        bad = mode.call_async(SetMode.Request(custom_mode="WARP_DRIVE"))
        good = mode.call_async(SetMode.Request(custom_mode=State.MODE_APM_COPTER_ALT_HOLD))
        assert spin_until(executor, lambda: bad.done() and good.done())
        assert not bad.result().mode_sent and good.result().mode_sent and state.mode == "ALT_HOLD"


def test_override_reaches_another_process() -> None:
    """A subscriber in a separate Python process (as a user's script would be) receives it."""
    script = textwrap.dedent(
        """
        import rclpy
        from mavros_msgs.msg import OverrideRCIn
        rclpy.init()
        node = rclpy.create_node("remote_listener")
        got = []
        node.create_subscription(OverrideRCIn, "/mavros/rc/override", got.append, 10)
        print("ready", flush=True)
        while not got:
            rclpy.spin_once(node, timeout_sec=0.1)
        print("channels", got[0].channels[:6].tolist(), flush=True)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        with ros_context() as (ctx, executor):
            import rclpy

            node = rclpy.create_node("local_talker", context=ctx)
            executor.add_node(node)
            pub = node.create_publisher(OverrideRCIn, "/mavros/rc/override", 10)
            msg = OverrideRCIn()
            msg.channels[:6] = [1500, 1500, 1400, 1500, 1650, 1500]
            assert spin_until(
                executor, lambda: proc.poll() is not None, timeout=20, every=lambda: pub.publish(msg)
            )
        out, err = proc.communicate(timeout=5)
        assert "channels [1500, 1500, 1400, 1500, 1650, 1500]" in out, err
    finally:
        if proc.poll() is None:
            proc.kill()
