"""What the suite does to a broker outside a case: one home, used by the runner, fuzz and replay.

* :func:`probe` -- connect and authenticate once, learn the broker's identity; a failure is the
  user's one-line :class:`~amqpspec.errors.ConnectError`, worded after what the broker did
  (refused the login, went quiet, flooded heartbeats, is not AMQP);
* :func:`detect_protocol` -- which AMQP a URL speaks;
* :func:`problem` -- does the broker still serve a fresh, well-behaved client (liveness);
* :func:`restart` -- run ``--restart-command`` and wait until the broker serves again;
* :func:`speaks_091` -- whether a broker also speaks 0-9-1, which every deletion uses (AMQP 1.0
  has no standard way to delete a node);
* :func:`delete` and :func:`absent` -- the one routine that deletes queues and exchanges (and the
  passive declares that tell which names exist), on a connection of its own, with bounded waits.

They live together because copies of them drifted: three deletion loops of which only one
reconnected after a connection.close, two probes, a fuzz oracle that built an empty runner to
reach its restart.
"""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from typing import Any, Callable, Iterable

from amqpspec.errors import ConnectError
from amqpspec.peer.base import Closed, DeadlineExceeded, PeerError
from amqpspec.target import BrokerInfo, Target
from amqpspec.transcript import Transcript

PROBE_TIMEOUT_S = 10.0
DETECT_TIMEOUT_S = 5.0
LIVENESS_TIMEOUT_S = 3.0
CREDIT_PROBE_S = 1.0       # credit on a fresh sending link, counted from its attach's answer (sent at once)
RESTART_WAIT_S = 60.0
DELETE_BUDGET_S = 5.0      # the whole deletion: a broker that never answers must not stall a run
DELETE_REPLY_S = 0.5       # one delete's answer
NAME_MAX_OCTETS = 255      # a short string (0-9-1 queue and exchange names)
OUTPUT_TAIL = 300          # characters of a failing restart command's output kept in its note

NO_ANSWER = "a fresh client got no answer at one step"
NO_CREDIT = "a fresh client's sending link got no credit"


# ---------------------------------------------------------------------------- probing

def connect(target: Target, timeout: float) -> Any:
    """A raw 0-9-1 connection for the suite's own use; failure is the user's one-line error."""
    from amqpspec.peer.amqp091 import Peer

    try:
        return Peer.connect(target, Transcript(), time.monotonic() + timeout)
    except PeerError as exc:
        raise ConnectError(f"{exc} ({target.url()})") from None


def probe(target: Target, protocol: str = "0-9-1", timeout: float = PROBE_TIMEOUT_S) -> BrokerInfo:
    """Connects and authenticates once, to check reachability and learn the broker's identity."""
    return _probe_10(target, timeout) if protocol == "1.0" else _probe_091(target, timeout)


def _probe_091(target: Target, timeout: float) -> BrokerInfo:
    from amqpspec.peer.amqp091 import UnexpectedReply

    peer = connect(target, timeout)
    try:
        peer.handshake(timeout=timeout)  # every step bounded by the connection's deadline
        return peer.broker_info()
    except UnexpectedReply as exc:
        raise ConnectError(handshake_failure_091(target, peer, exc)) from None
    except DeadlineExceeded:
        raise ConnectError(f"{target.url()} did not complete the handshake within {timeout:g}s") from None
    finally:
        peer.close()


def _probe_10(target: Target, timeout: float) -> BrokerInfo:
    from amqpspec.peer import amqp10

    try:
        peer = amqp10.Peer.connect(target, Transcript(), time.monotonic() + timeout)
    except PeerError as exc:
        raise ConnectError(f"{exc} ({target.url()})") from None
    try:
        peer.handshake(timeout=timeout)
        return peer.broker_info()
    except amqp10.UnexpectedReply as exc:
        raise ConnectError(handshake_failure_10(target, peer, exc)) from None
    except DeadlineExceeded:
        raise ConnectError(f"{target.url()} did not complete the handshake within {timeout:g}s") from None
    finally:
        peer.close()


