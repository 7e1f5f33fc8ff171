"""The AMQP 0-9-1 fuzz targets.

Every stimulus is drawn from ``strategies091`` (the codec's field definitions) and what the
broker announced (mechanisms, tuning proposal); names of queues and exchanges a stimulus may
create carry the campaign's prefix, so a fuzzer never touches anyone else's entities, and
what a stimulus declared is deleted after its batch.
"""
from __future__ import annotations

import string
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from amqpspec.peer.amqp091 import client_properties
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp091 import (
    PROTOCOL_HEADER, BodyFrame, Frame, HeartbeatFrame, MethodFrame, ProtocolHeader, RawFrame, spec,
)

from . import exec091
from . import strategies091 as S
from .exec091 import FUZZ_FRAME_MAX, STIMULUS_CHANNEL
from .stimulus import Credentials, Stimulus
from .targets import Env, FuzzTarget, register

OTHER_HEADERS = (b"AMQP\x01\x01\x08\x00", b"AMQP\x01\x01\x00\x09", b"AMQP\x01\x01\x00\x0a", b"AMQP\x00\x01\x00\x00",
                 b"AMQP\x03\x01\x00\x00", b"AMQP\x02\x01\x00\x00", b"AMQP\x00\x00\x09\x00", b"AMQP\x00\x00\x09\x02",
                 b"AMQP\x00\x02\x00\x00")


def _runner(start: str) -> Any:
    def run(env: Env, stimulus: Stimulus, transcript: Transcript) -> Any:
        r = exec091.run(env.target, start, stimulus, window=env.window, dialect=env.dialect, transcript=transcript)
        return r.expectation, r.observation, r.stimulus_octets, exec091.declared_names(stimulus, r.observation)
    return run


def _target(name: str, start: str, description: str) -> Any:
    def deco(build: Any) -> FuzzTarget:
        return register(FuzzTarget(name, "0-9-1", start, description, build, _runner(start)))
    return deco


def _stim(*items: Any) -> Stimulus:
    return Stimulus("0-9-1", tuple(items))


def _names(env: Env, kind: str) -> SearchStrategy[str]:
    """Entity names of this campaign: empty (server-named / last declared), prefixed, or
    prefixed and reserved ('amq.'), never an existing entity of anyone else."""
    prefix = env.name(kind)
    tail = st.text(string.ascii_lowercase + string.digits + "-._", max_size=8)
    return st.one_of(st.just(""), tail.map(lambda s: f"{prefix}-{s}"), tail.map(lambda s: f"amq.{prefix}-{s}"))


def _safe(env: Env) -> dict[str, Any]:
    return {"domains": {"exchange-name": _names(env, "x"), "queue-name": _names(env, "q")}}


def _channels(env: Env) -> SearchStrategy[int]:
    top = env.broker.channel_max or 2047
    return st.one_of(st.just(STIMULUS_CHANNEL), st.just(STIMULUS_CHANNEL), st.just(0), st.integers(2, 8),
                     st.sampled_from(sorted({top, min(top + 1, 0xFFFF), 0xFFFF})))


def _broken(frames: SearchStrategy[Frame], env: Env, *, channels: SearchStrategy[int] | None = None) -> SearchStrategy[Frame]:
    """The frames as drawn (mostly), or with their envelope broken, payload cut, octets added."""
    d = env.dialect
    trailing = frames.filter(lambda f: isinstance(f, MethodFrame)).flatmap(
        lambda f: st.binary(min_size=1, max_size=8).map(lambda b: replace(f, trailing=b)))
    return st.one_of(frames, frames, frames, frames.flatmap(lambda f: S.frame_overrides(f, d, channels_=channels)),
                     frames.flatmap(lambda f: S.truncated(f, d)), trailing)


def _step(method_cls: type, env: Env, fields: dict[str, Any]) -> SearchStrategy[Stimulus]:
    """A negotiation step: the method (mostly valid, sometimes malformed, sometimes another
    method altogether), its frame sometimes broken, sometimes after a heartbeat (valid)."""
    d = env.dialect
    valid = S.method(method_cls, d, fields=fields).map(lambda m: MethodFrame(0, m))
    malformed = S.malformed_method(method_cls, d, fields=fields).map(lambda m: MethodFrame(0, m))
    other = S.methods(d, **_safe(env)).map(lambda m: MethodFrame(0, m))
    frame = _broken(st.one_of(valid, valid, valid, malformed, other), env)
    return st.one_of(frame.map(_stim), frame.map(_stim), frame.map(lambda f: _stim(HeartbeatFrame(0), f)))


def _around(value: int, top: int) -> SearchStrategy[int]:
    edges = sorted({v for v in (0, 1, value - 1, value, value + 1, top) if 0 <= v <= top})
    return st.one_of(st.sampled_from(edges), st.integers(0, top))


