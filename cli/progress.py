"""Feedback on long work: decoding a buffer and building its graph.

On a terminal (stderr is a TTY) a transient rich status line names the
stage as it runs; every finished stage is counted (events, seconds).  When
the whole work took more than QUIET_S, its rates stay on stderr at the
end (never after a failure, which is one line): on a terminal one summary
line; off a terminal (a log, a pipe) one line per stage.  stdout is never touched (`--json`
prints JSON only there).  The stages are single calls into the C core, so
the rate is measured per stage, not sampled while it runs.
"""
import time

from rich.console import Console

QUIET_S = 1.0


def fmt_count(n):
    n = int(n)
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    if n >= 10_000:
        return f"{n / 1e3:.0f}k"
    return f"{n:,}"


class Progress:
    def __init__(self, console=None):
        self.console = console or Console(stderr=True, highlight=False)
        self.t0 = time.monotonic()
        self.done = []              # (verb, events, seconds)
        self._status = None
        self._stage_t = None

    def stage(self, text):
        """A stage begins (the status line shows text)."""
        self._stage_t = time.monotonic()
        if not self.console.is_terminal:
            return
        if self._status is None:
            self._status = self.console.status(text, spinner="dots")
            self._status.start()
        else:
            self._status.update(text)

    def finished(self, verb, events):
        secs = time.monotonic() - (self._stage_t or self.t0)
        self.done.append((verb, int(events), secs))
        return secs

    @staticmethod
    def _part(verb, n, secs):
        return f"{verb} {fmt_count(n)} events in {secs:.1f} s ({fmt_count(n / secs if secs > 0 else n)} events/s)"

    def line(self):
        parts = [self._part(*d) for d in self.done]
        return "argus: " + ", ".join(parts) if parts else ""

    def _print_stages(self):
        for d in self.done:
            self.console.print("argus: " + self._part(*d), markup=False, soft_wrap=True)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        # a failure is one line on stderr: no rate before it
        self.close(summary=exc_type is None)
        return False

    def close(self, summary=True):
        """Ends the status line; the summary when asked (not after a failure)
        and the work took over QUIET_S.  Idempotent."""
        if self._status is not None:
            self._status.stop()
            self._status = None
        if summary and self.done and time.monotonic() - self.t0 > QUIET_S:
            if self.console.is_terminal:
                self.console.print(self.line(), markup=False, soft_wrap=True)
            else:
                self._print_stages()
        self.done = []
