"""The AMQP 1.0 fuzz targets (defined below, registered on import).

Every stimulus is drawn from ``strategies10`` (the codec's field definitions and its
malformations) and what the broker announced (SASL mechanisms, max-frame-size, channel-max).
Node addresses a stimulus names carry the campaign's prefix (``Env.name``), so a fuzzer never
touches anyone else's queues; they are deleted after the campaign where the broker also
speaks 0-9-1 (``cleanup``).
"""
from __future__ import annotations

import dataclasses
import functools
import string
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from amqpspec.transcript import Transcript
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, ProtocolHeader, RawFrame, SASLFrame, Symbol, spec
from amqpspec.wire.amqp10.frames import AMQP_HEADER, SASL_HEADER, TLS_HEADER
from amqpspec.wire.amqp10.types import Raw, UByte, UInt

from . import exec10
from . import mutate10 as M
from . import strategies10 as S
from .exec10 import RECEIVER_HANDLE, SENDER_HANDLE, SESSION_CHANNEL
from .stimulus import Credentials, Stimulus
from .targets import Env, FuzzTarget, register

OTHER_HEADERS = (b"AMQP\x00\x00\x09\x01", b"AMQP\x01\x01\x00\x09", b"AMQP\x01\x01\x08\x00", b"AMQP\x00\x01\x01\x00",
                 b"AMQP\x00\x02\x00\x00", b"AMQP\x03\x01\x00\x01", b"AMQP\x02\x01\x01\x00", b"AMQP\x05\x01\x00\x00",
                 b"AMQP\x04\x01\x00\x00", b"amqp\x00\x01\x00\x00")
LARGEST_WHOLE = 1 << 20     # the largest oversized frame sent whole (above: its header and a part only)
OVERRIDE_MAX = 1000         # frames whose header is rewritten stay below this (a DOFF can point past them)
UNATTACHED = 7              # a handle no link of the start state uses


def _addresses(env: Env) -> list[str]:
    return [env.name("t"), env.name("q")]


def _runner(start: str) -> Any:
    def run(env: Env, stimulus: Stimulus, transcript: Transcript) -> Any:
        r = exec10.run(env.target, start, stimulus, window=env.window, address=env.name("t"),
                       marker=env.name("mark"), transcript=transcript, hang_window=env.hang_window)
        cleanup = [("queue", a) for a in _addresses(env) + [env.name("mark")]] if start in ("session", "link") else []
        return r.expectation, r.observation, r.stimulus_octets, cleanup
    return run


def _target(name: str, start: str, description: str, needs: Any = None) -> Any:
    def deco(build: Any) -> FuzzTarget:
        extra = {"needs": needs} if needs is not None else {}
        return register(FuzzTarget(name, "1.0", start, description, build, _runner(start), **extra))
    return deco


def _stim(*items: Any) -> Stimulus:
    return Stimulus("1.0", tuple(items))


#: the run id of the node names in pools shared by every slot and campaign of the process
#: (drawn once with these names, seen by each slot through :func:`_renamed`)
_CANON_RUN = "0" * 32


def _key(name: str, env: Env) -> tuple[Any, ...]:
    """The key of a target's shared pools (``mutate10.pool``): what its strategies depend on
    other than node names. Each slot of each campaign builds its strategies anew (names of
    its own); keyed, their pools are filled once per process, not once per slot and campaign
    (a value is a hypothesis draw of a few milliseconds: with 16 slots the filling took half
    of a link target's CPU)."""
    mechanisms = tuple(str(m) for m in (env.broker.mechanisms or ()))
    return ("1.0", name, env.target.host, env.credentials_length, mechanisms, _channel_max(env))


def _canonical(env: Env) -> Env:
    """``env`` with the node names of the shared pools."""
    return dataclasses.replace(env, run_id=_CANON_RUN, worker=0)


def _renamed(env: Env) -> Any:
    """Makes a value drawn with :func:`_canonical`'s names ``env``'s: a name (a string starting
    with the canonical prefix) or a source or target addressed to one -- the only places a
    target's pooled values hold names (``_names``, ``_addressed``). The value is the one the
    strategy would have drawn with ``env``'s names: the names take no choices of their own."""
    old, new = _canonical(env).name(""), env.name("")

    def fix(v: Any) -> Any:
        if old == new:
            return v
        if isinstance(v, str) and v.startswith(old):
            return new + v[len(old):] if type(v) is str else type(v)(new + v[len(old):])
        if isinstance(v, (spec.Source, spec.Target)) and isinstance(v.address, str) and v.address.startswith(old):
            return v.replace(address=fix(v.address))
        return v
    return fix


