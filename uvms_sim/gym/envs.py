"""Gymnasium environments over the compiled batch dynamics (``dynamics.fast.BatchDynamics``):
``UvmsVectorEnv`` steps N vehicles in one compiled call (not N Python copies), ``UvmsEnv`` is
the single-vehicle ``gymnasium.Env`` on the same code with N = 1.

Any description with a free-floating vehicle and thrusters (its first vehicle is the agent):

- action: one command per thruster, normalised to [-1, 1] (``action_type="normalized"``:
  PWM = 1500 + 400 a) or PWM in microseconds ([1100, 1900], ``"pwm"``), then one effort per
  1-DOF joint (normalised: a fraction of the joint's effort limit, else of 10 N or N m; with
  ``"pwm"``: N or N m). The commands go through
  the description's thruster map (``ThrusterBank.shaft_speeds``) to shaft speeds, held over the
  control step (no spin-up lag).
- observation (float32): the target's position in the body axes (3), the heading error as
  (sin, cos) (2), the world's down axis in the body axes (3: roll and pitch), the body
  velocity (6: u v w p q r), each 1-DOF joint's position and velocity, and the last action.
- control step ``control_dt`` (0.01 s), the dynamics integrated by RK4 in ``substeps`` steps
  within it; episodes truncated after ``max_steps`` control steps.

Tasks (``task``):

- ``station_keeping``: hold the start pose in a water current (``current``, m/s NED; by
  default a horizontal current of up to 0.3 m/s drawn at construction from ``seed`` — the
  current is shared by the whole batch, as the compiled dynamics take one). Reward
  ``-(|e_p| + 0.2 |e_yaw| + 0.01 |a|^2)``; terminated when the vehicle is more than 5 m away.
- ``waypoint``: reach a target drawn within 5 m horizontally and 1 m vertically. Reward
  ``-(|e_p| + 0.01 |a|^2)``, plus 10 and terminated on arrival (within 0.2 m, slower than 0.2
  m/s).
- ``depth_hold``: hold a target depth drawn in 1-10 m, level. Reward ``-(|e_z| + 0.1 (roll^2 +
  pitch^2)^0.5 + 0.01 |a|^2)``; terminated beyond 10 m of depth error.

Every task ends (terminated, reward -100) a vehicle whose state stops being finite (or whose
quaternion loses its norm, below 0.5). Resets put the vehicle at the description's initial
pose, moved by up to 0.5 m and turned by up to pi in yaw. A command that is not a finite
number is taken as neutral (1500 us, zero effort) and reported in ``info["invalid_action"]``;
an action of another shape, or not real numbers (None, a dict, a scalar, complex numbers), is
a ``ValueError``, and the caller's array is never written. The constructor refuses, naming the
argument: ``num_envs`` outside 1..10^6, ``control_dt`` outside (0, 1] s (NaN, infinities),
``substeps`` outside 1..1000, ``max_steps`` below 1, a ``current`` that is not 3 finite numbers
within +-10 m/s, a negative or non-integer ``seed`` (``gym.arguments``); ``reset`` takes no
options (None or ``{}``).
The vector env autoresets as Gymnasium's default (``AutoresetMode.NEXT_STEP``): the step after
an episode ends returns the new episode's first observation, reward 0, and ignores that step's
action for that vehicle.
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from scipy.spatial.transform import Rotation

from ..actuators.bank import thruster_bank
from ..model import load
from ..model.configs import resolve
from ..model.system import System
from ..simulator import fast_dynamics
from . import arguments

TASKS = ("station_keeping", "waypoint", "depth_hold")
PWM_HALF_RANGE = 400.0
FAILED = -100.0
OBS_BOUND = 1.0e4  # every observation is within +-this (m, m/s, rad/s, N, us)


class _Batch:
    """The shared machinery: N copies of the vehicle, their targets, their episodes."""

    def __init__(self, system: System, n: int, task: str, action_type: str, control_dt: float, substeps: int,
                 max_steps: int, current: np.ndarray | None, seed: int | None,
                 observation: str = "truth") -> None:  # fmt: skip
        from ..dynamics.fast import BatchDynamics

        self.observation = observation
        model = system.model
        root = next((i for i, j in enumerate(model.joints) if j.type == "free"), None)
        bank = thruster_bank(system)
        if root is None or bank is None:
            raise ValueError(f"{system.name}: the environments need a free-floating vehicle with thrusters")
        rng = np.random.default_rng(seed)
        if current is None and task == "station_keeping":
            angle, speed = rng.uniform(0, 2 * math.pi), rng.uniform(0.0, 0.3)
            current = np.array([speed * math.cos(angle), speed * math.sin(angle), 0.0])
        env = replace(system.environment, current=np.zeros(3) if current is None else current)
        self.system = replace(system, environment=env)
        self.fast = fast_dynamics(self.system)
        self.batch = BatchDynamics(self.fast, n, self.system.initial_q)
        self.bank = bank
        # the thruster map sampled every 0.25 us of PWM (its law is ThrusterBank.shaft_speeds;
        # evaluating the T200 tables for every vehicle at every step would cost more than the
        # dynamics), interpolated linearly: within 1e-4 of the map's top speed, except in the cells
        # where the map jumps at its deadband edges (there up to 0.4 %)
        self.pwm_grid = np.arange(1500.0 - PWM_HALF_RANGE, 1500.0 + PWM_HALF_RANGE + 0.125, 0.25)
        self.speed_grid = bank.shaft_speeds(np.repeat(self.pwm_grid[:, None], len(bank), axis=1)).T.copy()
        # the grid is uniform: a sample's cell is found by arithmetic (np.interp searches for it,
        # and was half of the env's own time); row k of the flat table starts at k * G
        self._grid_row = (np.arange(len(bank)) * self.pwm_grid.size)[None, :]
        self._flat_grid = self.speed_grid.ravel()
        self.n, self.task, self.action_type = n, task, action_type
        self.control_dt, self.substeps, self.max_steps = control_dt, substeps, max_steps
        self.qs, self.vs = model.q_slice(root), model.v_slice(root)
        self.joints = [i for i, j in enumerate(model.joints) if j.nv == 1]
        self.jq = np.array([model.idx_q[i] for i in self.joints], dtype=int)
        self.jv = np.array([model.idx_v[i] for i in self.joints], dtype=int)
        limits = [model.joints[i].effort_limit for i in self.joints]
        self.effort = np.array([x if np.isfinite(x) else 10.0 for x in limits])
        self.nt, self.nj = len(bank), len(self.joints)
        self.targets = np.zeros((n, 4))  # x y z yaw (NED)
        self.steps = np.zeros(n, dtype=np.int64)
        self.last_action = np.zeros((n, self.nt + self.nj), dtype=np.float32)
        self.invalid = np.zeros(n, dtype=bool)
        self.rng = rng
        self.noise = SensorNoise(system, n, control_dt, seed) if observation == "sensors" else None
        low = -np.ones(self.nt) if action_type == "normalized" else np.full(self.nt, 1500.0 - PWM_HALF_RANGE)
        high = np.ones(self.nt) if action_type == "normalized" else np.full(self.nt, 1500.0 + PWM_HALF_RANGE)
        scale = np.ones(self.nj) if action_type == "normalized" else self.effort  # efforts: of their limit
        self.action_space = spaces.Box(
            np.r_[low, -scale].astype(np.float32), np.r_[high, scale].astype(np.float32)
        )
        size = 14 + 2 * self.nj + self.nt + self.nj
        self.observation_space = spaces.Box(-OBS_BOUND, OBS_BOUND, (size,), np.float32)

    def seed(self, seed: int | None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
            if self.noise is not None:
                self.noise = SensorNoise(self.system, self.n, self.control_dt, seed)

    def reset(self, which: np.ndarray) -> None:
        """New episodes for the vehicles in ``which`` (a boolean mask)."""
        k = int(which.sum())
        if not k:
            return
        rng, b = self.rng, self.batch
        q0 = np.tile(self.system.initial_q, (k, 1))
        q0[:, self.qs.start : self.qs.start + 3] += rng.uniform(-0.5, 0.5, (k, 3))
        yaw = rng.uniform(-math.pi, math.pi, k)
        quat = Rotation.from_euler("z", yaw[:, None]).as_quat(scalar_first=True)
        q0[:, self.qs.start + 3 : self.qs.start + 7] = quat
        b.q[which], b.v[which], b.ok[which] = q0, 0.0, True
        b.n[which] = 0.0
        p = q0[:, self.qs.start : self.qs.start + 3]
        targets = np.column_stack([p, yaw])
        if self.task == "waypoint":
            angle, radius = rng.uniform(0, 2 * math.pi, k), rng.uniform(1.0, 5.0, k)
            targets[:, 0] += radius * np.cos(angle)
            targets[:, 1] += radius * np.sin(angle)
            targets[:, 2] += rng.uniform(-1.0, 1.0, k)
            targets[:, 2] = np.maximum(targets[:, 2], 0.5)
        elif self.task == "depth_hold":
            targets[:, 2] = rng.uniform(1.0, 10.0, k)
        self.targets[which] = targets
        self.steps[which] = 0
        self.last_action[which] = 0.0

    def apply(self, a: np.ndarray) -> None:
        """Set the commands of ``a`` (n x (thrusters + joints), float64, the environment's own
        copy: it is written here)."""
        neutral = 0.0 if self.action_type == "normalized" else 1500.0
        finite = np.isfinite(a)
        self.invalid = (~finite).any(axis=1)  # NaN or inf: that command is neutral (thrusters) or zero
        a[:, : self.nt] = np.where(finite[:, : self.nt], a[:, : self.nt], neutral)
        a[:, self.nt :] = np.where(finite[:, self.nt :], a[:, self.nt :], 0.0)
        a = np.clip(a, self.action_space.low, self.action_space.high)
        pwm = (
            1500.0 + PWM_HALF_RANGE * a[:, : self.nt] if self.action_type == "normalized" else a[:, : self.nt]
        )
        self.batch.n[:] = self.shaft_speeds(pwm)
        if self.nj:
            efforts = a[:, self.nt :] * (self.effort if self.action_type == "normalized" else 1.0)
            self.batch.tau[:, self.jv] = efforts
        self.last_action[:] = a

    def shaft_speeds(self, pwm: np.ndarray) -> np.ndarray:
        """The thruster map at PWM ``pwm`` (N x thrusters), interpolated linearly on the grid."""
        grid = self.pwm_grid
        x = np.clip((pwm - grid[0]) / (grid[1] - grid[0]), 0.0, grid.size - 1.0)  # in grid cells
        i = np.minimum(x.astype(np.int64), grid.size - 2)
        f = x - i
        i += self._grid_row
        table = self._flat_grid
        return table[i] + f * (table[i + 1] - table[i])

    def advance(self) -> None:
        self.batch.step(self.control_dt / self.substeps, self.substeps)
        self.steps += 1

    def observe(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        b = self.batch
        q, v = b.q[:, self.qs], b.v[:, self.vs]
        bad = ~b.ok | ~np.all(np.isfinite(q), axis=1) | ~np.all(np.isfinite(v), axis=1)
        bad |= ~(np.linalg.norm(q[:, 3:7], axis=1) > 0.5)  # no attitude (a unit quaternion's norm is 1)
        q = np.where(bad[:, None], np.tile(self.system.initial_q[self.qs], (self.n, 1)), q)
        v = np.where(bad[:, None], 0.0, v)
        R = Rotation.from_quat(q[:, 3:7], scalar_first=True).as_matrix()  # body -> world
        error = self.targets[:, :3] - q[:, :3]
        body_error = np.einsum("nji,nj->ni", R, error)
        yaw = np.arctan2(R[:, 1, 0], R[:, 0, 0])
        yaw_error = (self.targets[:, 3] - yaw + math.pi) % (2 * math.pi) - math.pi
        down = R[:, 2, :]
        seen_error, seen_v = body_error, v
        if self.noise is not None:  # what the vehicle's sensors would tell it (SensorNoise)
            depth_noise, velocity_noise = self.noise.sample()
            seen_error = body_error + R[:, 2, :] * -depth_noise[:, None]  # a depth error, in body axes
            seen_v = v + velocity_noise
        parts = [seen_error, np.sin(yaw_error)[:, None], np.cos(yaw_error)[:, None], down, seen_v]
        if self.nj:
            parts += [b.q[:, self.jq], b.v[:, self.jv]]
        parts.append(self.last_action)
        obs = np.clip(np.concatenate(parts, axis=1), -OBS_BOUND, OBS_BOUND).astype(np.float32)
        return obs, {
            "position_error": error,
            "yaw_error": yaw_error,
            "down": down,
            "velocity": v,
            "failed": bad,
        }

    def score(self, s: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(reward, terminated, truncated) of the state just observed."""
        distance = np.linalg.norm(s["position_error"], axis=1)
        effort = 0.01 * np.sum(self.last_action[:, : self.nt] ** 2, axis=1)
        if self.action_type == "pwm":
            effort = 0.01 * np.sum(((self.last_action[:, : self.nt] - 1500.0) / PWM_HALF_RANGE) ** 2, axis=1)
        if self.task == "station_keeping":
            reward = -(distance + 0.2 * np.abs(s["yaw_error"]) + effort)
            terminated = distance > 5.0
        elif self.task == "waypoint":
            arrived = (distance < 0.2) & (np.linalg.norm(s["velocity"][:, :3], axis=1) < 0.2)
            reward = -(distance + effort) + 10.0 * arrived
            terminated = arrived
        else:
            depth_error = np.abs(s["position_error"][:, 2])
            tilt = np.sqrt(s["down"][:, 0] ** 2 + s["down"][:, 1] ** 2)
            reward = -(depth_error + 0.1 * tilt + effort)
            terminated = depth_error > 10.0
        failed = s["failed"]
        reward = np.where(failed, FAILED, reward)
        terminated = terminated | failed
        truncated = (self.steps >= self.max_steps) & ~terminated
        return reward.astype(np.float64), terminated, truncated


