"""Progress of a class run on stderr: tqdm's bar on a terminal; without one (a batch job, a log
file, ``nohup``) a plain line every ``EVERY`` notebooks, and at the end, with the count, the
time so far and an estimate of the time left, since a bar's carriage returns make no log."""

from __future__ import annotations

import sys
import time

EVERY = 10


def _clock(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    def __init__(self, total: int, *, enabled: bool, desc: str = "grading", unit: str = "nb",
                 stream=None):
        self.total, self.done, self.unit, self.desc = total, 0, unit, desc
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.bar = None
        self.lines = False
        if enabled and total:
            if self.stream.isatty():
                from tqdm import tqdm

                self.bar = tqdm(total=total, desc=desc, unit=unit, file=self.stream)
            else:
                self.lines = True

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        return (f"{self.desc}: {self.done}/{self.total} {self.unit} in {_clock(elapsed)}"
                + (f", about {_clock(left)} left" if self.done < self.total else ""))

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.lines and (self.done % EVERY == 0 or self.done == self.total):
            print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
