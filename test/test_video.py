"""The camera's video as ArduSub users receive it: H.264 over RTP on UDP (``uvms_sim.viz.video``).

The stream is checked on the wire (RTP version 2, payload type 96, RFC 6184 packetization-mode
1 units, datagrams within ``PACKET_SIZE``, an IDR with its SPS and PPS at least every second,
no RTCP on the video port) and by a real client: FFmpeg (through PyAV) opening the SDP the
stream writes, as ffplay does, decoding the images and comparing them with the rendered ones.

The threshold, PSNR > 35 dB on every decoded image: x264 at CRF 23 quantises at QP about 23,
a step of 0.625 2^(23/6) = 8.9 in the transform domain, whose uniform-quantisation error
(step / sqrt 12, about 2.6 levels RMS) alone gives 20 log10(255 / 2.6) = 40 dB; the rest
(x264's dead zone, 4:2:0 chroma at the edges of the structures, P-frame drift within a
second) is given 5 dB (measured: 42 dB at worst). The image before (the camera tilted 37
degrees away) scores below 32 dB (measured: 28 dB at most), so a decoded image is matched with
the one its RTP time says.
"""

from __future__ import annotations

import itertools
import math
import socket
import struct
import threading
import time
from pathlib import Path

import numpy as np
import pytest

av = pytest.importorskip("av")

from uvms_sim.scene import Scene, SceneRays, Shape, Structure  # noqa: E402
from uvms_sim.scene.seabed import PlaneSeabed  # noqa: E402
from uvms_sim.sensors.camera import Camera, Intrinsics  # noqa: E402
from uvms_sim.viz.video import CLOCK, PACKET_SIZE, PAYLOAD_TYPE, VideoStream, check_host, check_port, sdp  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "uvms_sim" / "config"
RATE = 15.0
PSNR_MIN = 35.0  # dB (module doc)
WIDTH, HEIGHT = 320, 240


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(float) - b.astype(float)) ** 2))
    return math.inf if mse == 0 else 10.0 * math.log10(255.0**2 / mse)


def rendered_frames(n: int) -> list[np.ndarray]:
    """``n`` images of a seabed with posts, the camera tilting by 37 degrees (modulo 80) an
    image: each image unlike the one before."""
    posts = tuple(
        Structure(f"post{k}", Shape("box", (0.3, 0.3, 4.0), xyz=(4.0 + k, -2.0 + 1.3 * k, 3.0)))
        for k in range(4)
    )
    rays = SceneRays(Scene(seabed=PlaneSeabed(5.0), structures=posts))
    camera = Camera(rays, Intrinsics.from_fov(WIDTH, HEIGHT, math.radians(80.0)))
    tilt = [math.radians(-40.0 + (37.0 * k) % 80.0) for k in range(n)]
    return [camera.render(np.eye(3), np.zeros(3), t)[0] for t in tilt]


def free_rtp_port() -> int:
    """An even UDP port p on loopback with p + 1 free too (an RTP client takes both)."""
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
        if port % 2 or port >= 65534:
            continue
        try:
            with (
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as a,
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as b,
            ):
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 1))
        except OSError:
            continue
        return port
    raise RuntimeError("no free even UDP port pair")


