"""One physics for several ArduSub SITLs: one instance per vehicle of a description, in
lock-step with all of them.

ArduPilot's SITL instance ``k`` (``sim_vehicle.py -I k``, or the binary's ``-I k``) sends its
JSON servo datagrams to port ``9002 + 10 k`` (``SITL_cmdline.cpp``: ``simulator_port_out +=
_instance * 10``; MAVLink on TCP ``5760 + 10 k``). Here instance ``k`` flies the ``k``-th vehicle
of the description that has thrusters (the connected pair of Nielsen et al. 2018: ``port`` is
instance 0, ``starboard`` instance 1; the connection piece has no autopilot), and its socket
is bound at ``port + 10 k``.

Lock-step (each SITL behaves as ``libraries/SITL/SIM_JSON.cpp``: it sends frame ``n``, waits
for the answer as long as it takes, re-sending frame ``n`` every second, and sends frame
``n + 1`` only after it parsed an answer):

- The physics steps by ``1 / frame_rate`` once every instance that takes part has sent its
  next frame; then every one of them gets its own vehicle's answer (same physics time). An
  instance that sent its frame waits, unanswered, for the others: its re-sends of that frame
  are not answered either (answering would move its clock on without the physics).
- Taking part: an instance whose SITL has been heard within ``peer_timeout`` seconds (longer
  than SITL's re-send period, so that one waiting for the others stays in). One that
  falls silent (stopped, restarting, stuck in a debugger) holds the others up for at most
  ``peer_timeout``; then the physics steps without it, its thrusters' commands at neutral
  (1500 us), until it is heard again.
- A re-send of a frame already answered (the answer was lost) gets the same answer again; a
  frame count that jumps ahead counts the frames in between as lost.
- A SITL that restarts (its frame count goes back, or a new source address after its old one
  has been silent for ``peer_timeout``) joins the running physics: the others fly on, and its
  SITL sees the physics time where it is (SIM_JSON takes the first timestamp as its clock's
  step). Only when no other instance takes part is the physics put back to the description's
  initial state at time 0, as ``hil.sitl_json`` does for one SITL.

Bad datagrams, senders other than an instance's peer, port 0 and socket errors are counted
and dropped per instance, as in ``hil.sitl_json``; nothing a sender does ends the backend.
"""

from __future__ import annotations

import select
import socket
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

import numpy as np

from ..actuators.bank import ThrusterBank
from ..log import Throttle
from ..simulator import Simulator
from ..spatial import Array
from .sitl_json import (
    DEFAULT_PORT,
    WRAP,
    Counters,
    FrameTimes,
    ServoPacket,
    SitlJsonBackend,
    admit,
    check_address,
    parse_servo_packet,
    rigid_offset,
    vehicle_state_json,
)

INSTANCE_PORT_STEP = 10  # SITL_cmdline.cpp: each instance's ports are 10 apart
NEUTRAL_PWM = 1500.0
RESEND_PERIOD = 1.1  # s: SIM_JSON re-sends a frame after ten 100 ms receive timeouts


def autopilot_vehicles(sim: Simulator) -> list[int]:
    """Indices (into the description's vehicles) of the vehicles with thrusters, in order:
    entry k is flown by SITL instance k."""
    system = sim.system
    if system is None:
        return [0]
    return [k for k, veh in enumerate(system.vehicles) if veh.thrusters]


@dataclass
class Instance:
    """One SITL instance's side of the lock-step: its socket, its peer and its frames."""

    number: int  # k of ``-I k``
    vehicle: int  # index into the description's vehicles
    root: int  # the vehicle's root body
    q_root: slice  # the free joint that carries it (``sitl_json.rigid_offset``)
    q_rel: Array | None
    thrusters: list[int]  # the bank's indices of this vehicle's thrusters
    sock: socket.socket
    port: int
    peer: tuple[str, int] | None = None
    peer_seen: float = -np.inf
    frame_count: int | None = None
    pending: ServoPacket | None = None  # a new frame, waiting for the others
    last_reply: bytes | None = None
    last_pwm: tuple[int, ...] | None = None
    counters: Counters = field(default_factory=Counters)

    def live(self, now: float, timeout: float) -> bool:
        return self.peer is not None and now - self.peer_seen < timeout

    def forget(self) -> None:
        """A new session of this SITL: nothing remembered of its frames."""
        self.frame_count = None
        self.pending = None
        self.last_reply = None


