"""The submit-only benchmark's open-loop schedule and its latency percentiles."""

from __future__ import annotations

from feastlog.cli.benchmarks.serving import Submitted, next_slot


def test_a_command_on_time_goes_at_its_slot() -> None:
    """Before its slot, a command waits for it; exactly at it, it goes."""
    assert next_slot(10.0, 0.5, 9.2) == 10.0
    assert next_slot(10.0, 0.5, 10.0) == 10.0


def test_a_late_command_waits_for_its_lanes_next_slot_instead_of_bursting() -> None:
    """An answer that came after the slot sends the command at the lane's next slot,
    keeping the lane's phase: never at once, never two slots' worth together."""
    assert next_slot(10.0, 0.5, 10.01) == 10.5
    assert next_slot(10.0, 0.5, 10.5) == 10.5
    assert next_slot(10.0, 0.5, 11.2) == 11.5


def test_percentiles_are_nearest_rank() -> None:
    """p50 and p99 of 1..200 ms are the 100th and the 198th latency."""
    latencies = [ms / 1000 for ms in range(200, 0, -1)]
    submitted = Submitted(1, 200, 1.0, latencies, 1.0)
    assert submitted.percentile(50) == 100.0
    assert submitted.percentile(99) == 198.0
    assert submitted.percentile(100) == 200.0
