"""A serving process's garbage collection (service/runtime.py), in a process of its own."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio, gc, weakref
    from feastlog.service import runtime

    young = gc.get_threshold()[:2]
    runtime.steady_collection()
    assert gc.get_threshold() == (*young, runtime.NEVER), gc.get_threshold()
    assert gc.get_freeze_count() > 0  # what start-up made is frozen

    class Node:
        pass

    held = [Node(), Node()]
    held[0].other, held[1].other = held[1], held[0]
    gone = weakref.ref(held[0])
    gc.collect(1)  # the young collections age it while it is held: into the oldest generation
    del held  # now a cycle nothing else reaches: only a full collection frees it
    full = gc.get_stats()[2]["collections"]
    # the heap grows by far more than a quarter (survivors of young collections): that
    # would set off automatic full collections
    grown = [[] for _ in range(300_000)]
    assert gc.get_stats()[2]["collections"] == full, "a full collection ran on the heap's growth"
    assert gone() is not None
    del grown

    async def main():
        timer = asyncio.create_task(runtime.collect_now_and_then(0.01))
        for _ in range(200):
            await asyncio.sleep(0.01)
            if gone() is None:
                break
        timer.cancel()

    asyncio.run(main())
    assert gone() is None, "the timed full collection did not free the cycle"

    kept = Node()
    frozen = weakref.ref(kept)
    gc.freeze()
    del kept  # not in a cycle: reference counting frees it, frozen or not
    assert frozen() is None
    print("ok")
    """
)


def test_full_collections_run_on_the_timer_not_on_the_heaps_growth() -> None:
    """After steady_collection, young collections never turn into a full one; the timed
    full collection frees a cycle that outlived them; frozen objects not in a cycle are
    freed when dropped."""
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


BULK = textwrap.dedent(
    """
    import gc
    from feastlog.service import runtime

    before = gc.get_threshold()
    with runtime.bulk_collection():
        assert gc.get_threshold() == (runtime.BULK_YOUNG, *before[1:]), gc.get_threshold()
        young = gc.get_stats()[0]["collections"]
        kept = [[] for _ in range(runtime.BULK_YOUNG // 2)]  # fewer allocations than that
        assert gc.get_stats()[0]["collections"] == young, "a young collection ran early"
        del kept
    assert gc.get_threshold() == before, gc.get_threshold()
    print("ok")
    """
)


def test_bulk_work_collects_the_young_generation_less_often_then_as_before() -> None:
    """Inside bulk_collection a young collection waits for BULK_YOUNG allocations; after
    it, the thresholds are what they were."""
    done = subprocess.run([sys.executable, "-c", BULK], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


LIGHT = textwrap.dedent(
    """
    import sys
    import feastlog.cli.entry
    assert "click" not in sys.modules and "grpc" not in sys.modules, "the script is heavy"
    import feastlog.service.app.bulk, feastlog.service.app.season
    assert "psycopg" not in sys.modules, "a DuckDB worker imports psycopg"
    assert "aiohttp" not in sys.modules and "click" not in sys.modules
    print("ok")
    """
)


def test_a_bulk_worker_imports_only_what_its_work_needs() -> None:
    """A spawned worker runs the ``feastlog`` script again and imports bulk and season:
    none of that may pull in the command line, the web server or PostgreSQL's driver."""
    done = subprocess.run([sys.executable, "-c", LIGHT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
