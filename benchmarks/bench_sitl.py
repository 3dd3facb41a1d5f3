"""Lock-step speed of the ArduPilot SITL JSON backend: standalone (``uvms-sim sitl``) and
through the ROS node (``sitl_port``), against a peer process that sends the packets SITL
sends and parses the answers as SIM_JSON.cpp does (``uvms_sim.hil.sitl_peer``); and two such
peers flying the connected pair of Nielsen et al. (2018) on one physics in lock-step
(``uvms_sim.hil.sitl_multi``).

The peer runs in its own process (as SITL does), one frame at a time: servo datagram out,
wait for the answer, parse it. The real-time factor is simulated seconds per wall second at
the given SITL frame rate (ArduSub's default 1200 Hz); the backend's per-frame time is split
into receive (waiting for and reading the datagram), physics (stepping) and reply (the
sensor accelerations, the JSON text, sending it). The peer scans every answer key by key as
SIM_JSON.cpp does during a warm-up, then every 50th (the others are received and framed,
their timestamp read): SITL scans in C in microseconds, this peer through ctypes in about
100 us, which would otherwise be most of the measured time.

Run: ``.venv/bin/python benchmarks/bench_sitl.py [--frames N] [--rate HZ]`` (part of ``make bench``).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))  # net_helpers
from net_helpers import free_udp_port

HEAVY_DOWN = [1500] * 4 + [1600] * 4


def peer(port: int, rate: int, frames: int, out, pwm: list[int] | None = None) -> None:
    """The SITL side in its own process: ``frames`` lock-step updates; sends back the wall
    time of the last ``frames - warm`` of them."""
    from uvms_sim.hil.sitl_peer import SimJsonPeer

    p = SimJsonPeer(("127.0.0.1", port), rate_hz=rate)
    pwm = pwm or HEAVY_DOWN
    warm = min(frames // 5, 2 * rate)
    for _ in range(warm):  # every answer scanned as SIM_JSON.cpp does
        p.update(pwm)
    p.check_every = 50  # then every 50th: SITL scans in C in microseconds, this peer in ~100 us
    t0 = time.perf_counter()
    for _ in range(frames - warm):
        p.update(pwm)
    out.send((time.perf_counter() - t0, frames - warm, p.parsed, p.resends, p.messages[1:]))
    p.close()


def standalone(rate: int, frames: int) -> None:
    from uvms_sim.hil.sitl_json import SitlJsonBackend
    from uvms_sim.model import load
    from uvms_sim.model.configs import resolve
    from uvms_sim.simulator import Simulator

    backend = SitlJsonBackend(Simulator.from_system(load(resolve("bluerov2_heavy"))), port=0)
    ctx = mp.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=peer, args=(backend.port, rate, frames, send))
    proc.start()
    k = 0
    while True:  # as ``uvms-sim sitl`` serves; the pipe is looked at only now and then
        if not backend.serve_once(0.1) or (k := k + 1) % 1024 == 0:
            if recv.poll() or not proc.is_alive():
                break
    wall, n, parsed, resends, said = recv.recv()
    proc.join()
    split = backend.times.split()
    backend.close()
    rtf = n / rate / wall
    print(f"standalone backend, BlueROV2 Heavy, {rate} Hz: {rtf:.2f}x real time "
          f"({1e6 * wall / n:.0f} us per frame, {parsed} parsed, {resends} resends, "
          f"messages {said})")  # fmt: skip
    print("  backend per frame: " + ", ".join(f"{k} {v:.1f} us" for k, v in split.items()))


PAIR_DOWN = [1500] * 4 + [1400, 1500]  # bluerov1: motor 5 vertical, pushing down


def pair(rate: int, frames: int) -> None:
    """Two SITL instances (two peer processes) flying Nielsen et al.'s connected pair on one
    physics in lock-step (``uvms_sim.hil.sitl_multi``): the physics steps once per frame of
    both; the real-time factor is that of the slower peer."""
    from uvms_sim.hil.sitl_multi import SitlJsonMulti
    from uvms_sim.model import load
    from uvms_sim.model.configs import resolve
    from uvms_sim.simulator import Simulator

    backend = SitlJsonMulti(Simulator.from_system(load(resolve("bluerov1_pair"))), port=0)
    ctx = mp.get_context("spawn")
    pipes, procs = [], []
    for port in backend.ports:
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=peer, args=(port, rate, frames, send, PAIR_DOWN))
        proc.start()
        pipes.append(recv)
        procs.append(proc)
    k = 0
    while True:
        if not backend.serve_once(0.1) or (k := k + 1) % 1024 == 0:
            if all(r.poll() for r in pipes) or not any(p.is_alive() for p in procs):
                break
    results = [r.recv() for r in pipes]
    for proc in procs:
        proc.join()
    split = backend.times.split()
    c = backend.counters
    backend.close()
    wall = max(r[0] for r in results)
    n = results[0][1]
    print(f"two SITL instances, connected pair (Nielsen et al. 2018), {rate} Hz: {n / rate / wall:.2f}x real "
          f"time ({1e6 * wall / n:.0f} us per frame, physics steps {backend.times.frames}, "
          f"resends {c.resends}, lost {c.lost}, messages {[r[4] for r in results]})")  # fmt: skip
    print("  backend per step: " + ", ".join(f"{k} {v:.1f} us" for k, v in split.items()))


def through_node(rate: int, frames: int) -> None:
    port = free_udp_port()
    cmd = [sys.executable, "-m", "uvms_sim.ros.node", "--ros-args", "-p", "description:=bluerov2_heavy",
           "-p", f"sitl_port:={port}", "-p", "use_sim_time:=true"]  # fmt: skip
    node = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ctx = mp.get_context("spawn")
        recv, send = ctx.Pipe(duplex=False)
        time.sleep(3.0)  # the node loads and binds
        proc = ctx.Process(target=peer, args=(port, rate, frames, send))
        proc.start()
        proc.join(timeout=600)
        wall, n, _, resends, said = recv.recv()
        rtf = n / rate / wall
        print(f"through the ROS node (its own process, use_sim_time, 50 Hz publishing), {rate} Hz: "
              f"{rtf:.2f}x real time ({1e6 * wall / n:.0f} us per frame, {resends} resends, "
              f"messages {said})")  # fmt: skip
    finally:
        node.terminate()
        node.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=24000, help="frames per measurement (default 24000)")
    ap.add_argument("--rate", type=int, default=1200, help="SITL frame rate, Hz (ArduSub's default 1200)")
    args = ap.parse_args()
    print(f"cores: {os.cpu_count()}")
    standalone(args.rate, args.frames)
    pair(args.rate, args.frames)
    through_node(args.rate, args.frames)


if __name__ == "__main__":
    main()
