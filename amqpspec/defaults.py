"""Defaults that the command line, the pytest plugin and the runner share, in a module light
enough for the command line to import before it knows which command runs."""
from __future__ import annotations

#: cases run side by side unless --jobs says otherwise. Most of a case's time is waiting (for a
#: broker's answer, or for the silence that proves it sent none), so parallel cases overlap their
#: waits; they cannot change each other's verdicts (own connections, own names), and a broker one
#: of them stops is sorted out as a serial run would (see amqpspec.runner.Runner._run_parallel).
#: Checked with bench/verdict_stability.py: the same verdicts as --jobs 1, case by case.
JOBS = 16