def _summary(got: Any) -> str:
    return "no answer" if got is None else (got.summary() if hasattr(got, "summary") else repr(got))


def _silence(transcript: Transcript) -> float:
    """Seconds since the suite last sent something on this connection."""
    sent = [e.t for e in transcript.entries if e.dir == "send"]
    return time.monotonic() - transcript.start - (sent[-1] if sent else 0.0)


def _count_received(transcript: Transcript, marker: str) -> tuple[int, bool]:
    """How many received entries carry ``marker`` in their summary, and whether the transcript
    stopped recording (a flood fills it: the count is then a lower bound)."""
    n = sum(1 for e in transcript.entries if e.dir == "recv" and marker in e.summary)
    return n, transcript.elided > 0


# what the suite sent that a step's answer was due to (0-9-1: the method each wait is for)
ANSWERS_091 = {"connection.start": "our protocol header", "connection.tune": "our connection.start-ok",
               "connection.open-ok": "our connection.open"}


def handshake_failure_091(target: Target, peer: Any, exc: Any) -> str:
    """The one-line reason a 0-9-1 handshake failed, after what the broker did.

    Only a 403 close, or the socket closed right after connection.start-ok, is a refused login
    (RabbitMQ does either): a broker that goes quiet or floods heartbeats is reported as that.
    """
    from amqpspec.wire.amqp091 import HeartbeatFrame, MethodFrame

    got, url = exc.got, target.url()
    if isinstance(got, MethodFrame) and got.method.NAME == "connection.close":
        code, text = got.method.reply_code, got.method.reply_text  # type: ignore[attr-defined]
        if code == 403:
            return f"login refused for user {target.username!r} at {url}: {code} {text}"
        if code == 402 or (code == 530 and "vhost" in str(text).lower()):
            return f"virtual host {target.vhost!r} refused at {url}: {code} {text}"
        return f"broker closed the handshake at {url}: {code} {text}"
    step = next((name for name in ANSWERS_091 if exc.wanted.startswith(name)), "")
    after = ANSWERS_091.get(step, "our last step")
    transcript = peer.link.transcript
    if got is None:
        beats, more = _count_received(transcript, "heartbeat")
        if beats:
            return (f"{url} sent {'more than ' if more else ''}{beats} heartbeat frame(s) and no {step or exc.wanted} "
                    f"within {_silence(transcript):.0f}s of {after} (a heartbeat flood where the handshake was due)")
        return f"{url} did not answer {after} within {_silence(transcript):.0f}s"
    if step == "connection.start":
        if isinstance(got, HeartbeatFrame):
            return (f"{url} sent heartbeat frames where connection.start was due: it does not speak AMQP 0-9-1 "
                    "as a broker")
        if not isinstance(got, Closed):
            return f"{url} does not speak AMQP 0-9-1: it answered {_summary(got)}"
    if isinstance(got, Closed):
        if step == "connection.tune":
            return (f"login refused for user {target.username!r} at {url} "
                    f"(the broker closed the connection right after connection.start-ok)")
        return f"{url} closed the connection ({got.how}) after {after}"
    return f"handshake with {url} failed: expected {exc.wanted}, got {_summary(got)}"


def _answered_10(wanted: str) -> str:
    """What the suite sent that a 1.0 handshake wait is the answer to."""
    if "protocol header" in wanted or wanted.startswith("sasl-mechanisms"):
        return "our protocol header"
    if wanted.startswith("sasl-outcome"):
        return "our sasl-init"
    if wanted.startswith("open"):
        return "our open"
    return "our last step"