def _names(env: Env) -> SearchStrategy[str]:
    tail = st.text(string.ascii_lowercase + string.digits + "-._", max_size=8)
    return st.one_of(st.sampled_from(_addresses(env)), tail.map(lambda s: f"{env.name('n')}-{s}"))


def _channel_max(env: Env) -> int:
    return env.broker.channel_max if env.broker.channel_max is not None else 65535


def _channels(env: Env, usual: int) -> SearchStrategy[int]:
    top = _channel_max(env)
    return st.one_of(st.just(usual), st.just(usual), st.just(usual), st.integers(0, 8),
                     st.sampled_from(sorted({top, min(top + 1, 0xFFFF), 0xFFFF})))


def _channel_list(env: Env, usual: int) -> tuple[int, ...]:
    """The channels a frame may be moved to (a mutation): the usual one, small ones, channel-max and past it."""
    top = _channel_max(env)
    return tuple(sorted({usual, *range(0, 9), top, min(top + 1, 0xFFFF), 0xFFFF}))


def _broken(frames: SearchStrategy[Any], env: Env, usual: int = SESSION_CHANNEL) -> SearchStrategy[Any]:
    """The frames as drawn (mostly), or with their header written wrong, or cut short."""
    small = frames.filter(lambda f: len(f.encode()) < OVERRIDE_MAX)  # DOFF past the end needs SIZE/4 < 255
    return st.one_of(frames, frames, frames, frames, small.flatmap(lambda f: S.frame_overrides(f, channels_=_channels(env, usual))),
                     frames.flatmap(S.truncated_frame))


def _addressed(cls: type, env: Env) -> SearchStrategy[Any]:
    """A source or target whose address is ours (or absent): never anyone else's node. Mostly
    only the address is drawn; one in three has every field of the term drawn as well."""
    address = st.one_of(st.none(), _names(env))
    return st.one_of(address.map(lambda a: cls(address=a)), address.map(lambda a: cls(address=a)),
                     st.builds(lambda t, a: t.replace(address=a), S.composite(cls), address))


def _exact(make: Any, size: int) -> Any:
    """``make(n)`` builds a frame from a padding length; the n giving exactly ``size`` octets."""
    n = max(0, size - 64)
    for _ in range(16):
        frame = make(n)
        diff = len(frame.encode()) - size
        if diff == 0:
            return frame
        n = max(0, n - diff)
    return make(n)


def padded_begin(channel: int, total: int) -> AMQPFrame:
    """A begin of exactly ``total`` octets (a properties entry carries the padding)."""
    return _exact(lambda n: AMQPFrame(channel, spec.Begin(next_outgoing_id=0, incoming_window=2048, outgoing_window=2048,
                                                          properties={Symbol("x-amqpspec-pad"): b"x" * n})), total)


def _oversized(env: Env, channel: int) -> SearchStrategy[Any]:
    """A frame one octet over the broker's max-frame-size: whole when that is affordable, else
    its header claiming the size and a first part only."""
    limit = env.broker.frame_max or 512
    if limit + 1 <= LARGEST_WHOLE:
        return st.sampled_from((limit, limit + 1)).map(lambda n: padded_begin(channel, n))
    claimed = min(limit + 1, 0xFFFFFFFF)
    if claimed <= limit:  # the broker takes any size a SIZE field can say: nothing is oversized
        return st.just(padded_begin(channel, 600))
    return st.just(dataclasses.replace(padded_begin(channel, 600), size=claimed))


# ---------------------------------------------------------------------------- targets

@_target("protocol-header", "fresh", "the 8-octet protocol header: AMQP, SASL and TLS ids, mutated, other versions "
         "and protocols, cut short, garbage, HTTP (2.2)")
def protocol_header(env: Env) -> SearchStrategy[Stimulus]:
    bases = st.sampled_from((AMQP_HEADER, SASL_HEADER, TLS_HEADER))
    mutated = st.tuples(bases, st.integers(0, 7), st.integers(0, 255)).map(
        lambda t: t[0][:t[1]] + bytes((t[2],)) + t[0][t[1] + 1:])
    data = st.one_of(bases, bases, mutated, mutated, st.sampled_from(OTHER_HEADERS),
                     st.binary(min_size=4, max_size=4).map(lambda b: b"AMQP" + b),
                     st.tuples(bases, st.integers(1, 7)).map(lambda t: t[0][:t[1]]),
                     st.binary(min_size=1, max_size=12), st.just(b"GET / HTTP/1.1\r\nHost: amqpspec\r\n\r\n"))
    return data.map(lambda d: _stim(ProtocolHeader(d) if len(d) == 8 else d))