class SensorNoise:
    """The errors of what the vehicle's sensors say about the observed state, per control step
    (``observation="sensors"``), from the first vehicle's declared sensors (or the defaults of
    ``model.sensor_specs``): the DVL's velocity error (its beams' white noise through their
    geometry, ``sensors.acoustic.Dvl``), the gyroscope's (white noise, bias instability and
    random walk, ``sensors.noise.InertialNoise``) and the pressure sensor's depth error. The
    target's horizontal position and the attitude stay exact (a positioning system and an AHRS)."""

    def __init__(self, system: System, n: int, dt: float, seed: int | None) -> None:
        from ..model.sensor_specs import SensorSpec
        from ..sensors.acoustic import Dvl
        from ..sensors.mount import Mount
        from ..sensors.noise import InertialNoise

        declared = {s.type: s for s in system.vehicles[0].sensors} if system.vehicles else {}

        def spec(kind: str) -> SensorSpec:
            return declared.get(kind) or SensorSpec(kind, kind, "")

        rng = np.random.default_rng([0 if seed is None else seed, 7])
        imu = spec("imu")
        v = imu.value
        self.gyro = InertialNoise(1.0 / dt, v("gyro_noise_density"), v("gyro_bias_instability"),
                                  v("gyro_random_walk"), v("bias_correlation_time"), rng, 3 * n)  # fmt: skip
        dvl = Dvl(spec("dvl"), Mount.of(spec("dvl"), 0), rng)
        beams = dvl.beams
        self.velocity_sigma = dvl.sigma * np.sqrt(np.diag(np.linalg.inv(beams.T @ beams)))
        pressure = spec("pressure")
        env = system.environment
        self.depth_sigma = math.sqrt(
            pressure.value("noise") ** 2 + pressure.value("resolution") ** 2 / 12.0
        ) / (env.density * env.gravity)
        self.rng, self.n = rng, n

    def sample(self) -> tuple[np.ndarray, np.ndarray]:
        """(depth error (n), body velocity error (n x 6))."""
        linear = self.velocity_sigma * self.rng.standard_normal((self.n, 3))
        angular = self.gyro.sample().reshape(self.n, 3)
        return self.depth_sigma * self.rng.standard_normal(self.n), np.hstack([linear, angular])