class SitlJsonMulti:
    """Lock-step physics for one ArduSub SITL per vehicle (see module docstring). Serves like
    ``SitlJsonBackend``: ``serve_once(timeout, lock)`` returns True when the physics stepped."""

    def __init__(
        self,
        sim: Simulator,
        bind: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        max_step: float = 0.0025,
        peer_timeout: float = 2.0,
        vehicles: list[int] | None = None,
    ) -> None:
        if sim.thrusters is None:
            raise ValueError("the SITL backend needs a system with thrusters")
        check_address(bind, port)
        if not peer_timeout > RESEND_PERIOD:
            raise ValueError(
                f"peer timeout {peer_timeout} s: it must be longer than SITL's re-send period "
                f"({RESEND_PERIOD} s), or a SITL waiting for the others drops out"
            )
        vehicles = autopilot_vehicles(sim) if vehicles is None else vehicles
        if not vehicles:
            raise ValueError("the description has no vehicle with thrusters for a SITL to fly")
        if port and port + INSTANCE_PORT_STEP * (len(vehicles) - 1) > 65535:
            raise ValueError(f"port {port} leaves no room for {len(vehicles)} instances 10 ports apart")
        self.sim = sim
        self.bank: ThrusterBank = sim.thrusters
        self.max_step = max_step
        self.peer_timeout = peer_timeout
        self.initial = (sim.state.q.copy(), sim.state.v.copy())
        self.times = FrameTimes()
        self.throttle = Throttle()
        self.instances: list[Instance] = []
        system = sim.system
        try:
            for k, vehicle in enumerate(vehicles):
                veh = system.vehicles[vehicle] if system is not None else None
                root = sim.model.body_index(veh.root) if veh is not None else 0
                names = {t.name for t in veh.thrusters} if veh is not None else set(sim.thrusters.names)
                sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                at = port + INSTANCE_PORT_STEP * k if port else 0
                try:
                    sock.bind((bind, at))
                except OSError as exc:
                    sock.close()
                    why = exc.strerror or exc
                    raise ValueError(f"cannot listen on {bind}:{at} (instance {k}): {why}") from None
                sock.setblocking(False)
                free, q_rel = rigid_offset(sim, root)
                self.instances.append(
                    Instance(
                        number=k,
                        vehicle=vehicle,
                        root=root,
                        q_root=sim.model.q_slice(free),
                        q_rel=q_rel,
                        thrusters=[j for j, n in enumerate(sim.thrusters.names) if n in names],
                        sock=sock,
                        port=sock.getsockname()[1],
                    )
                )
        except ValueError:
            self.close()
            raise
        self.by_socket = {inst.sock.fileno(): inst for inst in self.instances}

    @property
    def port(self) -> int:
        """Instance 0's port (the others are 10 apart when bound at a given port)."""
        return self.instances[0].port

    @property
    def ports(self) -> list[int]:
        return [inst.port for inst in self.instances]

    @property
    def counters(self) -> Counters:
        """All instances' counters added up."""
        total = Counters()
        for inst in self.instances:
            c = inst.counters
            for name in ("frames", "resends", "restarts", "sessions", "lost", "physics_errors",
                         "socket_errors"):  # fmt: skip
                setattr(total, name, getattr(total, name) + getattr(c, name))
            for key, n in c.dropped.items():
                total.dropped[key] = total.dropped.get(key, 0) + n
            for key, n in c.ignored.items():
                total.ignored[key] = total.ignored.get(key, 0) + n
        return total

    def close(self) -> None:
        for inst in self.instances:
            inst.sock.close()

    # -- one datagram -------------------------------------------------------------------------
    def accept(self, inst: Instance, addr: tuple[str, int], now: float) -> bool:
        """Whether a datagram from ``addr`` is served by ``inst`` (as ``SitlJsonBackend.accept``)."""
        c = inst.counters
        who = f"SITL instance {inst.number}:"
        verdict = admit(addr, inst.peer, inst.peer_seen, now, self.peer_timeout, c, self.throttle, who)
        if verdict == "peer":
            inst.peer_seen = now
        if verdict != "new":
            return verdict == "peer"
        if inst.peer is not None:
            self.throttle.log.warning(
                f"SITL instance {inst.number} ({inst.peer[0]}:{inst.peer[1]}) silent; new session with "
                f"{addr[0]}:{addr[1]}"
            )
        self._new_session(inst, now)
        inst.peer, inst.peer_seen = addr, now
        c.sessions += 1
        return True

    def _new_session(self, inst: Instance, now: float) -> None:
        inst.forget()
        others = [o for o in self.instances if o is not inst and o.live(now, self.peer_timeout)]
        if not others and inst.peer is not None:  # alone: a fresh physics, as for one SITL
            q0, v0 = self.initial
            self.sim.reset(q0, v0)
            for o in self.instances:
                o.forget()

    def take(self, inst: Instance, data: bytes, addr: tuple[str, int], now: float) -> None:
        """One datagram of ``inst``'s peer: a new frame is kept pending; a re-send of an
        answered frame is answered again at once; a re-send of a pending one waits."""
        c = inst.counters
        try:
            packet = parse_servo_packet(data)
        except ValueError as exc:
            c.drop(str(exc).split(" ")[0])
            self.throttle.warn("bad", f"SITL instance {inst.number} datagram dropped: {exc}")
            return
        last = inst.pending.frame_count if inst.pending is not None else inst.frame_count
        if last is not None:
            ahead = (packet.frame_count - last) % WRAP
            if ahead == 0:
                c.resends += 1
                if inst.pending is None and inst.last_reply is not None:
                    self._send(inst, inst.last_reply, addr)
                return
            if ahead >= WRAP // 2:
                c.restarts += 1
                self.throttle.warn(
                    f"restart{inst.number}",
                    f"SITL instance {inst.number} restarted (frame {packet.frame_count} after {last})",
                )
                self._new_session(inst, now)
            elif inst.pending is not None:  # a newer frame while one waits: SITL gave up on it
                c.lost += ahead
            elif ahead > 1:
                c.lost += ahead - 1
        inst.pending = packet

    def _send(self, inst: Instance, reply: bytes, addr: tuple[str, int]) -> None:
        try:
            inst.sock.sendto(reply, addr)
        except OSError as exc:
            inst.counters.socket_errors += 1
            self.throttle.warn("socket", f"SITL answer to {addr} not sent: {exc}")

    def servo_outputs(self, vehicle: int) -> tuple[int, ...] | None:
        """Every servo PWM of the last frame of the SITL instance that flies the description's
        vehicle ``vehicle`` (as ``SitlJsonBackend.servo_outputs``); None while it takes no part."""
        for inst in self.instances:
            if inst.vehicle == vehicle and inst.live(time.monotonic(), self.peer_timeout):
                return inst.last_pwm
        return None

    # -- the step ---------------------------------------------------------------------------------
    def _apply_pwm(self, inst: Instance, pwm: tuple[int, ...] | None) -> None:
        if pwm is None:  # not taking part: its thrusters at neutral
            pwm = (int(NEUTRAL_PWM),) * 16
        if pwm != inst.last_pwm:
            self.bank.set_motor_pwm(np.asarray(pwm, dtype=float), inst.thrusters)
            inst.last_pwm = pwm

    def ready(self, now: float) -> list[Instance] | None:
        """The instances of the next step when every one taking part has its frame pending."""
        live = [inst for inst in self.instances if inst.live(now, self.peer_timeout)]
        if live and all(inst.pending is not None for inst in live):
            return live
        return None

    def step(self, live: list[Instance]) -> None:
        """Step the physics by one frame with ``live``'s servos and answer each of them."""
        rates = {inst.pending.frame_rate for inst in live if inst.pending is not None}
        rate = min(rates)
        if len(rates) > 1:
            self.throttle.warn(
                "rates", f"SITL instances at frame rates {sorted(rates)}: stepping at {rate} Hz"
            )
        for inst in self.instances:
            self._apply_pwm(inst, inst.pending.pwm if inst in live and inst.pending is not None else None)
        dt = 1.0 / rate
        n = max(1, int(np.ceil(dt / self.max_step - 1e-9)))
        t0 = time.perf_counter()
        try:
            for _ in range(n):
                self.sim.step(dt / n)
            self.times.physics += time.perf_counter() - t0
            replies = self._answers(live)
        except (ValueError, FloatingPointError, ArithmeticError) as exc:
            for inst in live:
                inst.counters.physics_errors += 1
            self.throttle.warn("physics", f"SITL physics failed ({exc}): vehicles back to the initial state")
            t = self.sim.state.t
            q0, v0 = self.initial
            self.sim.reset(q0, v0)
            self.sim.state.t = t + dt  # time keeps running for SITL's clocks
            replies = self._answers(live)
        for inst, reply in zip(live, replies, strict=True):
            assert inst.pending is not None and inst.peer is not None
            inst.frame_count = inst.pending.frame_count
            inst.pending = None
            inst.last_reply = reply
            inst.counters.frames += 1
            self._send(inst, reply, inst.peer)

    def _answers(self, live: list[Instance]) -> list[bytes]:
        """Each instance's answer at the current state (the dynamics evaluated once)."""
        return [
            vehicle_state_json(self.sim, inst.root, inst.q_root, inst.q_rel, evaluate=k == 0)
            for k, inst in enumerate(live)
        ]

    # -- the sockets ------------------------------------------------------------------------------
    def _receive(self, inst: Instance, now: float) -> None:
        while True:
            try:
                data, addr = inst.sock.recvfrom(65535)
            except BlockingIOError:
                return
            except OSError as exc:  # e.g. ICMP port unreachable from an earlier answer
                inst.counters.socket_errors += 1
                self.throttle.warn("socket", f"SITL socket error ignored: {exc}")
                return
            if self.accept(inst, addr, now):
                self.take(inst, data, addr, now)

    def serve_once(self, timeout: float = 0.1, lock: AbstractContextManager | None = None) -> bool:
        """Wait up to ``timeout`` for the frames of a step and make it; True if it was made.
        With ``lock``, only the step and the answers are made holding it, not the wait."""
        t0 = time.perf_counter()
        end = time.monotonic() + timeout
        while True:
            now = time.monotonic()
            live = self.ready(now)
            if live is not None:
                break
            wait = end - now
            if wait <= 0.0:
                return False
            # the earliest moment a silent instance stops taking part: a step may be ready then
            timeout = self.peer_timeout
            expiry = [i.peer_seen + timeout - now for i in self.instances if i.live(now, timeout)]
            wait = min([wait, *(e + 1e-3 for e in expiry if e > 0.0)])
            try:
                readable, _, _ = select.select([i.sock for i in self.instances], [], [], wait)
            except (OSError, ValueError):
                return False
            now = time.monotonic()
            for sock in readable:
                self._receive(self.by_socket[sock.fileno()], now)
        t1 = time.perf_counter()
        with lock or nullcontext():
            self.step(live)
        self.times.receive += t1 - t0
        self.times.reply += time.perf_counter() - t1
        self.times.frames += 1
        return True


def sitl_backend(
    sim: Simulator, bind: str = "127.0.0.1", port: int = DEFAULT_PORT, peer_timeout: float = 2.0
) -> SitlJsonBackend | SitlJsonMulti:
    """The backend for a description: ``SitlJsonBackend`` for one vehicle with thrusters,
    ``SitlJsonMulti`` (one SITL instance per such vehicle) for several."""
    if len(autopilot_vehicles(sim)) > 1:
        return SitlJsonMulti(sim, bind=bind, port=port, peer_timeout=peer_timeout)
    vehicles = autopilot_vehicles(sim)
    vehicle = vehicles[0] if vehicles else 0
    return SitlJsonBackend(sim, vehicle=vehicle, bind=bind, port=port, peer_timeout=peer_timeout)
