"""The recording proxy under a bulk client: its memory and the latency of a small round trip.

    python -m bench.record_memory [--megabytes 150] [--max-bytes-mib 64 16]

For each ``--max-bytes``, ``amqpspec record`` runs in a subprocess in front of a local sink
(no broker: the sink swallows everything and echoes heartbeat frames). One connection sends
the 0-9-1 header and content-body frames of 128 KiB up to ``--megabytes``; another sends one
heartbeat at a time and times its echo meanwhile. Printed per row: the proxy's peak RSS over
its RSS when idle (VmHWM - VmRSS from /proc), the relay's throughput, and the round trips'
median and maximum. Before the spool (issue 11, item 7) the proxy grew by 576 MiB at
``--max-bytes`` 64 MiB and stalled round trips for 4.7 s; now by about 2 MiB, under 30 ms.
"""
from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

from tests.support import hostile, hostile_proxy
from tests.unit.test_capture_proxy_bounds import RecordProcess, _status


def one(megabytes: int, max_bytes_mib: int) -> str:
    counter = hostile_proxy.Counter()
    with hostile.HostileServer(hostile_proxy.sink_echoing_heartbeats(counter)) as server, \
            tempfile.TemporaryDirectory() as out:
        rec = RecordProcess(server.port, Path(out), "--max-bytes", str(max_bytes_mib << 20))
        try:
            time.sleep(0.3)
            idle = _status(rec.proc.pid, "VmRSS")
            done = threading.Event()
            times: list[float] = []
            meter = threading.Thread(target=lambda: times.extend(hostile_proxy.round_trips(rec.port, 600, done)))
            meter.start()
            t0 = time.monotonic()
            sent = hostile_proxy.flood(rec.port, megabytes << 20)
            while counter.octets < sent:
                time.sleep(0.01)
            elapsed = time.monotonic() - t0
            done.set()
            meter.join()
            while not list(Path(out).glob("*.json")):
                time.sleep(0.05)
            peak = _status(rec.proc.pid, "VmHWM")
        finally:
            rec.stop()
    times.sort()
    return (f"--max-bytes {max_bytes_mib:>3} MiB  {megabytes} MB in {elapsed:5.1f}s ({megabytes / elapsed:6.1f} MB/s)  "
            f"RSS +{(peak - idle) / (1 << 20):6.1f} MiB  round trip median {times[len(times) // 2] * 1000:5.1f} ms "
            f"max {times[-1] * 1000:6.1f} ms ({len(times)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--megabytes", type=int, default=150)
    ap.add_argument("--max-bytes-mib", type=int, nargs="+", default=[64, 16])
    args = ap.parse_args()
    for mib in args.max_bytes_mib:
        print(one(args.megabytes, mib), flush=True)


if __name__ == "__main__":
    main()
