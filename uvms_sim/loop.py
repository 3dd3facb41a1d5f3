"""The simulation loop without ROS: it owns simulated time, the real-time pacing, the command
timeouts, pause and single steps, and the grouping of physics steps between events.

As in stonefish_ros2, the simulation core runs the loop and keeps the clock; the ROS node
only turns messages into inputs (under ``SimulationLoop.lock``) and publishes from the loop's
hooks. One ``tick`` is one publish period: the physics steps in groups between events (an
autopilot update, a controller update, a /clock message), each group with its inputs held,
in one compiled call (``Simulator.advance``); the command deadlines are checked at every
event; then the publish hook runs. ``run`` repeats ticks, paced so that simulated time
advances ``real_time_factor`` times as fast as the wall clock (0: as fast as possible), until told to stop.

Everything here is deterministic in simulated time: the tests drive ``tick`` directly, and
``run`` with an injected clock. ``run_lockstep`` hands the stepping to a peer that keeps
its own pace (ArduPilot SITL) and keeps the clock and publish hooks. A ``Cadence`` thins an
event out to a rate of simulated time and of the wall clock (markers, the browser view,
mavros/state, the replay's autopilot).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .simulator import Simulator


def steps_per(rate: float, dt: float) -> int:
    """Physics steps of ``dt`` per period of ``rate`` (Hz): at least one."""
    return max(1, round(1.0 / (rate * dt)))


@dataclass
class Deadline:
    """An input that expires: ``touch(t)`` when a command arrives; once it is older than the
    loop's timeout (simulated seconds), ``on_expiry`` runs once (inputs to neutral, a warning)."""

    on_expiry: Callable[[], None]
    last: float = -math.inf

    def touch(self, t: float) -> None:
        self.last = t

    def check(self, t: float, timeout: float) -> bool:
        """Expire if due (never with ``timeout`` <= 0); True when it expired now."""
        if timeout <= 0.0 or self.last == -math.inf or t - self.last <= timeout:
            return False
        self.last = -math.inf
        self.on_expiry()
        return True


@dataclass
class Cadence:
    """An event at most once per ``period`` seconds of simulated time and, with ``wall_period``
    > 0, at most once per ``wall_period`` seconds of ``clock`` (no viewer draws faster than its
    screen, however fast the simulation runs): ``due(t)`` says whether the event happens at
    simulated time ``t``, and when it does, the next is due ``period`` later (``next_time``).
    Simulated time is a sum of steps: a time short of ``next_time`` by a millionth of a period
    has reached it. ``force`` makes it due now, whatever the rates."""

    period: float
    wall_period: float = 0.0
    clock: Callable[[], float] = time.monotonic
    next_time: float = -math.inf
    next_wall: float = -math.inf

    def due(self, t: float, force: bool = False) -> bool:
        if not force:
            if t < self.next_time - 1e-6 * self.period:
                return False
            if self.wall_period > 0.0:
                now = self.clock()
                if now < self.next_wall:
                    return False
                self.next_wall = now + self.wall_period
        self.next_time = t + self.period
        return True


