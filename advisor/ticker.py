"""A status line's clock: a daemon thread that calls back while a block runs long. Light on
purpose (no solver import), so the CLI's plain progress and the solver's share it."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def ticking(tick: Callable[[float], None], after: float, every: float) -> Iterator[None]:
    """Call `tick(seconds elapsed)` from a daemon thread after `after` seconds, then every `every`
    seconds, until the block ends (the progress lines of solve/run.progress and the CLI's)."""
    start, stop = time.monotonic(), threading.Event()

    def loop() -> None:
        wait = after
        while not stop.wait(wait):
            tick(time.monotonic() - start)
            wait = every

    ticker = threading.Thread(target=loop, name="advisor-progress", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