def handshake_failure_10(target: Target, peer: Any, exc: Any) -> str:
    """The one-line reason an AMQP 1.0 handshake failed, after what the broker did (as for 0-9-1:
    only a sasl-outcome that refuses, or the socket closed right after sasl-init, is a refused login)."""
    from amqpspec.peer import amqp10

    got, url, wanted = exc.got, target.url(), exc.wanted
    after = _answered_10(wanted)
    transcript = peer.link.transcript
    if isinstance(got, amqp10.SASLFrame) and getattr(got.body, "NAME", "") == "sasl-outcome":
        return f"login refused for user {target.username!r} at {url} (sasl-outcome {got.body.summary()})"
    if got is None:
        empties, more = _count_received(transcript, "empty frame")
        if empties:
            return (f"{url} sent {'more than ' if more else ''}{empties} empty frame(s) (heartbeats) and no "
                    f"{wanted} within {_silence(transcript):.0f}s of {after} (a heartbeat flood where the handshake "
                    "was due)")
        return f"{url} did not answer {after} within {_silence(transcript):.0f}s"
    if isinstance(got, Closed):
        if after == "our sasl-init":
            return (f"login refused for user {target.username!r} at {url} "
                    "(the broker closed the connection right after sasl-init, without a sasl-outcome)")
        return f"{url} closed the connection ({got.how}) after {after}"
    if after == "our protocol header" and not isinstance(got, amqp10.ProtocolHeader) and peer.stage == "new":
        return f"{url} does not speak AMQP 1.0: it answered {exc}"
    return f"AMQP 1.0 handshake with {url} failed: {exc}"


def detect_protocol(target: Target, timeout: float = DETECT_TIMEOUT_S) -> str:
    """Which AMQP the broker speaks: sends the 0-9-1 header and reads the answer."""
    from amqpspec.wire.amqp091 import MethodFrame, ProtocolHeader

    peer = connect(target, timeout)
    try:
        peer.send(ProtocolHeader())
        first = peer.recv(timeout)
    finally:
        peer.abort()
    if isinstance(first, MethodFrame) and first.method.NAME == "connection.start":
        return "0-9-1"
    if isinstance(first, ProtocolHeader) and first.well_formed and first.data[5:8] == b"\x01\x00\x00":
        return "1.0"
    shown = "nothing" if first is None else _summary(first)
    raise ConnectError(f"cannot tell which AMQP {target.url()} speaks: it answered {shown}; use --protocol")


_SPEAKS_091: dict[tuple[str, str, int, str], bool] = {}
_SPEAKS_LOCK = threading.Lock()


def speaks_091(target: Target, timeout: float = 3.0) -> bool:
    """Whether the broker at ``target`` answers the 0-9-1 header (asked once per address)."""
    key = (target.scheme, target.host, target.port, target.vhost)
    with _SPEAKS_LOCK:
        known = _SPEAKS_091.get(key)
    if known is None:
        try:
            known = detect_protocol(target, timeout) == "0-9-1"
        except ConnectError:
            return False  # unreachable now: not remembered, the broker may be restarting
        with _SPEAKS_LOCK:
            _SPEAKS_091[key] = known
    return known


def can_delete(target: Target, protocol: str) -> bool:
    """Whether :func:`delete` can reach the broker of a run in ``protocol`` (it deletes over 0-9-1)."""
    return protocol == "0-9-1" or speaks_091(target)


# ---------------------------------------------------------------------------- liveness

def fresh_client_problem(peer_cls: Any, unexpected: type[Exception], target: Target, timeout: float,
                         steps: Callable[[Any], None]) -> str:
    """Empty when a fresh client of ``peer_cls`` connects and gets an answer at each of ``steps``
    (called with the handshaken peer); else the problem. An ``unexpected`` error (the peer's
    no-answer error) is reported as such, any other peer error by its own text."""
    try:
        peer = peer_cls.connect(target, Transcript(), time.monotonic() + timeout)
    except PeerError as exc:
        return str(exc)
    try:
        peer.handshake(timeout=timeout)
        steps(peer)
        return ""
    except unexpected as exc:
        return f"{NO_ANSWER}: {exc}"
    except PeerError as exc:
        return str(exc)
    finally:
        peer.close(timeout=0.5)