def _needs_sasl(env: Env) -> str:
    if env.broker.mechanisms:
        return ""
    return "the broker offered no SASL mechanisms (a URL without credentials does not use SASL)"


@_target("sasl-init", "sasl", "sasl-init after sasl-mechanisms: mechanism, initial-response (mostly the real "
         "credentials), hostname; malformed; other SASL bodies; AMQP frames (5.3)", needs=_needs_sasl)
def sasl_init(env: Env) -> SearchStrategy[Stimulus]:
    creds = Credentials(env.credentials_length)
    offered = list(env.broker.mechanisms or ["PLAIN"])
    own = {
        "mechanism": st.one_of(st.just(Symbol("PLAIN")), st.sampled_from([Symbol(m) for m in offered]),
                               S.primitive("symbol")),
        "initial_response": st.one_of(st.just(creds), st.just(creds), st.none(), st.binary(max_size=64)),
        "hostname": st.one_of(st.none(), st.just(env.target.host), S.primitive("string")),
    }
    others = st.sampled_from(spec.SASL_FRAMES).flatmap(S.composite)
    key = _key("sasl-init", env)
    opens, bodies = M.pool(S.composite(spec.Open)), M.pool(others, (key, "others"))
    sh = M.shape(spec.SaslInit, (0, 1, 0xFFFF), own, [S.malformed_composite(spec.SaslInit), bodies], key=key)
    amqp = M.shape(spec.Open, (0, 1), None, [])
    init = SASLFrame(spec.SaslInit(mechanism=Symbol("PLAIN"), initial_response=creds))
    bases = (lambda i: init, lambda i: SASLFrame(bodies[i]), lambda i: AMQPFrame(0, opens[i]), lambda i: EmptyFrame(0))
    one = M.frames(bases, lambda f: amqp if isinstance(f, AMQPFrame) else sh)
    return st.one_of(one.map(_stim), st.tuples(one, one).map(lambda t: _stim(*t)))


@_target("open", "header", "open after the AMQP header exchange: container-id, max-frame-size around 512, "
         "channel-max, idle-time-out, locales, capabilities; malformed; another performative (2.4.1, 2.7.1)")
def open_(env: Env) -> SearchStrategy[Stimulus]:
    own = {
        "container_id": st.one_of(st.just("amqpspec-fuzz"), S.primitive("string")),
        "hostname": st.one_of(st.none(), st.just(env.target.host), S.primitive("string")),
        "max_frame_size": st.one_of(st.none(), st.sampled_from((0, 1, 511, 512, 513, 4096, 65536, 0xFFFFFFFF)).map(UInt),
                                    S.primitive("uint")),
        "channel_max": st.one_of(st.none(), st.sampled_from((0, 1, 0xFFFF)), S.primitive("ushort")),
        "idle_time_out": st.one_of(st.none(), st.sampled_from((0, 1, 100, 1000)).map(UInt)),
    }
    others = st.sampled_from(spec.PERFORMATIVES).flatmap(S.composite)
    key = _key("open", env)
    malformed, other = M.pool(S.malformed_composite(spec.Open)), M.pool(others, (key, "others"))
    sh = M.shape(spec.Open, _channel_list(env, 0), own, [malformed, other], key=key)
    base = AMQPFrame(0, spec.Open(container_id="amqpspec-fuzz"))
    frames = M.frames((lambda i: base, lambda i: AMQPFrame(0, malformed[i]), lambda i: AMQPFrame(0, other[i])),
                      lambda f: sh)
    return st.one_of(frames.map(_stim), frames.map(_stim), frames.map(lambda f: _stim(EmptyFrame(0), f)),
                     st.just(_stim(EmptyFrame(0))))


@_target("begin", "open", "begin on used and unused channels, above channel-max, answering sessions never begun, "
         "window and handle-max edges; malformed; end and close (2.5, 2.7.2)")
