"""A camera's images as the video ArduSub users look for: H.264 over RTP on UDP, as BlueOS's
camera manager streams a BlueROV2's camera and QGroundControl receives it (QGroundControl's
default video source is "UDP h.264 Video Stream" on port 5600, a GStreamer ``udpsrc port=5600
! application/x-rtp ! rtph264depay ! h264parse ! decoder``).

- Encoded by FFmpeg's libx264 through PyAV, with its ``zerolatency`` tune (no look-ahead, no
  frame threads: a frame leaves the encoder as soon as it is in), the ``baseline`` profile
  (no B-frames: nothing is held back to be reordered) and x264's default quality (CRF 23).
- An IDR keyframe, preceded by its SPS and PPS in band, at least once a second of stream time
  (every ``ceil(rate)`` frames, and whenever a second has passed since the last one): a client
  that joins at any time (QGroundControl does not read an SDP) decodes within a second.
- Packetised by FFmpeg's RTP muxer as RFC 6184 says: payload type 96 (the first dynamic one),
  a 90 kHz clock, packetization-mode 1 (a NAL unit that fits a datagram sent as it is, a
  larger one in FU-A fragments), datagrams of at most ``PACKET_SIZE`` bytes (below any
  Ethernet or Wi-Fi MTU, so nothing is fragmented on the way).
- The RTP timestamp of an image is its time (simulated, from the first image) in 90 kHz
  ticks, so a client's frame times follow the simulation's; when that time goes back (a
  restarted SITL) the stream's clock goes on from where it was, one image period later.
- An SDP (RFC 4566) for clients that want one (FFmpeg, ffplay, VLC, GStreamer's ``sdpdemux``)
  is written where ``sdp_path`` says: ``ffplay -protocol_whitelist file,udp,rtp stream.sdp``.

The stream is sent to ``host:port``: the address of the ground station that shows it (a
sender takes no port of its own but an ephemeral one). The node's default is this machine
only (127.0.0.1); another address sends the images out on the network, to that machine.
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import os
from fractions import Fraction
from typing import TYPE_CHECKING, cast

import numpy as np

from ..log import Throttle

if TYPE_CHECKING:
    from av.video.stream import VideoStream as CodecStream

QGC_PORT = 5600  # QGroundControl's (and BlueOS's) default video port
PAYLOAD_TYPE = 96  # RFC 3551's first dynamic payload type: what FFmpeg's RTP muxer uses for H.264
CLOCK = 90_000  # Hz: the RTP clock of video (RFC 6184, section 8.2.1)
PACKET_SIZE = 1200  # bytes: the largest datagram (RTP header and payload)
ENCODER = "libx264"
ENCODER_OPTIONS = {"preset": "ultrafast", "tune": "zerolatency", "profile": "baseline", "crf": "23"}


def check_host(host: str, what: str = "video_host") -> str:
    """``host`` as the address a stream is sent to (an IPv4 or IPv6 address, or
    ``localhost``), or ValueError in one line saying what was expected."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(
            f"parameter {what}: expected the IP address of the machine that shows the video "
            f"(127.0.0.1: this machine; the ground station's address: another one), got {host!r}"
        ) from None
    if address.is_unspecified:
        raise ValueError(f"parameter {what}: {host!r} is no destination: give the ground station's address")
    return str(address)


def check_port(port: int, what: str = "video_port") -> int:
    """``port`` as a destination port (1-65535), or ValueError in one line."""
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(
            f"parameter {what}: expected a UDP port 1-65535 (QGroundControl's: 5600), got {port!r}"
        )
    return port


def sdp(host: str, port: int, name: str = "uvms_sim camera") -> str:
    """The session description of a stream sent to ``host:port`` (RFC 4566; RFC 6184 for
    H.264's ``rtpmap`` and ``fmtp``). The parameter sets are in band (no
    ``sprop-parameter-sets``), at each keyframe."""
    family = "IP6" if ipaddress.ip_address(host).version == 6 else "IP4"
    return (
        "v=0\r\n"
        f"o=- 0 0 IN {family} {host}\r\n"
        f"s={name}\r\n"
        f"c=IN {family} {host}\r\n"
        "t=0 0\r\n"
        f"m=video {port} RTP/AVP {PAYLOAD_TYPE}\r\n"
        f"a=rtpmap:{PAYLOAD_TYPE} H264/{CLOCK}\r\n"
        f"a=fmtp:{PAYLOAD_TYPE} packetization-mode=1\r\n"
    )