def padded_declare(channel: int, total: int, dialect: Any = None) -> MethodFrame:
    """A passive exchange.declare of amq.direct padded to exactly ``total`` octets (frame-max edges)."""
    def frame(n: int) -> MethodFrame:
        return MethodFrame(channel, spec.ExchangeDeclare(exchange="amq.direct", type="direct", passive=True,
                                                         arguments={"x-amqpspec-pad": "x" * n}))
    base = len(frame(0).encode(dialect) if dialect is not None else frame(0).encode())
    return frame(max(0, total - base))


# ---------------------------------------------------------------------------- targets

@_target("protocol-header", "fresh", "the 8-octet protocol header: valid, mutated, other AMQP versions, cut short, "
         "garbage, HTTP (4.2.2)")
def protocol_header(env: Env) -> SearchStrategy[Stimulus]:
    base = PROTOCOL_HEADER
    mutated = st.tuples(st.integers(0, 7), st.integers(0, 255)).map(lambda t: base[:t[0]] + bytes((t[1],)) + base[t[0] + 1:])
    data = st.one_of(st.just(base), mutated, mutated, st.sampled_from(OTHER_HEADERS),
                     st.binary(min_size=4, max_size=4).map(lambda b: b"AMQP" + b), st.integers(1, 7).map(lambda k: base[:k]),
                     st.binary(min_size=1, max_size=12), st.just(b"GET / HTTP/1.1\r\nHost: amqpspec\r\n\r\n"))
    return data.map(lambda d: _stim(ProtocolHeader(d) if len(d) == 8 else d))


@_target("start-ok", "after-start", "connection.start-ok after connection.start: mechanism, response (mostly the real "
         "credentials), locale, client-properties; malformed; another method (2.2.4)")
def start_ok(env: Env) -> SearchStrategy[Stimulus]:
    creds = Credentials(env.credentials_length)
    offered = list(env.broker.mechanisms or ["PLAIN"])
    fields = {
        "response": st.one_of(st.just(creds), st.just(creds), st.just(creds), S.longstr(64)),
        "mechanism": st.one_of(st.just("PLAIN"), st.just("PLAIN"), st.sampled_from(offered), S.shortstr(20)),
        "locale": st.one_of(st.just("en_US"), st.just("en_US"), S.shortstr(20)),
        "client_properties": st.one_of(st.just(client_properties()), S.field_table(env.dialect, max_leaves=6)),
    }
    return _step(spec.ConnectionStartOk, env, fields)


@_target("tune-ok", "after-tune", "connection.tune-ok around the broker's proposal (limits above it, frame-max below "
         "frame-min-size, 0), then connection.open as the probe")
def tune_ok(env: Env) -> SearchStrategy[Stimulus]:
    b = env.broker
    fields = {
        "channel_max": _around(b.channel_max or 0, 0xFFFF),
        "frame_max": st.one_of(_around(b.frame_max or 0, (1 << 32) - 1),
                               st.sampled_from((spec.FRAME_MIN_SIZE - 1, spec.FRAME_MIN_SIZE, spec.FRAME_MIN_SIZE + 1))),
        "heartbeat": st.one_of(st.just(0), st.just(0), _around(b.heartbeat or 0, 0xFFFF)),
    }
    return _step(spec.ConnectionTuneOk, env, fields)


@_target("open", "after-tune-ok", "connection.open: the target's virtual host, others, malformed")
def open_(env: Env) -> SearchStrategy[Stimulus]:
    vhost = env.target.vhost
    return _step(spec.ConnectionOpen, env, {"virtual_host": st.one_of(st.just(vhost), st.just(vhost), S.shortstr(40))})


@_target("method-frame", "channel-open", "any method with valid or malformed arguments, unknown class/method ids, on "
         "open, unopened, zero or out-of-range channels, envelope sometimes broken")
def method_frame(env: Env) -> SearchStrategy[Stimulus]:
    d = env.dialect
    safe = _safe(env)
    classes = list(spec.METHODS.values())
    methods = st.one_of(S.methods(d, classes, **safe), S.methods(d, classes, **safe),
                        st.sampled_from([c for c in classes if any(S.malformable(f) for f in c.FIELDS)]).flatmap(
                            lambda c: S.malformed_method(c, d, **safe)),
                        S.unknown_method())
    frames = st.builds(MethodFrame, _channels(env), methods)
    return _broken(frames, env, channels=_channels(env)).map(_stim)


@_target("frame-header", "channel-open", "frame envelopes: undefined types, lying sizes, bad frame-ends, channels, "
         "frames at and over frame-max (4.2.3)")
