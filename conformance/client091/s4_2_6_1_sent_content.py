"""4.2.3 and 4.2.6.1: the frames and contents the client itself sends.

The sending rules name every peer: "The frame-end octet MUST always be the hexadecimal value
%xCE" (4.2.3/1); "The channel number MUST be zero for all heartbeat frames, and for method,
header and body frames that refer to the Connection class" (4.2.3/8); "The class-id MUST
match the method frame class id" (4.2.6.1/1) and "The channel number in content frames MUST
NOT be zero" (4.2.6.1/3). Two sentences without a keyword describe the header: "The weight
field is unused and must be zero", and "The body size ... defines the total size of the
content body, that is, the sum of the body sizes for the following content body frames".
Each is checked on what the publish workload sends (two messages of 3000 octets with
frame-max 4096, so that the header and the frames are all exercised).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import HeaderFrame, HeartbeatFrame, MethodFrame

from ._client import open_conversation, unmet

WEIGHT = "The weight field is unused and must be zero."
BODY_SIZE = ("The body size is a 64-bit value that defines the total size of the content body, that is, the sum "
             "of the body sizes for the following content body frames.")


def _published(ctx: Context):  # type: ignore[no-untyped-def]
    p = open_conversation(ctx, "publish", count=2, body="c" * 3000, handshake={"frame_max": 4096, "heartbeat": 0})
    obs = p.serve()
    if not p.responder.contents and obs.framing_error is None and not p.responder.stray:
        unmet("published messages", obs)
    return p, obs


@case("amqp091/4.2.3/client-frame-end-is-ce", role="client",
      title="every frame the client sends ends with the frame-end octet 0xCE",
      clauses=("amqp091:4.2.3/1",))
def frame_end(ctx: Context) -> None:
    p, obs = _published(ctx)
    ctx.record(obs.framing_error is None, expected="a stream of frames each ending in 0xCE",
               observed=obs.framing_error or f"{len(p.peer.sizes)} frames, all well ended")
    p.finish()


@case("amqp091/4.2.3/client-connection-frames-on-channel-zero", role="client",
      title="the client sends connection-class methods and heartbeats on channel 0 only",
      clauses=("amqp091:4.2.3/8",))
def connection_frames_channel_zero(ctx: Context) -> None:
    p, obs = _published(ctx)
    # the handshake methods were read with expect(): their channels are in the transcript
    handshake = [(e.summary.split(" ", 1)[0], e.summary) for e in p.peer.link.transcript.entries
                 if e.dir == "recv" and " connection." in e.summary]
    wrong = [s for ch, s in handshake if ch != "ch=0"]
    wrong += [f.summary() for f in obs.received if (isinstance(f, HeartbeatFrame) or
              (isinstance(f, MethodFrame) and f.method.CLASS_ID == 10)) and f.channel != 0]
    ctx.record(not wrong, expected="connection.* methods and heartbeats on channel 0",
               observed="; ".join(wrong[:4]) or f"{len(handshake)} connection methods, all on channel 0")
    p.finish()


@case("amqp091/4.2.6.1/client-content-header-matches-method", role="client",
      title="the client's content headers have class-id 60 (basic.publish) and a non-zero channel",
      clauses=("amqp091:4.2.6.1/1", "amqp091:4.2.6.1/3"))
def header_matches(ctx: Context) -> None:
    p, obs = _published(ctx)
    headers = [f for f in obs.received if isinstance(f, HeaderFrame)]
    wrong = [f.summary() for f in headers if f.class_id != 60 or f.channel == 0]
    wrong += [str(s) for s in p.responder.stray if "without a content method" in str(s)]  # content on channel 0
    if not headers and not wrong:
        unmet("content headers", obs)
    ctx.record(not wrong, expected="content headers of class 60 on the publishing channel",
               observed="; ".join(wrong[:4]) or f"{len(headers)} headers, class 60, channel {headers[0].channel}")
    p.finish()


@case("amqp091/4.2.6.1/client-header-weight-zero", role="client",
      title="the client's content headers carry weight 0", guideline=WEIGHT)
def weight_zero(ctx: Context) -> None:
    p, obs = _published(ctx)
    headers = [f for f in obs.received if isinstance(f, HeaderFrame)]
    if not headers:
        unmet("content headers", obs)
    wrong = [f.summary() for f in headers if f.weight != 0]
    ctx.record(not wrong, expected="weight 0", observed="; ".join(wrong[:3]) or "weight 0 in every header",
               guideline=WEIGHT)
    p.finish()


@case("amqp091/4.2.6.1/client-body-size-is-sum-of-frames", role="client",
      title="the body-size of each content header is the sum of its body frames", guideline=BODY_SIZE)
def body_size(ctx: Context) -> None:
    p, obs = _published(ctx)
    problems = [str(s) for s in p.responder.stray]
    problems += [f"content of {len(c.body)} octets announced as {c.header.body_size}" for c in p.responder.contents
                 if c.header is not None and len(c.body) != c.header.body_size]
    problems += [f"incomplete content on ch={c.channel}" for c in p.responder.partial.values()]
    if not p.responder.contents and not problems:
        unmet("complete contents", obs)
    ctx.record(not problems, expected="each header's body-size equal to the octets of the body frames after it",
               observed="; ".join(problems[:3]) or f"{len(p.responder.contents)} contents, sizes matching",
               guideline=BODY_SIZE)
    p.finish()
