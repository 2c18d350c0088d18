"""Work split across processes: chunks of one list, mapped by forked workers that share the parent's data.

The build holds its inputs (dataset, results, plan) in memory once. Workers are forked after
`shared` is set, so each sees that data through copy-on-write pages instead of receiving it
pickled; a task names only a range of indexes, and only the (small) results come back.
Where fork is unavailable, or one job is asked for, the same function runs in this process,
so a serial build and a parallel one run the very same code on the very same chunks.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

T = TypeVar("T")

# What forked workers read: set by `workers()` in the parent just before the fork.
shared: Any = None


def job_count(jobs: int) -> int:
    """0 means one per core this process may run on; 1 means serial."""
    if jobs > 0:
        return jobs
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def chunks(count: int, size: int) -> list[range]:
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


def _die_with_parent(parent: int) -> None:
    """A worker of a build that is killed outright exits with it instead of waiting forever on a
    queue nobody writes to (Linux: PR_SET_PDEATHSIG; elsewhere the pool's own shutdown)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the call above took effect
        os._exit(1)


def _run(fn: Callable[[Any, range], T], span: range) -> T:
    return fn(shared, span)


class Workers:
    """Maps fn(shared, range) over ranges, in a pool when there is one; results come back in order."""

    def __init__(self, pool: ProcessPoolExecutor | None):
        self.pool = pool

    def map(self, fn: Callable[[Any, range], T], spans: Sequence[range]) -> Iterator[T]:
        if self.pool is None:
            return (fn(shared, span) for span in spans)
        # Submit everything at once: results are small, and map() keeps them in order.
        return self.pool.map(_run, [fn] * len(spans), spans)


@contextmanager
def workers(data: Any, jobs: int) -> Iterator[Workers]:
    """A pool of `jobs` forked processes that see `data` as parallel.shared (serial when jobs == 1)."""
    global shared
    previous = shared
    shared = data
    count = job_count(jobs)
    pool = None
    if count > 1:  # the pool's modules load only in a build that forks (an edit's usually does not)
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        if "fork" in multiprocessing.get_all_start_methods():
            pool = ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("fork"),
                                       initializer=_die_with_parent, initargs=(os.getpid(),))
    try:
        yield Workers(pool)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        shared = previous