def problem_091(target: Target, timeout: float = LIVENESS_TIMEOUT_S) -> str:
    """AMQP 0-9-1: handshake, a channel, and an answer to a queue.declare (a broker can accept
    connections and still be wedged)."""
    from amqpspec.peer.amqp091 import Peer, UnexpectedReply
    from amqpspec.wire.amqp091 import spec

    def steps(peer: Any) -> None:
        ch = peer.open_channel(timeout=timeout)
        # any answer proves the broker is working, even a refusal of this declare
        peer.call(ch, spec.QueueDeclare(queue=f"amqpspec-liveness-{uuid.uuid4().hex}", exclusive=True,
                                        auto_delete=True), ("queue.declare-ok", "channel.close"), timeout)

    return fresh_client_problem(Peer, UnexpectedReply, target, timeout, steps)


class _NoCredit(PeerError):
    pass


def problem_10(target: Target, timeout: float = LIVENESS_TIMEOUT_S, credit_node: str | None = None) -> str:
    """AMQP 1.0: SASL and open, then a session begun and its begin answered; with ``credit_node``,
    also a sending link attached to that node and credit granted on it within ``timeout``.

    The credit step is for a caller that saw the broker grant credit there before (a campaign
    checks at its start): a broker can answer open, begin and attach and still never let a
    client send again -- one peer's flow can wedge a whole broker process's credit. A link the
    broker refuses (its attach without a terminus, or a detach) is an answer, not that problem."""
    from amqpspec.peer import session10
    from amqpspec.peer.amqp10 import Peer, UnexpectedReply

    def steps(peer: Any) -> None:
        if credit_node is None:
            peer.begin(timeout=timeout)
            return
        sess = session10.begin(peer, timeout=timeout)
        link = sess.sender(credit_node, name=f"amqpspec-liveness-{uuid.uuid4().hex}", timeout=timeout)
        if link.remote is None or getattr(link.remote, "target", None) is None:
            return  # refused: answered all the same
        wait = min(timeout, CREDIT_PROBE_S)
        if link.wait_credit(wait) <= 0 and sess.ended is None and not sess.error_frames():
            raise _NoCredit(f"{NO_CREDIT} from {credit_node!r} within {wait:g} s of its attach's answer")

    return fresh_client_problem(Peer, UnexpectedReply, target, timeout, steps)


def problem(target: Target, protocol: str, timeout: float = LIVENESS_TIMEOUT_S, attempts: int = 1,
            credit_node: str | None = None) -> str:
    """Empty when the broker serves a fresh client of ``protocol``; else what went wrong.

    Asked after every case and fuzz example: a broker that crashed on a malformed frame also
    "closed the connection", and without this a crash would pass as a correct close. With
    ``attempts`` > 1 a failure is asked again after a short pause (a broker briefly busy).
    """
    found = ""
    for attempt in range(max(1, attempts)):
        found = problem_10(target, timeout, credit_node) if protocol == "1.0" else problem_091(target, timeout)
        if not found:
            return ""
        if attempt + 1 < attempts:
            time.sleep(0.3 * (attempt + 1))
    return found


# ---------------------------------------------------------------------------- restart

class RestartNote(str):
    """What :func:`restart` did, as a note for the user; ``ok`` when the broker serves again."""

    ok: bool = False

    @classmethod
    def of(cls, text: str, ok: bool = False) -> "RestartNote":
        note = cls(text)
        note.ok = ok
        return note


