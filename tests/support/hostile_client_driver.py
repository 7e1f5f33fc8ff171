"""A tiny misbehaving "client library" for the oracle tests of ``fuzz --as-server``.

Run as a driver (``hostile_client_driver.py URL WORKLOAD mode=MODE``): it connects, sends the
AMQP 0-9-1 protocol header, reads the server's first octets, and then, by ``mode``: ``signal``
dies by SIGSEGV, ``exception`` raises an uncaught exception (a traceback), ``hang`` sleeps past
any deadline, ``memory`` holds some 200 MB for 1.5 seconds before ending well, ``ok`` ends
well (exit 0 after done), ``flood`` writes octets without end (valid heartbeat frames, then
garbage), ``noread`` never reads again and keeps the socket open. A test fixture, never a client
in a verdict.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
import urllib.parse


def emit(event: str, **fields: object) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    url = urllib.parse.urlsplit(argv[1])
    opts = dict(a.split("=", 1) for a in argv[3:] if "=" in a)
    mode = opts.get("mode", "ok")
    sock = socket.create_connection((url.hostname or "127.0.0.1", url.port or 5672), timeout=5)
    sock.sendall(b"AMQP\x00\x00\x09\x01")
    if mode == "noread":
        time.sleep(600)
    sock.recv(65536)
    emit("connected")
    if mode == "flood":
        beats = b"\x08\x00\x00\x00\x00\x00\x00\xce" * 8192
        for _ in range(200):
            sock.sendall(beats)
        while True:
            sock.sendall(os.urandom(65536))
    if mode == "signal":
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "exception":
        raise IndexError("list index out of range in a frame decoder")
    if mode == "hang":
        time.sleep(600)
    if mode == "memory":
        hog = bytearray(200 << 20)
        for i in range(0, len(hog), 4096):
            hog[i] = 1
        time.sleep(1.5)
        del hog
    sock.close()
    emit("closed", by="client")
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
