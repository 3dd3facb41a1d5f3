"""Throughput of the Gymnasium vector env against the raw batch dynamics it runs on.

The vector env (``uvms_sim.gym.UvmsVectorEnv``, station keeping, BlueROV2 Heavy, 10 ms control
step, one RK4 step inside) at N = 1024 and 4096, random actions: environment steps per second
(N x control steps / wall time), beside the raw ``BatchDynamics.step`` at the same N and step.

Run: ``.venv/bin/python benchmarks/bench_gym.py [--seconds S]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from uvms_sim.gym import UvmsVectorEnv


def env_rate(n: int, seconds: float) -> float:
    env = UvmsVectorEnv(num_envs=n, seed=0)
    env.reset(seed=0)
    actions = (
        np.random.default_rng(0).uniform(-1, 1, (64, n, env.single_action_space.shape[0])).astype(np.float32)
    )
    env.step(actions[0])  # compiled code warm
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.step(actions[steps % 64])
        steps += 1
    return n * steps / (time.perf_counter() - t0)


def raw_rate(n: int, seconds: float) -> float:
    env = UvmsVectorEnv(num_envs=n, seed=0)
    env.reset(seed=0)
    batch = env.core.batch
    batch.n[:] = 20.0
    batch.step(0.01)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        batch.step(0.01)
        steps += 1
    return n * steps / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    print("vector env (station keeping, BlueROV2 Heavy, 10 ms control step, RK4) against the raw batch")
    for n in (1024, 4096):
        env, raw = env_rate(n, args.seconds), raw_rate(n, args.seconds)
        ratio = raw / env
        print(
            f"  N = {n:5d}: env {env:10,.0f} steps/s, raw batch {raw:10,.0f} steps/s ({ratio:.2f}x the env)"
        )


if __name__ == "__main__":
    main()
