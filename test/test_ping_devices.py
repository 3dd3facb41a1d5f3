"""The Ping2 (Ping1D) and the Ping360 as Ping devices on UDP, with Blue Robotics' own
``bluerobotics-ping`` client as the host: it connects, reads the device information and the
device data, and a wall (a box structure) 5.0 m ahead shows its echo at 5.0 m within one range
bin (the first sample at half the echo's peak or more: the leading edge of the wall's echo)."""

from __future__ import annotations

import math
import socket
import time

import numpy as np
import pytest
from brping import Ping1D, Ping360, definitions, pingmessage

from uvms_sim.hil import ping_protocol as pp
from uvms_sim.hil.ping_devices import Ping1D as Ping1dDevice
from uvms_sim.hil.ping_devices import Ping360 as Ping360Device
from uvms_sim.hil.ping_devices import PingServer
from uvms_sim.scene import Scene, SceneRays, Shape, Structure

WALL = 5.0  # m from the transducer to the wall's face


def wall_rays() -> SceneRays:
    """A 1 m thick, 20 x 20 m wall whose face is WALL m north of the origin."""
    wall = Shape("box", (1.0, 20.0, 20.0), xyz=(WALL + 0.5, 0.0, 0.0))
    return SceneRays(Scene(structures=(Structure("wall", wall),)))


def facing_north():
    return np.eye(3), np.zeros(3)


def ping1d_client(port: int) -> Ping1D:
    """brping 0.2.5's Ping1D decodes with every device's messages by default, where the S500's
    ids 1200, 1206, 1207, 1211 and 1213 shadow the Ping1D's (a real Ping2 is misread the same
    way); given the Ping1D's own messages, as its constructor allows, it reads them right."""
    client = Ping1D(payload_dict=definitions.payload_dict_ping1d)
    client.connect_udp("127.0.0.1", port)
    return client


def leading_edge(data: bytes) -> int:
    samples = np.frombuffer(bytes(data), dtype=np.uint8).astype(float)
    assert samples.max() > 50, "no echo"
    return int(np.argmax(samples >= 0.5 * samples.max()))


@pytest.fixture
def ping1d_server():
    server = PingServer(Ping1dDevice(wall_rays(), facing_north, noise=False), 0)
    yield server
    server.close()


@pytest.fixture
def ping360_server():
    server = PingServer(Ping360Device(wall_rays(), facing_north, noise=False), 0)
    yield server
    server.close()


def test_ping1d_client_reads_the_wall(ping1d_server):
    client = ping1d_client(ping1d_server.port)
    assert client.initialize()
    info = client.get_device_information()
    assert info["device_type"] == 1  # Ping Echosounder
    assert client.get_protocol_version()["version_major"] == 1
    distance = client.get_distance()
    assert distance["distance"] == pytest.approx(1000 * WALL, abs=1.0)  # mm, exact without noise
    assert distance["confidence"] == 100
    profile = client.get_profile()
    n = len(profile["profile_data"])
    assert n == 200
    bin_mm = profile["scan_length"] / n
    edge_mm = profile["scan_start"] + leading_edge(profile["profile_data"]) * bin_mm
    assert abs(edge_mm - 1000 * WALL) <= bin_mm
    # a range set by the host: 3-8 m, still the wall at 5.0 m, finer bins
    assert client.set_range(3000, 5000)
    assert client.get_mode_auto()["mode_auto"] == 0
    profile = client.get_profile()
    assert (profile["scan_start"], profile["scan_length"]) == (3000, 5000)
    edge_mm = 3000 + leading_edge(profile["profile_data"]) * 25.0
    assert abs(edge_mm - 1000 * WALL) <= 25.0
    # the speed of sound the host sets scales the ranges it is told (c' / c)
    # (brping 0.2.5's set_speed_of_sound packs with the S500's layout of id 1002 and sends 0:
    # the message is packed here with the Ping1D's, by the client's own PingMessage)
    m = pingmessage.PingMessage(
        definitions.PING1D_SET_SPEED_OF_SOUND, payload_dict=definitions.payload_dict_ping1d
    )
    m.speed_of_sound = 1_200_000  # mm/s
    m.pack_msg_data()
    client.write(m.msg_data)
    assert client.get_speed_of_sound()["speed_of_sound"] == 1_200_000
    assert client.get_distance()["distance"] == pytest.approx(1000 * WALL * 1.2 / 1.5, abs=1.0)


def test_ping1d_continuous_profiles(ping1d_server):
    client = ping1d_client(ping1d_server.port)
    assert client.initialize()
    assert client.set_ping_interval(50)
    client.control_continuous_start(definitions.PING1D_PROFILE)
    numbers = []
    deadline = time.monotonic() + 5.0
    while len(numbers) < 5 and time.monotonic() < deadline:
        msg = client.wait_message([definitions.PING1D_PROFILE], 1.0)
        if msg is not None:
            numbers.append(msg.ping_number)
            assert msg.distance == pytest.approx(1000 * WALL, abs=1.0)
    assert len(numbers) == 5 and numbers == sorted(numbers)
    client.control_continuous_stop(definitions.PING1D_PROFILE)


