"""How live the browser view is: the lag of Rerun's web viewer behind the simulation.

The ``simulator`` node (its own process, the BlueROV2 Heavy, thrusters driven so that it moves,
1 kHz physics, paced at real-time factor 1, simulated time on /clock) serves the browser view;
a headless Debian Chromium (software WebGL, as ``test/browser.py`` opens it) shows the page.
Every 2 s the newest simulated time the viewer has taken in (its own state,
``window._handle.viewer_state()``: what Rerun's latency counter also measures) is compared with
the node's simulated time at the moment the page read it (the page's ``Date.now()``, between two
/clock samples taken around the query and stamped with the same wall clock): at real-time factor
1 the difference is the view's latency in seconds (/clock samples are stamped when received: a
millisecond or so late, which the lag loses). The query waits for the page's main thread
(a script waits behind the viewer's software-rendered frames, a second or more): that wait
is printed too, and not counted as lag (until 2026-11-26 it was, docs/views.md). Two cases: a
browser open from the start, and a browser that opens the page after the node has run
``--late`` seconds (what it takes to catch up). Also printed: the node's real-time factor and
CPU while the browser shows it.

Run: ``.venv/bin/python benchmarks/bench_view.py [--seconds S] [--late L]`` (part of
``make bench``; needs ``make browser``).
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))  # browser, net_helpers

import rclpy
from bench_node import cpu_seconds
from rosgraph_msgs.msg import Clock
from std_msgs.msg import UInt16MultiArray

# forward and turning (vectored_6dof servo order: the horizontal four, then the vertical four)
PWM = [1650, 1600, 1400, 1350, 1500, 1500, 1500, 1500]


def clock_sample(node, timeout: float = 10.0) -> tuple[float, float]:
    """(the node's simulated time, the wall-clock time, s since the epoch, at which this process
    received it) of the next /clock message."""
    got: list[tuple[float, float]] = []
    sub = node.create_subscription(
        Clock, "/clock", lambda m: got.append((m.clock.sec + m.clock.nanosec * 1e-9, time.time())), 10
    )
    try:
        end = time.monotonic() + timeout
        while not got and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.02)
        return got[0]
    finally:
        node.destroy_subscription(sub)


def sim_now(node, timeout: float = 10.0) -> float:
    """The node's simulated time now (the next /clock message)."""
    return clock_sample(node, timeout)[0]


def run(node, seconds: float, late: float) -> None:
    from browser import CHROMIUM, DRIVER, headless_chromium, viewer_lag
    from net_helpers import free_tcp_port_pair

    port = free_tcp_port_pair()
    cmd = [
        sys.executable, "-m", "uvms_sim.ros.node", "--ros-args", "-p", "description:=bluerov2_heavy",
        "-p", "ardusub_frame:=none", "-p", "use_sim_time:=true", "-p", "real_time_factor:=1.0",
        "-p", "physics_rate:=1000.0", "-p", f"web_view_port:={port}", "-p", "command_timeout:=5.0",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pwm = node.create_publisher(UInt16MultiArray, "thrusters/pwm", 10)
    browser = None
    try:
        t_start = sim_now(node, 120.0)
        wait = time.monotonic() + late
        while time.monotonic() < wait:
            pwm.publish(UInt16MultiArray(data=PWM))
            rclpy.spin_once(node, timeout_sec=0.5)
        if not (CHROMIUM and DRIVER):
            print("  no chromium here (make browser): not measured")
            return
        label = f"browser opened after {late:g} s" if late else "browser open from the start"
        opened = time.monotonic()
        browser = headless_chromium(f"http://127.0.0.1:{port}/")
        browser.command_executor._client_config.timeout = 600  # a loaded machine compiles slowly
        t0, c0, s0 = time.monotonic(), cpu_seconds(proc.pid), sim_now(node)
        first, lags, waits = None, [], []
        while time.monotonic() < t0 + seconds:
            pwm.publish(UInt16MultiArray(data=PWM))
            lag, wait = viewer_lag(browser, lambda: clock_sample(node))
            if lag is not None:
                first = first if first is not None else time.monotonic() - opened
                lags.append((time.monotonic() - opened, lag))
                waits.append(wait)
            time.sleep(max(0.0, 2.0 - (time.monotonic() - t0) % 2.0))
        wall, cpu, sim = time.monotonic() - t0, cpu_seconds(proc.pid) - c0, sim_now(node) - s0
        print(f"  {label} (the node had simulated {s0 - t_start:.0f} s):")
        if not lags:
            print("    the viewer showed nothing")
            return
        print(f"    first frame {first:.1f} s after opening the page; latency (s) at ", end="")
        print(", ".join(f"{t:.0f} s: {lag:.2f}" for t, lag in lags[:: max(1, len(lags) // 8)]))
        steady = [lag for t, lag in lags if t - lags[0][0] > 10.0] or [lags[-1][1]]
        median = sorted(steady)[len(steady) // 2]
        print(f"    after its first 10 s: median {median:.2f} s, max {max(steady):.2f} s")
        waits.sort()
        print(
            f"    the page's main thread answered the query after {waits[len(waits) // 2]:.2f} s (median; "
            f"max {waits[-1]:.2f} s): a script waits behind the viewer's frames; not lag"
        )
        print(f"    node: real-time factor {sim / wall:.2f}, CPU {100 * cpu / wall:.0f} % of one core")
    finally:
        if browser is not None:
            browser.quit()
        node.destroy_publisher(pwm)
        proc.terminate()
        proc.wait(timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--late", type=float, default=40.0)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # quit the browser and the node on a kill
    rclpy.init()
    node = rclpy.create_node("bench_view")
    print("browser view: Heavy at 1 kHz physics, real-time factor 1, headless Chromium (software WebGL)")
    run(node, args.seconds, 0.0)
    run(node, args.seconds, args.late)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