def write_sdp(path: str, text: str) -> None:
    """``text`` into ``path`` whole (a client never reads half of it); ValueError in one line
    naming the node's parameter when it cannot be written."""
    tmp = path + ".tmp"
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except (OSError, ValueError) as exc:
        with contextlib.suppress(OSError, ValueError):
            os.remove(tmp)
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ValueError(
            f"parameter video_sdp: cannot write the stream's SDP to {path!r} ({reason})"
        ) from None


class VideoStream:
    """``send(image, t)``: one RGB image (H x W x 3 uint8) at time ``t`` (s) out as H.264 over
    RTP to ``host:port`` (module doc). Images of another size than the first are refused
    (warned, throttled); a send that fails (the network is down) is warned and the stream goes
    on with the next image. ``close`` ends it."""

    def __init__(
        self,
        host: str,
        port: int,
        width: int,
        height: int,
        rate: float,
        sdp_path: str | None = None,
        name: str = "uvms_sim camera",
        throttle: Throttle | None = None,
    ) -> None:
        import av  # FFmpeg: only a node that streams loads it

        self.host, self.port = check_host(host), check_port(port)
        if not (2 <= width <= 8192 and 2 <= height <= 8192) or width % 2 or height % 2:
            raise ValueError(
                f"video: H.264 in 4:2:0 needs an even image size (2-8192), got {width} x {height}"
            )
        if not (math.isfinite(rate) and 0.0 < rate <= 1000.0):
            raise ValueError(f"video: expected a frame rate of more than 0 to 1000 Hz, got {rate!r}")
        self.width, self.height = width, height
        self.keyint = max(1, math.ceil(rate))  # frames: at least one keyframe a second at the rate
        self.ticks = max(1, round(CLOCK / rate))  # of the RTP clock, between two images at the rate
        self.throttle = throttle or Throttle(5.0)
        self.sdp_path = sdp_path
        if sdp_path:
            write_sdp(sdp_path, sdp(self.host, self.port, name))
        address = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"udp://{address}:{self.port}?pkt_size={PACKET_SIZE}"
        # no RTCP sender reports: on one port with the RTP packets (a udp:// destination) a
        # plain RTP receiver (GStreamer's udpsrc ! rtph264depay) would take them for video
        try:
            self.container = av.open(self.url, mode="w", format="rtp", options={"rtpflags": "skip_rtcp"})
        except (av.FFmpegError, OSError) as exc:
            raise ValueError(
                f"parameter video_host: cannot send to {self.host} port {self.port} ({exc})"
            ) from None
        try:
            stream = cast(
                "CodecStream", self.container.add_stream(ENCODER, rate=Fraction(rate).limit_denominator(1000))
            )
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            stream.time_base = Fraction(1, CLOCK)
            stream.codec_context.time_base = Fraction(1, CLOCK)
            stream.codec_context.gop_size = self.keyint
            stream.codec_context.max_b_frames = 0
            stream.options = dict(ENCODER_OPTIONS)
            self.stream = stream
        except Exception:
            self.container.close()
            raise
        self.t0: float | None = None
        self.last_pts = -1
        self.last_key = -math.inf
        self.frames = 0

    def send(self, image: np.ndarray, t: float) -> bool:
        """Encode and send one image; False when it was not sent (warned)."""
        import av

        if image.shape != (self.height, self.width, 3) or image.dtype != np.uint8:
            expected = f"{self.height} x {self.width} x 3 uint8"
            self.throttle.warn(
                "video-size", f"video: image {image.shape} {image.dtype} is not {expected}: not sent"
            )
            return False
        if self.t0 is None:
            self.t0 = t
        pts = round((t - self.t0) * CLOCK)
        if pts <= self.last_pts:  # time went back (SITL restarted) or stood: the stream's clock goes on
            pts = self.last_pts + self.ticks
            self.t0 = t - pts / CLOCK
        frame = av.VideoFrame.from_ndarray(image, format="rgb24")
        frame.pts, frame.time_base = pts, Fraction(1, CLOCK)
        if pts - self.last_key >= CLOCK:  # a second since the last keyframe (a slow rate, a pause)
            frame.pict_type = av.video.frame.PictureType.I
        try:
            for packet in self.stream.encode(frame):
                if packet.is_keyframe:
                    self.last_key = pts
                self.container.mux(packet)
        except (av.FFmpegError, OSError) as exc:
            self.throttle.warn("video-send", f"video to {self.host}:{self.port} not sent: {exc}")
            return False
        self.last_pts = pts
        self.frames += 1
        return True

    def close(self) -> None:
        import av

        try:
            for packet in self.stream.encode(None):  # nothing is held back (zerolatency), but flush
                self.container.mux(packet)
        except (av.FFmpegError, OSError, ValueError):
            pass
        self.container.close()