def held(port: int) -> bool:
    """Whether something holds UDP ``port`` on loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


class Client:
    """FFmpeg through PyAV reading the stream from its SDP, as ffplay does
    (``-protocol_whitelist file,udp,rtp``): the decoded images with their RTP times (in 90 kHz
    ticks from the first packet it received) and wall-clock arrival."""

    def __init__(self, sdp_path: str, port: int) -> None:
        self.frames: list[tuple[float, int, np.ndarray]] = []
        self.error: BaseException | None = None
        self.sdp_path = sdp_path
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        end = time.monotonic() + 20.0
        while not held(port) and time.monotonic() < end:
            time.sleep(0.01)
        assert held(port), "the client did not open the stream's port"

    def run(self) -> None:
        options = {"protocol_whitelist": "file,udp,rtp", "fflags": "nobuffer", "reorder_queue_size": "0",
                   "analyzeduration": "0", "probesize": "32"}  # fmt: skip
        try:
            with av.open(self.sdp_path, format="sdp", options=options, timeout=(20.0, 3.0)) as container:
                stream = container.streams.video[0]
                stream.codec_context.thread_type = "SLICE"  # no frame threads: no frames held back
                for packet in container.demux(stream):
                    for frame in packet.decode():
                        pts = frame.pts if frame.pts is not None else packet.pts
                        if pts is not None:
                            self.frames.append(
                                (time.perf_counter(), int(pts), frame.to_ndarray(format="rgb24"))
                            )
        except av.error.ExitError:  # the read timeout: the stream ended
            pass
        except BaseException as exc:
            self.error = exc


def test_the_packets_are_rfc_6184_h264_with_a_keyframe_every_second():
    port = free_rtp_port()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", port))
        sock.settimeout(2.0)
        stream = VideoStream("127.0.0.1", port, WIDTH, HEIGHT, RATE)
        images = rendered_frames(40)
        for k, image in enumerate(images):
            assert stream.send(image, 10.0 + k / RATE)
        stream.close()
        packets = []
        try:
            while True:
                packets.append(sock.recv(65535))
        except TimeoutError:
            pass
    assert packets and all(len(p) <= PACKET_SIZE for p in packets)
    heads = [struct.unpack(">BBHII", p[:12]) for p in packets]
    assert {h[0] >> 6 for h in heads} == {2}  # RTP version 2, and nothing else (no RTCP)
    assert {h[1] & 0x7F for h in heads} == {PAYLOAD_TYPE}
    assert len({h[4] for h in heads}) == 1  # one SSRC
    seq = [h[2] for h in heads]
    assert all((b - a) % 65536 == 1 for a, b in itertools.pairwise(seq))  # nothing lost on loopback
    stamps = sorted({h[3] for h in heads})
    assert len(stamps) == len(images)
    assert np.all(np.diff(stamps) == round(CLOCK / RATE))  # the images' times in 90 kHz ticks
    # the marker bit ends each image (RFC 6184 section 5.1): on the last packet of its timestamp
    for a, b in zip(heads, [*heads[1:], None], strict=True):
        assert bool(a[1] & 0x80) == (b is None or b[3] != a[3])
    nal_types: dict[int, set[int]] = {}
    for p, h in zip(packets, heads, strict=True):
        payload = p[12:]
        kind = payload[0] & 0x1F
        units = nal_types.setdefault(h[3], set())
        if kind == 24:  # STAP-A: 16-bit sizes and units
            i = 1
            while i < len(payload):
                size = struct.unpack(">H", payload[i : i + 2])[0]
                units.add(payload[i + 2] & 0x1F)
                i += 2 + size
            assert i == len(payload)
        elif kind == 28:  # FU-A: the unit's type in the FU header
            units.add(payload[1] & 0x1F)
        else:
            assert 1 <= kind <= 23, kind  # a single NAL unit; no FU-B, STAP-B, MTAP: mode 1 only
            units.add(kind)
    keyframes = [k for k, ts in enumerate(stamps) if {5, 7, 8} <= nal_types[ts]]  # IDR with SPS and PPS
    assert keyframes[0] == 0
    assert max(np.diff([*keyframes, len(stamps)])) <= math.ceil(RATE)  # at least one a second


def test_a_real_client_decodes_the_rendered_images_from_the_sdp(tmp_path):
    port = free_rtp_port()
    sdp_file = str(tmp_path / "camera.sdp")
    images = rendered_frames(60)
    stream = VideoStream("127.0.0.1", port, WIDTH, HEIGHT, RATE, sdp_path=sdp_file)
    text = Path(sdp_file).read_text()
    assert f"m=video {port} RTP/AVP 96" in text and "a=rtpmap:96 H264/90000" in text
    client = Client(sdp_file, port)
    sent = []
    for k, image in enumerate(images):  # paced as the camera renders: 15 images a second
        sent.append(time.perf_counter())
        assert stream.send(image, k / RATE)
        time.sleep(max(0.0, sent[-1] + 1.0 / RATE - time.perf_counter()))
    stream.close()
    client.thread.join(timeout=30.0)
    assert client.error is None, client.error
    assert len(client.frames) >= len(images) - math.ceil(RATE)  # decoding starts at the latest at the 2nd IDR
    ticks = round(CLOCK / RATE)
    latency, right, wrong = [], [], []
    for arrival, pts, decoded in client.frames:
        k = pts // ticks
        assert pts % ticks == 0 and 0 <= k < len(images)
        right.append(psnr(decoded, images[k]))
        if k > 0:  # and the image before does not pass: the match is the RTP time's
            wrong.append(psnr(decoded, images[k - 1]))
        latency.append(arrival - sent[k])
    assert min(right) > PSNR_MIN and max(wrong) < PSNR_MIN - 3.0, (min(right), max(wrong))
    print(
        f"\nPSNR of the decoded images {min(right):.1f}-{max(right):.1f} dB (the image before: at most "
        f"{max(wrong):.1f} dB); send to decoded (FFmpeg client, loaded machine): median "
        f"{1e3 * np.median(latency):.0f} ms"
    )


def test_wrong_images_are_refused_not_fatal(caplog):
    stream = VideoStream("127.0.0.1", free_rtp_port(), WIDTH, HEIGHT, RATE)
    assert not stream.send(np.zeros((HEIGHT + 2, WIDTH, 3), np.uint8), 0.0)
    assert not stream.send(np.zeros((HEIGHT, WIDTH, 3), np.float32), 0.0)
    assert stream.send(np.zeros((HEIGHT, WIDTH, 3), np.uint8), 0.0)
    assert stream.send(np.zeros((HEIGHT, WIDTH, 3), np.uint8), 0.0)  # time standing still: still sent
    stream.close()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: check_host("qgc.local"), "parameter video_host: expected the IP address"),
        (lambda: check_host("0.0.0.0"), "parameter video_host: '0.0.0.0' is no destination"),
        (lambda: check_port(0), "parameter video_port: expected a UDP port 1-65535"),
        (lambda: check_port(70000), "parameter video_port: expected a UDP port 1-65535"),
        (lambda: VideoStream("127.0.0.1", 5600, 321, 240, RATE), "video: H.264 in 4:2:0 needs an even"),
        (lambda: VideoStream("127.0.0.1", 5600, 320, 240, RATE, "/no/such/dir/x.sdp"), "parameter video_sdp"),
    ],
)
def test_bad_stream_settings_are_one_line_errors(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def camera_description(tmp_path: Path, width: int = 64, height: int = 48) -> str:
    heavy = (CONFIG / "bluerov2_heavy.yaml").read_text()
    text = heavy.replace(
        "      - {type: camera, name: front, position: [0.2, 0.0, 0.0]}",  # the shipped camera, smaller
        f"      - {{type: camera, name: front, position: [0.2, 0.0, 0.0], width: {width}, height: {height},"
        " rate: 10, noise: false}",
    )
    assert text != heavy
    path = tmp_path / "heavy_camera.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"video_port": 0, "video_host": "ground station"}, "parameter video_host: expected the IP address"),
        ({"video_port": -1}, "parameter video_port: expected 0 to 65535, got -1"),
        ({"video_port": 9002, "sitl_port": 9002}, "parameter video_port: 9002 is this node's own sitl_port"),
        ({"video_port": 5600, "video_camera": "rear"}, "parameter video_camera: no camera 'rear'"),
        (
            {"video_port": 5600, "video_sdp": "/no/such/dir/x.sdp"},
            "parameter video_sdp: '/no/such/dir/x.sdp'",
        ),
        ({"mount_tilt_pwm": [1500.0, 1500.0]}, "parameter mount_tilt_pwm: expected two PWMs"),
        ({"mount_tilt_servo": 33}, "parameter mount_tilt_servo: expected 0 to 32, got 33"),
    ],
)
def test_bad_node_parameters_are_one_line_errors(tmp_path, params, message):
    from rclpy.parameter import Parameter
    from ros_helpers import ros_context

    from uvms_sim.ros.node import SimulatorNode

    overrides = [
        Parameter("description", value=camera_description(tmp_path)),
        Parameter("ardusub_frame", value="none"),
    ]
    overrides += [Parameter(k, value=v) for k, v in params.items()]
    with ros_context() as (ctx, _executor), pytest.raises(ValueError) as info:
        node = SimulatorNode(context=ctx, parameter_overrides=overrides)
        node.destroy_node()
    assert str(info.value).startswith(message) and "\n" not in str(info.value), str(info.value)


def test_no_camera_no_video():
    from rclpy.parameter import Parameter
    from ros_helpers import ros_context

    from uvms_sim.ros.node import SimulatorNode

    overrides = [Parameter("description", value="bluerov1"), Parameter("ardusub_frame", value="none"),
                 Parameter("video_port", value=5600)]  # fmt: skip
    with ros_context() as (ctx, _executor), pytest.raises(ValueError, match="declares no camera to stream"):
        SimulatorNode(context=ctx, parameter_overrides=overrides).destroy_node()


def test_the_node_streams_what_it_publishes(tmp_path):
    """The simulator node with ``video_port``: for 4 s of its camera at 10 images a second (the
    tilt swept on its topic, so that every image differs), a client reading the SDP decodes
    images that match the published ones (matched by time: the image's stamp in simulated
    time, the RTP time of the decoded image)."""
    from ros_helpers import simulator, spin_until
    from sensor_msgs.msg import Image
    from std_msgs.msg import Float64

    port = free_rtp_port()
    sdp_path = tmp_path / "node.sdp"
    sdp_path.write_text(sdp("127.0.0.1", port))  # what the node writes: the client is up before it
    client = Client(str(sdp_path), port)
    description = camera_description(tmp_path, 160, 120)
    with simulator(description=description, ardusub_frame="none", video_port=port, video_sdp=str(sdp_path),
                   use_sim_time=True) as (sim, user, executor):  # fmt: skip
        assert f"video of camera front to 127.0.0.1:{port}" in sim.summary()
        assert sdp_path.read_bytes().decode() == sdp("127.0.0.1", port, "uvms_sim camera front")
        published: dict[int, np.ndarray] = {}

        def keep(msg: Image) -> None:
            ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            published[ns] = np.frombuffer(bytes(msg.data), np.uint8).reshape(msg.height, msg.width, 3)

        user.create_subscription(Image, "camera/front/image_raw", keep, 50)
        tilt = user.create_publisher(Float64, "camera/front/tilt", 10)
        start = time.monotonic()

        def sweep() -> None:
            tilt.publish(Float64(data=0.7 * math.sin(2.0 * (time.monotonic() - start))))

        video = sim.cameras.video
        assert spin_until(executor, lambda: video.frames >= 40, timeout=120.0, every=sweep)  # 4 s of its time
        assert sim.thread.is_alive() and sim.cameras.thread.is_alive()
        frames_sent, t0 = video.frames, video.t0
    client.thread.join(timeout=30.0)
    assert client.error is None, client.error
    assert len(client.frames) >= frames_sent - 12  # from the first or second IDR
    stamps = np.array(sorted(published))
    matched = 0
    for _, pts, decoded in client.frames:
        # the client's times count from the first packet it got: the node's first image, at t0
        ns = (t0 + pts / CLOCK) * 1e9
        k = int(np.argmin(np.abs(stamps - ns)))
        if abs(stamps[k] - ns) > 2e4:  # a published image the subscription missed (within 20 us)
            continue
        assert psnr(decoded, published[int(stamps[k])]) > PSNR_MIN
        matched += 1
    assert matched >= len(client.frames) // 2