@dataclass
class SimulationLoop:
    """Steps ``sim`` at ``dt``; see the module docstring.

    Hooks: ``on_autopilot(period)`` every ``autopilot_every`` steps (before stepping),
    ``on_controllers(period)`` every ``controller_every`` steps (before stepping, after the
    autopilot),
    ``on_clock()`` every ``clock_every`` steps, ``on_sensor(step)`` after every
    ``sensor_every``-th step of the whole run (``step`` counts from the start: the sensors'
    periods stay exact across ticks), ``on_publish()`` at the end of each tick; in
    ``run``, ``on_failure(exc)`` when a tick raises FloatingPointError or ValueError (a state
    that cannot go on: the hook restarts the vehicles; anything else propagates).
    """

    sim: Simulator
    dt: float
    publish_every: int = 1
    clock_every: int = 0  # 0: no clock hook
    autopilot_every: int = 1
    controller_every: int = 0  # 0: no controller hook
    sensor_every: int = 0  # 0: no sensor hook
    real_time_factor: float = 1.0
    timeout: float = 0.5
    on_autopilot: list[Callable[[float], None]] = field(default_factory=list)
    on_controllers: list[Callable[[float], None]] = field(default_factory=list)
    on_clock: Callable[[], None] | None = None
    on_sensor: Callable[[int], None] | None = None
    on_publish: Callable[[], None] | None = None
    on_failure: Callable[[Exception], None] | None = None
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.lock = threading.RLock()
        self.deadlines: list[Deadline] = []
        self.step_count = 0
        self.ticks = 0
        self.paused = False
        self._step_requests = 0
        self._repace = True
        self._wall0 = self._sim0 = 0.0
        self.started = self.clock()

    # -- inputs (any thread) ------------------------------------------------------------------
    def deadline(self, on_expiry: Callable[[], None]) -> Deadline:
        """A new input deadline checked at every event."""
        d = Deadline(on_expiry)
        self.deadlines.append(d)
        return d

    def pause(self, paused: bool) -> None:
        with self.lock:
            self.paused = bool(paused)
            self._repace = True

    def request_step(self) -> bool:
        """One tick while paused (False when running)."""
        with self.lock:
            if not self.paused:
                return False
            self._step_requests += 1
            return True

    def restart_pacing(self) -> None:
        """Pace from now on (after a reset or a teleport): no racing to catch up."""
        with self.lock:
            self._repace = True

    # -- the loop -------------------------------------------------------------------------------
    def tick(self) -> None:
        """One publish period (see the module docstring)."""
        spa, spc, spp, sps = self.autopilot_every, self.clock_every, self.publish_every, self.sensor_every
        spu = self.controller_every
        with self.lock:
            k = 0
            while k < spp:
                t = self.sim.state.t
                for d in self.deadlines:
                    d.check(t, self.timeout)
                if self.step_count % spa == 0:
                    for hook in self.on_autopilot:
                        hook(self.dt * spa)
                n = min(spp - k, spa - self.step_count % spa)
                if spu:
                    if self.step_count % spu == 0:
                        for hook in self.on_controllers:
                            hook(self.dt * spu)
                    n = min(n, spu - self.step_count % spu)
                if spc:
                    n = min(n, spc - k % spc)
                if sps:
                    n = min(n, sps - self.step_count % sps)
                self.sim.advance(self.dt, n)
                self.step_count += n
                k += n
                if sps and self.step_count % sps == 0 and self.on_sensor is not None:
                    self.on_sensor(self.step_count)
                if spc and k % spc == 0 and self.on_clock is not None:
                    self.on_clock()
            self.ticks += 1
            if self.on_publish is not None:
                self.on_publish()

    def next_delay(self) -> float:
        """Wall seconds to wait before the next tick so that simulated time keeps
        ``real_time_factor`` x wall time (0 when behind, or as fast as possible)."""
        if self._repace:
            self._repace = False
            self._wall0, self._sim0 = self.clock(), self.sim.state.t
        if self.real_time_factor <= 0.0:
            return 0.0
        return max(0.0, self._wall0 + (self.sim.state.t - self._sim0) / self.real_time_factor - self.clock())

    def run(self, stop: threading.Event, ok: Callable[[], bool] = lambda: True) -> None:
        """Tick until ``stop`` is set or ``ok()`` is false; paused, tick only on request."""
        while not stop.is_set() and ok():
            with self.lock:
                idle = self.paused and self._step_requests == 0
                if self.paused and not idle:
                    self._step_requests -= 1
            if idle:
                self._repace = True
                stop.wait(0.01)
                continue
            try:
                self.tick()
            except (FloatingPointError, ValueError) as exc:  # a state that cannot go on
                if self.on_failure is None:
                    raise
                with self.lock:
                    self.on_failure(exc)
            if not self.paused:
                delay = self.next_delay()
                if delay > 0.0:
                    stop.wait(delay)

    def run_lockstep(
        self,
        serve: Callable[[threading.RLock], bool],
        stop: threading.Event,
        ok: Callable[[], bool] = lambda: True,
    ) -> None:
        """Lock-step with a peer that steps the physics itself (ArduPilot SITL: ``serve(lock)``
        waits for one of its frames, without ``lock``, and answers it holding ``lock``; True
        when that stepped ``sim``), until ``stop`` is set or ``ok()`` is false: inputs are not
        held up while the peer is silent. The peer keeps the pace and the step size; pause,
        step requests, deadlines and the autopilot hook do not apply. After each frame that
        stepped, ``step_count`` is simulated time in steps of ``dt`` (rounded down), then run
        the clock hook, the sensor hook at each multiple of ``sensor_every`` the frame passed,
        and the publish hook once per publish period of simulated time. Time going back (the
        peer restarted) counts from there again."""
        period = self.publish_every * self.dt
        next_publish = self.sim.state.t
        sps = self.sensor_every
        while not stop.is_set() and ok():
            if not serve(self.lock):
                continue
            with self.lock:
                t = self.sim.state.t
                last, now = self.step_count, math.floor(t / self.dt + 1e-6)
                self.step_count = now
                if self.on_clock is not None:
                    self.on_clock()
                if sps and self.on_sensor is not None and now > last:
                    for k in range(last // sps + 1, now // sps + 1):
                        self.on_sensor(k * sps)
                if t < next_publish - period:
                    next_publish = t
                if t >= next_publish:
                    next_publish = t + period
                    self.ticks += 1
                    if self.on_publish is not None:
                        self.on_publish()

    def achieved_real_time_factor(self) -> float:
        """Simulated seconds per wall second since the loop was made."""
        return self.sim.state.t / max(1e-9, self.clock() - self.started)