def restart(command: str, target: Target, protocol: str, wait: float = RESTART_WAIT_S) -> RestartNote:
    """Runs ``command`` in a shell and waits until the broker serves a fresh client again.

    The command's output goes to a temporary file, not to pipes: a broker the command starts in
    the background inherits them, and reading a pipe until its end would wait for the broker to
    exit. Only the shell is waited for (in a session of its own, so a shell past ``wait`` is
    stopped with all it started); a failing command is reported by its exit code and the tail of
    its output. A backgrounded broker that keeps writing there writes into an unlinked file:
    redirect its output in the command to keep it.
    """
    with tempfile.TemporaryFile() as out:
        try:
            # the user's own command, run as the user asked: through the shell
            proc = subprocess.Popen(command, shell=True, stdin=subprocess.DEVNULL, stdout=out,  # noqa: S602
                                    stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as exc:
            return RestartNote.of(f"restart command {command!r} could not be started: {exc}")
        try:
            code = proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            _stop_group(proc)
            return RestartNote.of(f"restart command {command!r} did not finish within {wait:g}s (stopped)")
        if code != 0:
            return RestartNote.of(f"restart command {command!r} exited {code}: {_tail(out)}")
    until = time.monotonic() + wait
    while time.monotonic() < until:
        if not problem(target, protocol):
            return RestartNote.of(f"broker restarted with {command!r}; the run went on", ok=True)
        time.sleep(0.5)
    return RestartNote.of(f"restart command {command!r} ran, but the broker did not serve again within {wait:g}s")


def _tail(out: Any) -> str:
    out.seek(0, os.SEEK_END)
    size = out.tell()
    out.seek(max(0, size - 4 * OUTPUT_TAIL))
    return out.read().decode("utf-8", "replace").strip()[-OUTPUT_TAIL:]


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            return
        try:
            proc.wait(timeout=2.0)
            return
        except subprocess.TimeoutExpired:
            continue


# ---------------------------------------------------------------------------- deleting

def storable(name: object) -> bool:
    """A name some broker could hold: a str of at most 255 octets of UTF-8."""
    if not isinstance(name, str):
        return False
    try:
        return len(name.encode("utf-8")) <= NAME_MAX_OCTETS
    except UnicodeEncodeError:
        return False


def reserved_exchange(name: str) -> bool:
    """The default exchange and the ``amq.`` names the spec reserves for the broker's own (0-9-1 3.1.3.1)."""
    return name == "" or name.startswith("amq.")


def delete(target: Target, queues: Iterable[str] = (), exchanges: Iterable[str] = (), *, if_unused: bool = False,
           if_empty: bool = False, budget: float = DELETE_BUDGET_S, reply_timeout: float = DELETE_REPLY_S) -> str:
    """Deletes queues, then exchanges, over AMQP 0-9-1; '' when done, else the problem. Never raises.

    Names no broker can hold (not UTF-8, over 255 octets), empty queue names, the default
    exchange and ``amq.`` exchanges are skipped. ``if_unused``/``if_empty`` ask the broker to
    keep a queue that has consumers or messages (an exchange with bindings): for names that
    may be someone else's. A refusal closes the channel, which is opened again; a connection the
    broker closes or drops is opened again for the rest. Every wait is bounded by
    ``reply_timeout`` and the whole by ``budget``.
    """
    from amqpspec.wire.amqp091 import spec

    work: list[Any] = [spec.QueueDelete(queue=q, if_unused=if_unused, if_empty=if_empty)
                       for q in dict.fromkeys(queues) if storable(q) and q]
    work += [spec.ExchangeDelete(exchange=x, if_unused=if_unused)
             for x in dict.fromkeys(exchanges) if storable(x) and not reserved_exchange(x)]
    return _each(target, work, lambda method, reply: None, budget, reply_timeout)


def delete_pairs(target: Target, pairs: Iterable[tuple[str, str]], **options: Any) -> str:
    """:func:`delete` for ``(kind, name)`` pairs, kind "queue" or "exchange", as cases and fuzz
    examples note what they declared."""
    pairs = list(pairs)
    return delete(target, [n for kind, n in pairs if kind == "queue"], [n for kind, n in pairs if kind == "exchange"],
                  **options)


def absent(target: Target, queues: Iterable[str] = (), exchanges: Iterable[str] = (), *,
           budget: float = DELETE_BUDGET_S, reply_timeout: float = DELETE_REPLY_S) -> tuple[set[str], set[str], str]:
    """The queues and exchanges the broker says do not exist (404 to a passive declare), and the
    problem that kept the answer from being complete ('' when none). A name without a clear 404
    -- refused otherwise, unanswered, unstorable -- is not in the result: it may exist."""
    from amqpspec.wire.amqp091 import spec

    gone_q: set[str] = set()
    gone_x: set[str] = set()
    work: list[Any] = [spec.QueueDeclare(queue=q, passive=True) for q in dict.fromkeys(queues) if storable(q) and q]
    work += [spec.ExchangeDeclare(exchange=x, passive=True) for x in dict.fromkeys(exchanges) if storable(x) and x]

    def seen(method: Any, reply: Any) -> None:
        if reply is not None and reply.method.NAME == "channel.close" and reply.method.reply_code == 404:
            (gone_q.add(method.queue) if method.NAME == "queue.declare" else gone_x.add(method.exchange))

    problem_text = _each(target, work, seen, budget, reply_timeout)
    return gone_q, gone_x, problem_text


def _each(target: Target, work: list[Any], on_reply: Callable[[Any, Any], None], budget: float,
          reply_timeout: float) -> str:
    """Sends each method on a connection of its own and hands its answer (a method frame, or
    None when none came) to ``on_reply``; reopens the channel after a channel.close and the
    connection after a connection.close or the socket's end. '' when all were sent and the
    connection could be kept, else the problem; never raises."""
    if not work:
        return ""
    stop = time.monotonic() + budget
    session = _Session(target, stop)
    try:
        for i, method in enumerate(work):
            if time.monotonic() >= stop:
                return f"{len(work) - i} of {len(work)} left after the {budget:g}s budget"
            on_reply(method, session.call(method, reply_timeout))
        return ""
    except Exception as exc:  # noqa: BLE001 - cleanup must never stop a run; what failed is the answer
        return f"{type(exc).__name__}: {exc}" if not isinstance(exc, PeerError) else str(exc)
    finally:
        session.close()


class _Session:
    """A 0-9-1 connection and channel that come back after the broker closes either."""

    def __init__(self, target: Target, stop: float) -> None:
        self.target = target
        self.stop = stop
        self.peer: Any = None
        self.channel = 0

    def _left(self, cap: float) -> float:
        return max(0.0, min(cap, self.stop - time.monotonic()))

    def _open(self) -> None:
        from amqpspec.peer.amqp091 import Peer

        self.close()
        self.peer = Peer.connect(self.target, Transcript(), self.stop)
        self.peer.handshake(timeout=self._left(5.0))
        self.channel = self.peer.open_channel(timeout=self._left(5.0))

    def call(self, method: Any, reply_timeout: float) -> Any:
        """Sends ``method``; returns the answer on its channel (or a connection.close), None when none came."""
        from amqpspec.wire.amqp091 import HeartbeatFrame, MethodFrame, spec

        if self.peer is None:
            self._open()
        self.peer.send(MethodFrame(self.channel, method))
        until = time.monotonic() + self._left(reply_timeout)
        while True:
            item = self.peer.recv(max(0.0, until - time.monotonic()))
            if item is None:
                return None
            if isinstance(item, Closed) or self.peer.link.send_failed:
                self.close()  # opened again for the next name
                return None
            if isinstance(item, HeartbeatFrame) or not isinstance(item, MethodFrame):
                continue
            name = item.method.NAME
            if name == "connection.close":
                self.peer.send(MethodFrame(0, spec.ConnectionCloseOk()))
                self.close()
                return item
            if item.channel != self.channel:
                continue
            if name == "channel.close":
                self.peer.send(MethodFrame(self.channel, spec.ChannelCloseOk()))
                try:
                    self.channel = self.peer.open_channel(timeout=self._left(5.0))
                except PeerError:
                    self.close()  # the connection is opened again for the next name
            return item

    def close(self) -> None:
        if self.peer is not None:
            peer, self.peer = self.peer, None
            if peer.link.closed is None:
                peer.close(timeout=self._left(0.5))
            peer.abort()


__all__ = ["NO_ANSWER", "NO_CREDIT", "PROBE_TIMEOUT_S", "LIVENESS_TIMEOUT_S", "DELETE_BUDGET_S", "RestartNote", "absent",
           "can_delete", "connect", "delete", "delete_pairs", "detect_protocol", "fresh_client_problem",
           "handshake_failure_091", "handshake_failure_10", "probe", "problem", "problem_091", "problem_10",
           "reserved_exchange", "restart", "speaks_091", "storable"]