def begin(env: Env) -> SearchStrategy[Stimulus]:
    edges = st.sampled_from((0, 1, 0x7FFFFFFF, 0xFFFFFFFF)).map(UInt)
    own = {
        "remote_channel": st.one_of(st.none(), S.primitive("ushort"), st.sampled_from((0, 1, 2))),
        "next_outgoing_id": st.one_of(edges, S.primitive("uint")),
        "incoming_window": st.one_of(edges, S.primitive("uint")),
        "outgoing_window": st.one_of(edges, S.primitive("uint")),
        "handle_max": st.one_of(st.none(), edges),
    }
    sh = M.shape(spec.Begin, _channel_list(env, 1), own, [S.malformed_composite(spec.Begin)], key=_key("begin", env))
    malformed = M.pool(S.malformed_composite(spec.Begin))
    base = AMQPFrame(1, spec.Begin(next_outgoing_id=0, incoming_window=2048, outgoing_window=2048))
    bases = (lambda i: base, lambda i: AMQPFrame(1, malformed[i]), lambda i: AMQPFrame(1, spec.End()),
             lambda i: AMQPFrame(1, spec.Close()))
    frames = M.frames(bases, lambda f: sh)
    return st.lists(frames, min_size=1, max_size=3).map(lambda fs: _stim(*fs))


@_target("attach", "link", "attach on a session with a sender (handle 0) and a receiver (handle 1): names old and "
         "new, handles in use and out of range, roles, source/target terms, settle modes; malformed (2.6, 2.7.3)")
def attach(env: Env) -> SearchStrategy[Stimulus]:
    hm = 0xFFFFFFFF
    real, env = env, _canonical(env)   # the pools are drawn with the canonical names, seen with the real ones
    names = st.one_of(_names(env), st.sampled_from([f"{env.name('t')}-snd", f"{env.name('t')}-rcv"]))
    own = {
        "name": names,
        "handle": st.one_of(st.sampled_from((SENDER_HANDLE, RECEIVER_HANDLE, 2, 3, hm)).map(UInt), S.primitive("uint")),
        "role": st.booleans(),
        "snd_settle_mode": st.one_of(st.none(), st.sampled_from((0, 1, 2, 3, 255)).map(UByte)),
        "rcv_settle_mode": st.one_of(st.none(), st.sampled_from((0, 1, 2, 255)).map(UByte)),
        "source": st.one_of(st.none(), _addressed(spec.Source, env)),
        "target": st.one_of(st.none(), _addressed(spec.Target, env)),
    }
    malformed = M.View(M.pool(S.malformed_composite(spec.Attach)), _own_addresses(real))
    sh = M.shape(spec.Attach, _channel_list(env, SESSION_CHANNEL), own, [malformed], key=_key("attach", env),
                 view=_renamed(real))
    t, ch = real.name("t"), SESSION_CHANNEL
    sender = AMQPFrame(ch, spec.Attach(name=f"{t}-new-snd", handle=UInt(2), role=spec.Role.SENDER, source=spec.Source(),
                                       target=spec.Target(address=t), initial_delivery_count=0))
    receiver = AMQPFrame(ch, spec.Attach(name=f"{t}-new-rcv", handle=UInt(3), role=spec.Role.RECEIVER,
                                         source=spec.Source(address=t), target=spec.Target()))
    frames = M.frames((lambda i: sender, lambda i: receiver, lambda i: AMQPFrame(ch, malformed[i])), lambda f: sh)
    return st.lists(frames, min_size=1, max_size=2).map(lambda fs: _stim(*fs))


def _own_addresses(env: Env) -> Any:
    """Re-addresses the source and target of a drawn attach to our nodes (where they are terms)."""
    def fix(a: Any) -> Any:
        try:
            changes = {}
            for attr in ("source", "target"):
                term = getattr(a, attr, None)
                if isinstance(term, (spec.Source, spec.Target)):
                    changes[attr] = term.replace(address=env.name("t"))
            return a.replace(**changes) if changes else a
        except (AttributeError, TypeError, ValueError):
            return a
    return fix


