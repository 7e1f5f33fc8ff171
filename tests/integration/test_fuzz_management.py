"""`amqpspec fuzz --management-url` against the real RabbitMQ: the memory oracle reads the
management API the user named, with the credentials given for it (issue 11, item 1)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def test_fuzz_reports_memory_from_the_named_management_api(rabbitmq: Any, tmp_path: Path) -> None:
    secret = tmp_path / "management-password"
    secret.write_text("guest\n")
    url = getattr(rabbitmq, "management_url", "http://127.0.0.1:15672/")
    proc = subprocess.run(
        [sys.executable, "-m", "amqpspec.cli", "fuzz", rabbitmq.url, "--protocol", "0-9-1", "--examples", "20",
         "--seed", "1", "--shrink-time", "0", "--findings", str(tmp_path / "findings"),
         "--management-url", url, "--management-user", "guest", "--management-password-file", str(secret)],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if k != "AMQPSPEC_MANAGEMENT_PASSWORD"})
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    memory = [line for line in proc.stdout.splitlines() if "memory: " in line]
    assert memory, proc.stdout[-2000:]
    assert any("management API" in line and "/api/nodes mem_used, baseline" in line for line in memory), memory