def _batch(description: Any, n: int, task: Any, action_type: Any, control_dt: Any, substeps: Any,
           max_steps: Any, current: Any, seed: Any, observation: Any) -> _Batch:  # fmt: skip
    """The batch of an env's arguments, each checked (``arguments``) before anything is loaded."""
    control_dt = arguments.time_step("control_dt", control_dt)
    substeps = arguments.integer("substeps", substeps, 1, arguments.MAX_SUBSTEPS)
    max_steps = arguments.integer("max_steps", max_steps, 1, arguments.MAX_STEPS)
    current = arguments.current(current)
    seed = arguments.seed("seed", seed)
    for name, value, allowed in (("task", task, TASKS), ("action_type", action_type, ("normalized", "pwm")),
                                 ("observation", observation, ("truth", "sensors"))):  # fmt: skip
        if not isinstance(value, str) or value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    if not isinstance(description, (str, os.PathLike)):
        raise ValueError(f"description must be a file or a shipped name, got {description!r}")
    system = load(resolve(description if isinstance(description, str) else Path(description)))
    return _Batch(system, n, task, action_type, control_dt, substeps, max_steps, current, seed, observation)


class UvmsVectorEnv(VectorEnv):
    """N vehicles in one compiled batch (module doc)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012 (as Gymnasium declares it)

    def __init__(self, num_envs: int = 64, description: str = "bluerov2_heavy", task: str = "station_keeping",
                 action_type: str = "normalized", control_dt: float = 0.01, substeps: int = 1,
                 max_steps: int = 2000, current=None, seed: int | None = None,
                 observation: str = "truth") -> None:  # fmt: skip
        num_envs = arguments.integer("num_envs", num_envs, 1, arguments.MAX_ENVS)
        self.core = _batch(description, num_envs, task, action_type, control_dt, substeps, max_steps, current,
                           seed, observation)  # fmt: skip
        self.num_envs = num_envs
        self.single_action_space = self.core.action_space
        self.single_observation_space = self.core.observation_space
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self._needs_reset = np.zeros(num_envs, dtype=bool)
        self._what = f"{num_envs} rows of {arguments.describe_action(self.core.nt, self.core.nj)}"

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        seed = arguments.seed("seed", seed)
        arguments.options(options)
        super().reset(seed=seed)
        self.core.seed(seed)
        self.core.reset(np.ones(self.num_envs, dtype=bool))
        self._needs_reset[:] = False
        obs, _ = self.core.observe()
        return obs, {}

    def step(self, actions):
        core = self.core
        restart = self._needs_reset.copy()
        core.apply(arguments.actions(actions, self.action_space.shape, self._what))
        core.advance()
        core.reset(restart)  # the vehicles whose episode ended last step begin a new one
        obs, state = core.observe()
        reward, terminated, truncated = core.score(state)
        reward[restart], terminated[restart], truncated[restart] = 0.0, False, False
        self._needs_reset = terminated | truncated
        return obs, reward, terminated, truncated, {"invalid_action": core.invalid.copy()}


class UvmsEnv(gym.Env):
    """One vehicle (module doc), on the batch code with N = 1."""

    metadata = {"render_modes": []}  # noqa: RUF012 (as Gymnasium declares it)

    def __init__(self, description: str = "bluerov2_heavy", task: str = "station_keeping",
                 action_type: str = "normalized", control_dt: float = 0.01, substeps: int = 1,
                 max_steps: int = 2000, current=None, seed: int | None = None,
                 observation: str = "truth") -> None:  # fmt: skip
        self.core = _batch(description, 1, task, action_type, control_dt, substeps, max_steps, current, seed,
                           observation)  # fmt: skip
        self.action_space = self.core.action_space
        self.observation_space = self.core.observation_space
        self._what = arguments.describe_action(self.core.nt, self.core.nj)

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        seed = arguments.seed("seed", seed)
        arguments.options(options)
        super().reset(seed=seed)
        self.core.seed(seed)
        self.core.reset(np.ones(1, dtype=bool))
        obs, _ = self.core.observe()
        return obs[0], {}

    def step(self, action):
        core = self.core
        core.apply(arguments.actions(action, self.action_space.shape, self._what)[None, :])
        core.advance()
        obs, state = core.observe()
        reward, terminated, truncated = core.score(state)
        return (
            obs[0],
            float(reward[0]),
            bool(terminated[0]),
            bool(truncated[0]),
            {"invalid_action": bool(core.invalid[0])},
        )
