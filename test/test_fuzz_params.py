"""The simulator node's parameters set at run time by a hostile user, over real DDS through
rclpy's parameter services (what ``ros2 param set`` and ``ros2 param load`` use): 1000 *
``FUZZ_SCALE`` sets of one to three parameters, one by one or atomically, of every name the
node declares (and ``use_sim_time``, a tether's reel, names it does not have), with values of
every type and out of every range. What must hold: each answer is a result, success or a
refusal with a reason; a refused atomic set changes nothing; what the node reports is what it
applies (the thrusters' supply voltage is the parameter's, or the description's for 0); the
parameters read at start never change; the node keeps stepping and its odometry stays finite."""

from __future__ import annotations

import math
import os

import numpy as np
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from ros_helpers import simulator, spin_until

from uvms_sim.ros.parameters import PARAMETERS

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
VALUES = [0, -1, 1, 12, 16.0, 20.0, 20.000001, 9.99, 10.0, 0.0, -0.0, 1e-320, 1e308, -1e308, 2**62,
          math.nan, math.inf, -math.inf, True, False, "", "12", "bad name!", "odom", "map", [1.0, 2.0, 3.0],
          [0.0], ["a"], [True], None, 500.0, 1000]  # fmt: skip
NAMES = [*PARAMETERS, "use_sim_time", "battery_voltage", "battery_voltage", "no_such_parameter",
         "tethers.tether.length"]  # fmt: skip


def test_run_time_parameter_sets_are_applied_whole_refused_whole_and_reported_as_applied():
    rng = np.random.default_rng(41)
    with simulator(description="bluerov2_heavy", ardusub_frame="none", command_timeout=5.0,
                   real_time_factor=1.0) as (sim, user, executor):  # fmt: skip
        odoms: list[Odometry] = []
        user.create_subscription(Odometry, "odom", odoms.append, 10)
        client = AsyncParameterClient(user, "simulator")
        assert client.wait_for_services(5.0)
        bank = sim.sim.thrusters
        description_voltage = float(np.nanmax(bank.voltage))
        start_only = {n: sim.get_parameter(n).value for n in PARAMETERS if n != "battery_voltage"}
        start_only["use_sim_time"] = sim.get_parameter("use_sim_time").value
        counts = {"accepted": 0, "refused": 0}
        for k in range(1000 * SCALE):
            params = []
            for _ in range(int(rng.integers(1, 4))):
                name = NAMES[int(rng.integers(len(NAMES)))]
                value = VALUES[int(rng.integers(len(VALUES)))]
                try:
                    params.append(Parameter(name, value=value))
                except (TypeError, ValueError):  # rclpy has no parameter type for it
                    counts["refused"] += 1
            if rng.random() < 0.3:  # a good voltage, alone or in the set: the accepted path too
                good = Parameter("battery_voltage", value=float(rng.choice([0.0, 10.0, 12.5, 16.0, 20.0])))
                params = [good] if rng.random() < 0.5 else [*params, good]
            if not params:
                continue
            before = sim.get_parameter("battery_voltage").value
            atomic = bool(k % 2)
            future = client.set_parameters_atomically(params) if atomic else client.set_parameters(params)
            assert spin_until(executor, future.done, timeout=10.0), params
            response = future.result()
            results = [response.result] if atomic else list(response.results)
            for r in results:
                assert r.successful or r.reason, params
                counts["accepted" if r.successful else "refused"] += 1
            after = sim.get_parameter("battery_voltage").value
            if atomic and not results[0].successful:
                assert after == before, params
            expected = description_voltage if after == 0 else after
            assert float(np.nanmax(bank.voltage)) == expected == float(np.nanmin(bank.voltage)), params
            for name, value in start_only.items():
                assert sim.get_parameter(name).value == value, (name, params)
        n0 = len(odoms)
        assert spin_until(executor, lambda: len(odoms) > n0 + 10, timeout=20.0)
        assert sim.thread.is_alive() and sim.failed is None
        for o in odoms:
            p, v = o.pose.pose.position, o.twist.twist.linear
            assert np.all(np.isfinite([p.x, p.y, p.z, v.x, v.y, v.z]))
        assert counts["accepted"] > 100 * SCALE and counts["refused"] > 500 * SCALE, counts
        print(f"run-time parameters: {1000 * SCALE} sets, {sum(counts.values())} parameters, {counts}")