@functools.lru_cache(maxsize=1)
def _payloads() -> SearchStrategy[Any]:
    """Message octets: valid messages (mostly), cut short, sections out of order or repeated,
    a value of another type where a section belongs, random octets."""
    from amqpspec.wire.amqp10.message import Message

    small = st.one_of(st.binary(max_size=64).map(lambda b: Message(body=[spec.Data(b)])),
                      S.primitive("string").map(lambda v: Message(body=spec.AmqpValue(v))))
    valid = st.one_of(small, small, S.message()).map(lambda m: m.encode())  # mostly a small one, sometimes any
    sections = st.lists(st.one_of(S.composite(spec.Header), S.composite(spec.Properties), S.composite(spec.Data),
                                  S.composite(spec.AmqpValue), S.composite(spec.Footer)), min_size=1, max_size=4)
    shuffled = sections.map(lambda xs: b"".join(S.T.encode(x) for x in xs))
    cut = valid.filter(lambda b: len(b) > 1).flatmap(lambda b: st.integers(1, len(b) - 1).map(lambda k, b=b: b[:k]))
    foreign = st.one_of(S.values(max_leaves=4), S.malformed_value()).map(S.T.encode)
    return st.one_of(valid, valid, valid, shuffled, cut, foreign, st.binary(max_size=64), st.just(b""))


@_target("transfer", "link", "transfers on the attached sender link: delivery-ids in and out of order, more/aborted, "
         "settled, message sections valid and malformed, on the receiver's or no link (2.6.12-14, 2.7.5, 3.2)")
def transfer(env: Env) -> SearchStrategy[Stimulus]:
    own = {
        "handle": st.sampled_from((SENDER_HANDLE, RECEIVER_HANDLE, UNATTACHED)).map(UInt),
        "delivery_id": st.one_of(st.integers(0, 3).map(UInt), S.primitive("uint")),
        "delivery_tag": st.one_of(st.binary(max_size=40), st.sampled_from((b"t0", b"t1"))),
        "message_format": st.one_of(st.just(UInt(0)), S.primitive("uint")),
        "settled": st.booleans(), "more": st.booleans(), "aborted": st.booleans(), "resume": st.booleans(),
        "rcv_settle_mode": st.sampled_from((0, 1, 2)).map(UByte),
        "state": st.one_of(S.composite(spec.Accepted), S.composite(spec.Rejected), S.composite(spec.Received)),
    }
    sh = M.shape(spec.Transfer, _channel_list(env, SESSION_CHANNEL), own, [S.malformed_composite(spec.Transfer)],
                 key=_key("transfer", env))
    payloads = M.pool(_payloads())

    def at(k: int) -> SearchStrategy[Any]:
        def base(i: int) -> AMQPFrame:
            return AMQPFrame(SESSION_CHANNEL, spec.Transfer(handle=UInt(SENDER_HANDLE), delivery_id=UInt(k),
                                                            delivery_tag=f"t{k}".encode(), message_format=UInt(0)),
                             payloads[i])
        return M.frames((base,), lambda f: sh)
    return st.one_of(at(0).map(_stim), st.tuples(at(0), at(1)).map(lambda t: _stim(*t)),
                     st.tuples(at(0), at(1), at(2)).map(lambda t: _stim(*t)))


@_target("flow-disposition", "link", "flow and disposition: unknown handles, credit and counts at their edges, echo, "
         "drain, delivery ranges never sent, each outcome (2.6.7, 2.7.4, 2.7.6)")
def flow_disposition(env: Env) -> SearchStrategy[Stimulus]:
    edges = st.one_of(st.sampled_from((0, 1, 2, 0x7FFFFFFF, 0xFFFFFFFF)).map(UInt), S.primitive("uint"))
    handles = st.one_of(st.sampled_from((SENDER_HANDLE, RECEIVER_HANDLE, UNATTACHED, 0xFFFFFFFF)).map(UInt), st.none())
    flow_own = {f: edges for f in ("next_incoming_id", "incoming_window", "next_outgoing_id", "outgoing_window",
                                   "delivery_count", "link_credit", "available")}
    flow_own.update(handle=handles, drain=st.booleans(), echo=st.booleans())
    outcomes = st.one_of(st.none(), *[S.composite(c) for c in (spec.Accepted, spec.Rejected, spec.Released,
                                                                spec.Modified, spec.Received)])
    disp_own = {"role": st.booleans(), "first": edges, "last": edges, "settled": st.booleans(), "state": outcomes,
                "batchable": st.booleans()}
    chans = _channel_list(env, SESSION_CHANNEL)
    mflow, mdisp = S.malformed_composite(spec.Flow), S.malformed_composite(spec.Disposition)
    key = _key("flow-disposition", env)
    shapes = {spec.Flow: M.shape(spec.Flow, chans, flow_own, [mflow, mdisp], key=(key, "flow")),
              spec.Disposition: M.shape(spec.Disposition, chans, disp_own, [mdisp, mflow], key=(key, "disposition"))}
    pf, pd = M.pool(mflow), M.pool(mdisp)
    ch = SESSION_CHANNEL
    session_flow = AMQPFrame(ch, spec.Flow(next_incoming_id=UInt(0), incoming_window=UInt(2048),
                                           next_outgoing_id=UInt(0), outgoing_window=UInt(2048)))
    link_flow = AMQPFrame(ch, spec.Flow(next_incoming_id=UInt(0), incoming_window=UInt(2048), next_outgoing_id=UInt(0),
                                        outgoing_window=UInt(2048), handle=UInt(RECEIVER_HANDLE),
                                        delivery_count=UInt(0), link_credit=UInt(10)))
    disposition = AMQPFrame(ch, spec.Disposition(role=spec.Role.RECEIVER, first=UInt(0), last=UInt(0), settled=True,
                                                 state=spec.Accepted()))
    bases = (lambda i: session_flow, lambda i: link_flow, lambda i: disposition, lambda i: AMQPFrame(ch, pf[i]),
             lambda i: AMQPFrame(ch, pd[i]))
    frames = M.frames(bases, lambda f: shapes.get(type(getattr(f, "performative", None)), shapes[spec.Flow]))
    return st.lists(frames, min_size=1, max_size=3).map(lambda fs: _stim(*fs))


