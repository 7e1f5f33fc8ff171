"""reports.html.pcap.Batch: pcaps written by a worker process beside the pages, same files as inline."""
from __future__ import annotations

from pathlib import Path

from amqpspec.reports.html import pcap

ENTRIES = [
    {"t": 0.0, "dir": "send", "conn": 1, "summary": "protocol-header AMQP 0-9-1", "hex": "414d515000000901"},
    {"t": 0.01, "dir": "recv", "conn": 1, "summary": "connection.start",
     "hex": "0100000000000c000a000a00090000000000000000ce"},
]


def _write_all(tmp: Path, workers: int) -> dict[str, bytes]:
    batch = pcap.Batch(pcap.pcap_writer(), workers=workers)
    paths = [tmp / f"c{i}.pcap" for i in range(3)]
    try:
        for p in paths:
            batch.submit(list(ENTRIES), p, "0-9-1", upstream="amqp://127.0.0.1:5672/", source="result x")
        batch.submit("not a transcript", tmp / "none.pcap", "0-9-1")
        assert [batch.done(p) for p in paths] == [True, True, True]
        assert batch.done(tmp / "none.pcap") is False   # never queued: nothing to write
        assert batch.done(tmp / "never.pcap") is False
    finally:
        batch.close()
    return {p.name: p.read_bytes() for p in paths}


def test_worker_and_inline_write_the_same_files(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    (tmp_path / "i").mkdir()
    assert _write_all(tmp_path / "w", 1) == _write_all(tmp_path / "i", 0)


def test_a_writer_of_the_callers_own_runs_in_this_process(tmp_path: Path) -> None:
    seen: list[str] = []

    def writer(entries, path, protocol, **about):  # a closure: it could not be sent to a worker
        seen.append(path.name)
        path.write_bytes(b"x")

    batch = pcap.Batch(writer)
    try:
        batch.submit(list(ENTRIES), tmp_path / "a.pcap", "0-9-1")
        assert seen == []                      # written when asked for, in order
        assert batch.done(tmp_path / "a.pcap") is True
        assert seen == ["a.pcap"]
    finally:
        batch.close()


def test_a_failing_worker_job_is_written_here(tmp_path: Path) -> None:
    batch = pcap.Batch(pcap.pcap_writer(), workers=1)
    try:
        class Broken:
            def get(self, timeout=None):
                raise RuntimeError("worker died")
        batch.submit(list(ENTRIES), tmp_path / "b.pcap", "0-9-1")
        future, args = batch._jobs[tmp_path / "b.pcap"]
        if future is not None:
            future.get(30)
            (tmp_path / "b.pcap").unlink()
        batch._jobs[tmp_path / "b.pcap"] = (Broken(), args)
        assert batch.done(tmp_path / "b.pcap") is True
        assert (tmp_path / "b.pcap").stat().st_size > 0
    finally:
        batch.close()


def test_a_stalled_worker_costs_a_bounded_wait(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(pcap, "WORKER_WAIT_S", 0.5)
    batch = pcap.Batch(pcap.pcap_writer(), workers=1)
    try:
        class Stalled:
            def get(self, timeout=None):
                import multiprocessing
                raise multiprocessing.TimeoutError()
        batch.submit(list(ENTRIES), tmp_path / "s.pcap", "0-9-1")
        batch.submit(list(ENTRIES), tmp_path / "t.pcap", "0-9-1")
        _, args = batch._jobs[tmp_path / "s.pcap"]
        batch._jobs[tmp_path / "s.pcap"] = (Stalled(), args)
        assert batch.done(tmp_path / "s.pcap") is True        # written here after the wait
        assert batch.done(tmp_path / "t.pcap") is True        # and the rest too, the worker given up
        assert not list(tmp_path.glob("*.part"))
    finally:
        batch.close()
