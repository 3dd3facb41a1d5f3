"""The Gymnasium environments: Gymnasium's own checker, the vector env's batching, seeding and
autoreset as Gymnasium defines them, the dynamics equal to the simulator's, and each task's
reward and termination."""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from uvms_sim.gym import IDS, TASKS, UvmsEnv, UvmsVectorEnv
from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.simulator import Simulator


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("description", ["bluerov2", "bluerov2_heavy", "bluerov2_light_arm"])
def test_gymnasium_checks_every_task_and_description(task, description):
    """``check_env`` (spaces, reset and step types, seeding determinism, data not reused) for
    each task, on the BlueROV2, the Heavy and the BlueROV2 with its arm (joint efforts in the
    action, joint positions and velocities in the observation)."""
    env = UvmsEnv(description=description, task=task, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checker warning is a failure here
        check_env(env, skip_render_check=True)
    nj = 4 if description == "bluerov2_light_arm" else 0
    assert env.action_space.shape == ({"bluerov2": 6, "bluerov2_heavy": 8}.get(description, 6) + nj,)


def test_the_vector_env_batches_seeds_and_autoresets_as_gymnasium_defines():
    """``gymnasium.make_vec`` gives the batch env; the same seed gives the same observations
    and the same trajectory; every observation is in the space; a vehicle whose episode ends
    (here: pushed more than 5 m off station) comes back at the next step with reward 0 and
    its new episode's first observation (AutoresetMode.NEXT_STEP), while the others go on."""
    env = gym.make_vec(IDS["station_keeping"], num_envs=6, vectorization_mode="vector_entry_point")
    assert isinstance(env.unwrapped, UvmsVectorEnv)
    assert env.unwrapped.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    actions = np.random.default_rng(3).uniform(-1, 1, (20, *env.action_space.shape)).astype(np.float32)
    runs = []
    for _ in range(2):
        obs, _ = env.reset(seed=42)
        trajectory = [obs]
        for a in actions:
            obs, reward, _, _, _ = env.step(a)
            assert env.observation_space.contains(obs) and reward.shape == (6,)
            trajectory.append(obs)
        runs.append(np.array(trajectory))
    np.testing.assert_array_equal(runs[0], runs[1])
    core = env.unwrapped.core
    env.reset(seed=42)
    start = core.batch.q.copy()
    env.reset(seed=43)  # another seed: other start poses (the first observation of station keeping
    assert not np.array_equal(core.batch.q, start)  # is the same for every start: on station, at rest)
    core.batch.q[2, core.qs.start] += 10.0  # vehicle 2 off station
    obs, reward, terminated, truncated, _ = env.step(actions[0])
    assert terminated[2] and not terminated[[0, 1, 3, 4, 5]].any()
    before = core.batch.q[0].copy()
    obs, reward, terminated, truncated, _ = env.step(actions[1])
    assert reward[2] == 0.0 and not terminated[2] and not truncated[2]
    assert np.linalg.norm(obs[2, :3]) < 2.0  # a new episode: back near its station
    assert not np.array_equal(core.batch.q[0], before)  # the others stepped on
    env.close()


def test_episodes_are_truncated_at_max_steps():
    env = UvmsVectorEnv(num_envs=3, task="depth_hold", max_steps=5, seed=1)
    env.reset(seed=1)
    zero = np.zeros(env.action_space.shape, dtype=np.float32)
    flags = [env.step(zero)[3] for _ in range(5)]
    assert not any(f.any() for f in flags[:4]) and flags[4].all()


def test_the_env_steps_the_same_dynamics_as_the_simulator():
    """A constant command (on the thruster map's sample grid, so that no interpolation enters)
    for 1 s: the env's vehicle and a ``Simulator`` of the same description (RK4, 10 ms steps,
    the same shaft speeds) end in the same state to 1e-9."""
    env = UvmsEnv(description="bluerov2_heavy", task="station_keeping", current=[0.2, -0.1, 0.0], seed=5)
    env.reset(seed=5)
    core = env.core
    q0, v0 = core.batch.q[0].copy(), core.batch.v[0].copy()
    action = np.array([0.25, -0.5, 0.125, 0.0, 0.75, -0.25, 0.5, -1.0], dtype=np.float32)
    system = core.system
    sim = Simulator.from_system(system)
    sim.reset(q0, v0)
    sim.thrusters.set_pwm(1500.0 + 400.0 * action.astype(float))
    sim.thrusters.n[:] = sim.thrusters.shaft_speed_targets()
    for _ in range(100):
        env.step(action)
        sim.thrusters.n[:] = sim.thrusters.shaft_speed_targets()
        sim.step(0.01)
    np.testing.assert_allclose(core.batch.q[0], sim.state.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(core.batch.v[0], sim.state.v, rtol=0, atol=1e-9)


def test_the_thruster_map_lookup_is_the_linear_interpolation_of_its_grid():
    """The env's thruster map (a uniform grid of the bank's map, looked up by arithmetic) equals
    numpy's linear interpolation of the same grid, to rounding, at random commands, at the grid
    points, and clamped outside the PWM range."""
    env = UvmsVectorEnv(num_envs=4, description="bluerov2_heavy", seed=0)
    core = env.core
    grid, table = core.pwm_grid, core.speed_grid
    rng = np.random.default_rng(7)
    pwm = rng.uniform(grid[0], grid[-1], (500, core.nt))
    pwm[:8] = grid[rng.integers(0, grid.size, (8, core.nt))]
    pwm[8], pwm[9] = grid[0] - 50.0, grid[-1] + 50.0
    looked_up = core.shaft_speeds(pwm)
    expected = np.column_stack([np.interp(pwm[:, k], grid, table[k]) for k in range(core.nt)])
    scale = np.abs(table).max()
    np.testing.assert_allclose(looked_up, expected, rtol=0, atol=1e-12 * scale)


def test_task_rewards_and_terminations():
    """Waypoint: at the target and at rest, +10 and terminated; depth hold: the reward is minus
    the depth error (level, no effort); a non-finite command is neutral and reported; a state
    that stops being finite (or a zero quaternion) ends the episode with -100."""
    env = UvmsVectorEnv(num_envs=2, task="waypoint", seed=2)
    env.reset(seed=2)
    core = env.core
    core.batch.q[0, :3] = core.targets[0, :3]
    core.batch.v[0] = 0.0
    zero = np.zeros(env.action_space.shape, dtype=np.float32)
    obs, reward, terminated, _, _ = env.step(zero)
    assert terminated[0] and reward[0] > 9.0 and not terminated[1]
    hold = UvmsEnv(task="depth_hold", seed=4)
    hold.reset(seed=4)
    target = hold.core.targets[0, 2]
    obs, reward, *_ = hold.step(np.zeros(hold.action_space.shape, dtype=np.float32))
    depth = hold.core.batch.q[0, hold.core.qs.start + 2]
    down = obs[5:8]
    assert reward == pytest.approx(-(abs(target - depth) + 0.1 * math.hypot(down[0], down[1])), rel=1e-5)
    bad = np.full(hold.action_space.shape, np.nan, dtype=np.float32)
    obs, reward, terminated, _, info = hold.step(bad)
    assert info["invalid_action"] and np.all(np.isfinite(obs)) and not terminated
    hold.core.batch.ok[0] = False
    obs, reward, terminated, *_ = hold.step(np.zeros(hold.action_space.shape, dtype=np.float32))
    assert terminated and reward == -100.0 and np.all(np.isfinite(obs))
    env.reset(seed=2)
    core.batch.q[1, core.qs.start + 3 : core.qs.start + 7] = 0.0  # finite, but no attitude
    obs, state = core.observe()
    assert state["failed"][1] and not state["failed"][0] and np.all(np.isfinite(obs))


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="task must be one of"):
        UvmsEnv(task="dance")
    with pytest.raises(ValueError, match="action_type"):
        UvmsEnv(action_type="volts")
    with pytest.raises(ValueError, match="free-floating vehicle with thrusters"):
        UvmsEnv(description=str(resolve("walker")))
    assert load(resolve("bluerov2")).thrusters
    for kwargs, name in (
        ({"control_dt": 0.0}, "control_dt"), ({"control_dt": math.nan}, "control_dt"),
        ({"control_dt": math.inf}, "control_dt"), ({"control_dt": -0.01}, "control_dt"),
        ({"substeps": 0}, "substeps"), ({"substeps": 1.5}, "substeps"), ({"max_steps": 0}, "max_steps"),
        ({"current": [math.nan, 0.0, 0.0]}, "current"), ({"current": [0.1, 0.2]}, "current"),
        ({"current": [100.0, 0.0, 0.0]}, "current"), ({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"),
        ({"description": None}, "description"),
    ):  # fmt: skip
        with pytest.raises(ValueError, match=name):
            UvmsEnv(**kwargs)
        if "description" not in kwargs:
            with pytest.raises(ValueError, match=name):
                UvmsVectorEnv(num_envs=2, **kwargs)
    for n in (0, -3, 2.0, True, 10**7):
        with pytest.raises(ValueError, match="num_envs"):
            UvmsVectorEnv(num_envs=n)
    env = UvmsEnv(seed=0)
    for seed in (-1, 0.5, "1", [1, 2]):
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=seed)
    with pytest.raises(ValueError, match="no reset options"):
        env.reset(options={"target": [1, 2, 3]})
    env.reset(seed=np.int64(3), options={})


def test_actions_are_read_never_written_and_refused_unless_the_right_shape():
    """The caller's action array is never written (a NaN stays NaN, the array's bytes are the
    same); an action of another shape, None, a dict, a scalar, text or complex numbers is a
    ValueError naming the expected shape, for the single and the vector env; a list of numbers
    is an action."""
    env = UvmsEnv(seed=0)
    env.reset(seed=0)
    nt = env.action_space.shape[0]
    action = np.full(nt, np.nan, dtype=np.float32)
    action[0] = 5.0  # beyond the space: clipped, inside the env
    before = action.tobytes()
    _, _, _, _, info = env.step(action)
    assert action.tobytes() == before and info["invalid_action"]
    env.step([0.1] * nt)
    vec = UvmsVectorEnv(num_envs=3, seed=0)
    vec.reset(seed=0)
    batch = np.full((3, nt), np.nan)
    batch[1] = 0.5
    before = batch.tobytes()
    _, _, _, _, info = vec.step(batch)
    assert batch.tobytes() == before and info["invalid_action"].tolist() == [True, False, True]
    for bad in (None, {"a": 1}, 0.5, np.float32(0.5), "forward", np.zeros(nt + 1), np.zeros((1, nt)),
                np.zeros(nt, dtype=complex), [[0.0] * nt, [0.0]], np.zeros(nt, dtype=object)):  # fmt: skip
        with pytest.raises(ValueError, match=rf"action.*\({nt},\)|real numbers"):
            env.step(bad)
    for bad in (None, np.zeros(nt), np.zeros((2, nt)), np.zeros((3, nt + 1)), np.zeros((3, nt), complex)):
        with pytest.raises(ValueError, match=r"action.*\(3, \d+\)|real numbers"):
            vec.step(bad)


def test_sensor_observations_carry_the_sensors_noise():
    """``observation="sensors"``: over 2000 steps of a vehicle held still, the observed body
    velocity scatters about the truth as the Heavy's DVL (per-axis standard deviation from its
    beam geometry, 2 mm/s per beam: 2.6 mm/s horizontally, 1.1 mm/s vertically) and its
    gyroscope (white noise 6.98e-5 rad/s/sqrt(Hz) at 100 Hz: 7e-4 rad/s) say, within 10 %,
    and the depth error as its Bar30 (2.05 mm); with ``observation="truth"`` there is no
    scatter at all. Seeded: the same seed gives the same noise."""
    check_env(UvmsEnv(task="waypoint", observation="sensors", seed=1), skip_render_check=True)
    runs = {}
    for mode in ("sensors", "truth", "sensors"):
        env = UvmsEnv(description="bluerov2_heavy", task="depth_hold", observation=mode, seed=3)
        env.reset(seed=3)
        core = env.core
        seen = []
        for _ in range(2000):
            core.batch.q[0] = core.system.initial_q  # held still: only the sensors move the observation
            core.batch.v[0] = 0.0
            obs, *_ = env.step(np.zeros(env.action_space.shape, dtype=np.float32))
            seen.append(obs.copy())
        runs.setdefault(mode, []).append(np.array(seen))
    sensors, truth = runs["sensors"][0], runs["truth"][0]
    np.testing.assert_array_equal(sensors, runs["sensors"][1])
    assert np.all(truth[:, 8:14] == truth[0, 8:14])
    noise = sensors[:, 8:14] - truth[:, 8:14]
    expected_linear = 0.002 * np.sqrt(np.diag(np.linalg.inv(_beams().T @ _beams())))
    np.testing.assert_allclose(noise[:, :3].std(axis=0), expected_linear, rtol=0.1)
    assert noise[:, 3:].std(axis=0) == pytest.approx(np.full(3, 6.98e-5 * math.sqrt(100.0)), rel=0.1)
    depth = sensors[:, :3] - truth[:, :3]
    assert np.linalg.norm(depth, axis=1).std() > 0.0
    assert np.sqrt(np.mean(np.linalg.norm(depth, axis=1) ** 2)) == pytest.approx(
        math.sqrt(20.0**2 + 10.0**2 / 12.0) / (1000.0 * 9.80665), rel=0.1
    )


def _beams() -> np.ndarray:
    from uvms_sim.sensors.acoustic import AZIMUTHS

    b = math.radians(22.5)
    return np.column_stack(
        [math.sin(b) * np.cos(AZIMUTHS), math.sin(b) * np.sin(AZIMUTHS), np.full(4, math.cos(b))]
    )