def frame_header(env: Env) -> SearchStrategy[Stimulus]:
    d = env.dialect
    fm = FUZZ_FRAME_MAX
    base = st.one_of(
        st.just(MethodFrame(STIMULUS_CHANNEL, spec.BasicQos(0, 0, False))),
        st.just(HeartbeatFrame(0)),
        st.builds(BodyFrame, st.just(STIMULUS_CHANNEL), st.binary(max_size=32)),
        st.builds(lambda t, data: RawFrame(STIMULUS_CHANNEL, type=t, data=data), st.sampled_from(S.UNDEFINED_FRAME_TYPES),
                  st.binary(max_size=32)),
        st.sampled_from((fm - 1, fm, fm + 1, 2 * fm)).map(lambda n: padded_declare(STIMULUS_CHANNEL, n, d)),
    )
    single = st.one_of(base, base.flatmap(lambda f: S.frame_overrides(f, d, channels_=_channels(env))))
    return st.one_of(single.map(_stim), st.tuples(single, single).map(lambda t: _stim(*t)))


@_target("content", "channel-open", "basic.publish + content header + bodies: complete, or with body-size lies, missing "
         "or repeated parts, aborted mid-body, wrong class, undefined property flags, channel 0 (4.2.6)")
def content(env: Env) -> SearchStrategy[Stimulus]:
    d = env.dialect
    props = st.one_of(st.just(spec.BasicProperties()), st.just(spec.BasicProperties()), S.properties(spec.BasicProperties, d))
    keys = _names(env, "rk")
    seq = st.one_of(S.content_sequence(STIMULUS_CHANNEL, FUZZ_FRAME_MAX, faults=True, routing_keys=keys, dialect=d, props=props),
                    S.content_sequence(STIMULUS_CHANNEL, FUZZ_FRAME_MAX, faults=True, routing_keys=keys, dialect=d, props=props),
                    S.content_sequence(STIMULUS_CHANNEL, FUZZ_FRAME_MAX, faults=False, routing_keys=keys, dialect=d, props=props))
    return seq.map(lambda frames: _stim(*frames))


@_target("field-table", "channel-open", "field tables and arrays: valid in every type code, lying lengths, undefined "
         "codes, truncated values, illegal or repeated names, nesting past the limit, the 's' conflict (4.2.5.5)")
def field_table(env: Env) -> SearchStrategy[Stimulus]:
    d = env.dialect
    tables = st.one_of(S.field_table(d, max_leaves=8), S.bad_table(d), S.bad_table(d))
    declare = tables.map(lambda t: MethodFrame(STIMULUS_CHANNEL, spec.QueueDeclare(
        queue=env.name("q"), exclusive=True, auto_delete=True, arguments=t)))
    headers = S.content_sequence(STIMULUS_CHANNEL, FUZZ_FRAME_MAX, faults=False, routing_keys=_names(env, "rk"),
                                 dialect=d, props=tables.map(lambda t: spec.BasicProperties(headers=t)))
    return st.one_of(declare.map(_stim), headers.map(lambda fs: _stim(*fs)))


@_target("heartbeat-channel", "channel-open", "heartbeat frames on channel 0 and others, with and without payload, "
         "envelope sometimes broken (4.2.7)")
def heartbeat_channel(env: Env) -> SearchStrategy[Stimulus]:
    beats = st.builds(lambda ch, data: HeartbeatFrame(ch, data=data),
                      st.one_of(st.just(0), st.just(0), st.just(STIMULUS_CHANNEL), st.integers(2, 0xFFFF)),
                      st.one_of(st.just(b""), st.just(b""), st.binary(min_size=1, max_size=8)))
    single = st.one_of(beats, beats, beats.flatmap(lambda f: S.frame_overrides(f, env.dialect)))
    return st.lists(single, min_size=1, max_size=3).map(lambda fs: _stim(*fs))


@_target("ack", "channel-open", "basic.ack / nack / reject of delivery-tags never delivered, on open and unopened "
         "channels (basic.ack multiple/exists)")
def ack(env: Env) -> SearchStrategy[Stimulus]:
    tags = S.unsigned(64)
    methods = st.one_of(
        st.builds(lambda t, m: spec.BasicAck(delivery_tag=t, multiple=m), tags, st.booleans()),
        st.builds(lambda t, m, r: spec.BasicNack(delivery_tag=t, multiple=m, requeue=r), tags, st.booleans(), st.booleans()),
        st.builds(lambda t, r: spec.BasicReject(delivery_tag=t, requeue=r), tags, st.booleans()))
    channels = st.one_of(st.just(STIMULUS_CHANNEL), st.just(STIMULUS_CHANNEL), st.integers(2, 10), st.just(0))
    return st.lists(st.builds(MethodFrame, channels, methods), min_size=1, max_size=3).map(lambda fs: _stim(*fs))
