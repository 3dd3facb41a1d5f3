"""Gymnasium environments (``envs``): ``uvms_sim/StationKeeping-v0``, ``uvms_sim/Waypoint-v0``
and ``uvms_sim/DepthHold-v0``, single (``gymnasium.make``) and vectorised over the compiled
batch dynamics (``gymnasium.make_vec``)."""

from __future__ import annotations

import gymnasium

from .envs import TASKS, UvmsEnv, UvmsVectorEnv

IDS = {"station_keeping": "uvms_sim/StationKeeping-v0", "waypoint": "uvms_sim/Waypoint-v0",
       "depth_hold": "uvms_sim/DepthHold-v0"}  # fmt: skip

for _task, _id in IDS.items():
    if _id not in gymnasium.registry:
        gymnasium.register(
            _id,
            entry_point="uvms_sim.gym.envs:UvmsEnv",
            vector_entry_point="uvms_sim.gym.envs:UvmsVectorEnv",
            kwargs={"task": _task},
        )

__all__ = ["IDS", "TASKS", "UvmsEnv", "UvmsVectorEnv"]