def test_ping360_client_reads_the_wall(ping360_server):
    client = Ping360()
    client.connect_udp("127.0.0.1", ping360_server.port)
    assert client.initialize()
    assert client.get_device_information()["device_type"] == 2  # Ping360
    assert client.set_gain_setting(1) is not None  # normal
    # 1200 samples over 10 m: sample_period = 2 r / (c n 25 ns)
    period = round(2 * 10.0 / (1500.0 * 1200 * 25e-9))
    assert client.set_number_of_samples(1200) is not None
    assert client.set_sample_period(period) is not None
    reply = client.transmitAngle(0)
    assert reply is not None and reply.message_id == definitions.PING360_DEVICE_DATA
    assert reply.number_of_samples == 1200 and len(reply.data) == 1200
    sample = reply.sample_period * 25e-9 * 1500.0 / 2.0
    assert abs(leading_edge(reply.data) * sample - WALL) <= sample
    # the head turned 90 degrees (100 gradians) to starboard looks along the wall: no echo
    side = client.transmitAngle(100)
    assert side.angle == 100 and max(side.data) == 0
    # 45 degrees off, the wall is WALL / cos(45 deg) away along the beam's axis
    oblique = client.transmitAngle(50)
    assert abs(leading_edge(oblique.data) * sample - WALL / math.cos(math.pi / 4)) <= 0.05 * WALL


def test_ping360_auto_transmit_steps_the_head(ping360_server):
    client = Ping360()
    client.connect_udp("127.0.0.1", ping360_server.port)
    assert client.initialize()
    client.control_auto_transmit(1, 1, 32, 80, 740, 200, 390, 10, 2, 0)  # a 20 gradian sector
    angles = []
    deadline = time.monotonic() + 5.0
    while len(angles) < 14 and time.monotonic() < deadline:
        msg = client.wait_message([definitions.PING360_AUTO_DEVICE_DATA], 1.0)
        if msg is not None:
            angles.append(msg.angle)
            assert (msg.start_angle, msg.stop_angle, msg.num_steps) == (390, 10, 2)
            assert len(msg.data) == 200
    client.control_motor_off()
    assert len(angles) == 14
    assert angles[:6] == [390, 392, 394, 396, 398, 0]
    assert set(angles) <= {(390 + k) % 400 for k in range(0, 21, 2)}
    assert 10 in angles and angles[angles.index(10) + 1] == 8  # to and fro in a sector


def test_settings_out_of_range_are_clamped(ping360_server):
    client = Ping360()
    client.connect_udp("127.0.0.1", ping360_server.port)
    assert client.initialize()
    client.control_transducer(1, 9, 1234, 5000, 10, 2000, 5000, 1, 0)
    reply = client.wait_message([definitions.PING360_DEVICE_DATA], 4.0)
    assert reply.gain_setting == 2 and reply.angle == 1234 % 400
    assert (reply.transmit_duration, reply.sample_period) == (1000, 80)
    assert (reply.transmit_frequency, reply.number_of_samples) == (1000, 1200)


def test_frames_match_the_client_codec():
    """Our framing against brping's: what one packs, the other parses, checksum included."""
    ours = pp.pack(1212, 1, 255, distance=5000, confidence=100, transmit_duration=50, ping_number=7,
                   scan_start=0, scan_length=8000, gain_setting=3)  # fmt: skip
    parser = pingmessage.PingParser()
    states = [parser.parse_byte(b) for b in ours]
    assert states[-1] == parser.NEW_MESSAGE
    msg = parser.rx_msg
    assert (msg.distance, msg.ping_number, msg.src_device_id, msg.dst_device_id) == (5000, 7, 1, 255)
    theirs = pingmessage.PingMessage(definitions.PING360_TRANSDUCER)
    theirs.angle, theirs.transmit, theirs.number_of_samples = 123, 1, 600
    theirs.pack_msg_data()
    (parsed,) = pp.Parser().feed(bytes(theirs.msg_data))
    assert parsed.id == 2601
    assert parsed.fields() == {
        **{k: 0 for k in pp.MESSAGES[2601][2]},
        "angle": 123,
        "transmit": 1,
        "number_of_samples": 600,
    }


def test_noise_keeps_the_echo_at_the_wall():
    device = Ping1dDevice(wall_rays(), facing_north, noise=True, seed=3)
    distances = []
    for _ in range(200):
        d, confidence, data = device.measure()
        distances.append(d)
        assert confidence == 100 and len(data) == 200
    mm = np.array(distances, dtype=float)
    # 0.5 % of the range, 1 sigma (the data sheet's resolution): 25 mm at 5 m, mean within 4 sigma/sqrt(n)
    assert abs(mm.mean() - 5000.0) < 4 * 25.0 / math.sqrt(len(mm))
    assert 0.8 * 25.0 < mm.std() < 1.2 * 25.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_node_serves_both_devices():
    """The simulator node with ``ping1d_port`` and ``ping360_port``: the shipped Heavy 2 m down
    over its 20 m seabed; its Ping2 (where its altimeter is, 0.1 m below the origin, looking
    down) reads 17.9 m (0.5 % noise, 1 % allowed: the vehicle barely moves in a second), and the
    Ping360 answers the client."""
    from ros_helpers import simulator

    p1, p360 = free_port(), free_port()
    with simulator(description="bluerov2_heavy", ardusub_frame="none", ping1d_port=p1, ping360_port=p360):
        client = ping1d_client(p1)
        assert client.initialize()
        assert client.get_distance()["distance"] == pytest.approx(17900, rel=0.01)
        sonar = Ping360()
        sonar.connect_udp("127.0.0.1", p360)
        assert sonar.initialize()
        reply = sonar.transmitAngle(0)
        assert reply is not None and len(reply.data) == reply.number_of_samples
