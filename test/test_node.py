"""The simulator node over real DDS: command in, motion out with REP-103 signs; bad input survives."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from ros_helpers import ros_context, spin_until
from tf2_msgs.msg import TFMessage

from uvms_sim.ros.node import SimulatorNode

pytestmark = pytest.mark.ros


def test_forward_wrench_moves_base_link_forward_and_nan_is_rejected() -> None:
    with ros_context() as (ctx, executor):
        import rclpy
        from rclpy.parameter import Parameter

        sim = SimulatorNode(
            context=ctx,
            parameter_overrides=[
                Parameter("real_time_factor", value=2.0),
                Parameter("physics_rate", value=200.0),
                Parameter("command_timeout", value=2.0),
            ],
        )
        # the simulator spins in its own executor thread, as it would in its own process
        sim_executor = SingleThreadedExecutor(context=ctx)
        sim_executor.add_node(sim)
        spinner = threading.Thread(target=sim_executor.spin, daemon=True)
        spinner.start()
        user = rclpy.create_node("user", context=ctx)
        executor.add_node(user)
        odoms: list[Odometry] = []
        tfs: list[TFMessage] = []
        user.create_subscription(Odometry, "odom", odoms.append, 50)
        user.create_subscription(TFMessage, "/tf", tfs.append, 50)
        pub = user.create_publisher(WrenchStamped, "cmd_wrench", 10)
        bad = WrenchStamped()
        bad.wrench.force.x = float("nan")
        good = WrenchStamped()
        good.wrench.force.x = 20.0

        def publish() -> None:
            pub.publish(bad)
            pub.publish(good)

        # wait for discovery both ways, then drive for 3 s of simulated time
        assert spin_until(
            executor, lambda: pub.get_subscription_count() > 0 and len(odoms) > 0 and len(tfs) > 0
        )
        start = odoms[-1].pose.pose.position.y

        def moved() -> bool:
            return odoms[-1].pose.pose.position.y - start > 0.5

        # heading north (NED x) at start: forward is +y in ENU odom, +x in FLU base_link
        assert spin_until(executor, moved, every=publish, timeout=30)
        last = odoms[-1]
        assert abs(last.pose.pose.position.x) < 0.05
        assert last.twist.twist.linear.x > 0.1  # forward in FLU (the Munk moment pitches it at speed)
        assert last.header.frame_id == "odom" and last.child_frame_id == "base_link"
        tf = tfs[-1].transforms[0]
        assert (tf.header.frame_id, tf.child_frame_id) == ("odom", "base_link")
        assert np.all(np.isfinite(sim.sim.state.q))  # no NaN reached the state
        sim_executor.shutdown()
        sim.destroy_node()
