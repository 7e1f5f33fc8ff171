"""Client conformance: amqpspec plays the broker and judges an AMQP client library.

Design notes (the framework is the broker side's, with the roles turned around):

- The *peer* gains a server role (:mod:`amqpspec.peer.server091`): a listener on loopback,
  an accepted connection on the same :class:`~amqpspec.peer.base.Link` and bounded frame
  reader as the client peer, the broker's half of the handshake with every frame
  overridable, and a :class:`~amqpspec.peer.server091_responder.Responder` answering the
  client's requests as a correct broker would unless a case replaces an answer.
- The *target* of a run is the client under test (:class:`session.ClientTarget`): the
  listener, the driver that launches the library (:mod:`drivers`), the library's name and
  version, which results carry where broker results carry the broker's identity.
- *Cases* are the catalog's own (``conformance/client091``), registered with ``role="client"``
  so that ``discover`` keeps the two roles apart; each launches a workload of the driver
  contract through :func:`session.play`, plays the broker's script, and checks the client's
  reaction against the clauses it cites, with the same verifiers and ``Context``.
- The *runner* is the broker runner (:mod:`runner`): same verdicts, deadlines, transcripts
  and result records (plus role/driver/library/library_version), one case at a time (all
  cases share the listener), no broker liveness probe or cleanup.
- Bounds: every read waits at most until the case deadline, frames are capped before they
  are buffered, transcripts and the responder's records are capped, stale connections are
  drained unread before each case, a driver's output is read into capped buffers and the
  driver (its whole process group) is killed at the deadline. The password in the driver's
  URL is made per run and registered with the scrubber; the SASL response is masked in the
  transcript by the server peer's reader.
"""
