"""Captures: transcripts as files, pcaps, replay against a broker, and a recording proxy.

* :mod:`~amqpspec.capture.transcripts` -- the transcript file format and loading every file
  that holds a transcript (record's files, result records, findings, pcaps);
* :mod:`~amqpspec.capture.codec` -- streams cut into frames, SASL masking and re-filling;
* :mod:`~amqpspec.capture.pcap` -- transcripts to pcap (synthetic TCP/IP) and back;
* :mod:`~amqpspec.capture.compare` -- recorded and live frames compared by meaning;
* :mod:`~amqpspec.capture.replay` -- the client's side re-sent, the broker's answers judged;
* :mod:`~amqpspec.capture.proxy` -- a loopback proxy that records any client's session;
* :mod:`~amqpspec.capture.cli` -- the ``replay``, ``record`` and ``capture`` commands.
"""