@_target("frame-header", "session", "frame headers: SIZE below 8 or lying, DOFF below 2 or past the end, undefined "
         "TYPEs, SASL frames after open, extended headers, channels above channel-max, frames over max-frame-size, "
         "empty frames (2.3, 2.4.5, 2.7.1)")
def frame_header(env: Env) -> SearchStrategy[Stimulus]:
    begin0 = AMQPFrame(1, spec.Begin(next_outgoing_id=0, incoming_window=2048, outgoing_window=2048))
    small = st.one_of(
        st.builds(EmptyFrame, _channels(env, 0)),
        st.just(begin0),
        st.builds(lambda t, d: RawFrame(SESSION_CHANNEL, type=t, data=d), st.sampled_from(S.UNDEFINED_FRAME_TYPES),
                  st.binary(max_size=32)),
        st.builds(lambda b: SASLFrame(b), st.sampled_from(spec.SASL_FRAMES).flatmap(S.composite)),
        st.builds(lambda ch: dataclasses.replace(begin0, channel=ch), _channels(env, 1)),
    )
    single = st.one_of(small, small, small, _oversized(env, 1),
                       small.flatmap(lambda f: S.frame_overrides(f, channels_=_channels(env, 0))))
    return st.one_of(single.map(_stim), st.tuples(single, single).map(lambda t: _stim(*t)))


@_target("types", "session", "malformed AMQP values inside performative fields: deep nesting, zero-width arrays "
         "claiming billions of elements, undefined constructors, lying sizes and counts, described-type "
         "confusion (1.2-1.6)")
def types(env: Env) -> SearchStrategy[Stimulus]:
    bad = st.one_of(S.malformed_value(), S.malformed_value(), S.zero_width_array(), S.deep_nesting())

    def poke(perf: Any, data: Any) -> Any:
        f = data.draw(st.sampled_from(perf.FIELDS))
        return perf.replace(**{f.attr: data.draw(bad)})

    attach_ = st.builds(lambda n: spec.Attach(name=n, handle=2, role=False, source=spec.Source(),
                                              target=spec.Target(address=env.name("t")), initial_delivery_count=0),
                        _names(env))
    bases = st.one_of(
        st.builds(lambda c: (1, c), st.just(spec.Begin(next_outgoing_id=0, incoming_window=2048, outgoing_window=2048))),
        attach_.map(lambda a: (SESSION_CHANNEL, a)),
        st.just((SESSION_CHANNEL, spec.Flow(next_incoming_id=0, incoming_window=2048, next_outgoing_id=0,
                                            outgoing_window=2048))),
    )
    poked = st.builds(lambda cp, data: AMQPFrame(cp[0], poke(cp[1], data)), bases, st.data())
    confused = st.builds(lambda cp, data: AMQPFrame(cp[0], data.draw(S.malformed_composite(type(cp[1])))), bases, st.data())
    raw = st.builds(lambda v: AMQPFrame(SESSION_CHANNEL, Raw(v)),
                    st.one_of(S.deep_nesting(), S.zero_width_array()).map(lambda r: bytes(r.data)))
    return st.one_of(poked, poked, confused, raw).map(_stim)


__all__ = ["padded_begin", "OTHER_HEADERS"]
