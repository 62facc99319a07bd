"""Waiting on a condition in e2e tests: a real process or daemon gets there
in its own time, so tests poll instead of sleeping a fixed while."""
import time


def wait_until(cond, seconds=10.0, interval=0.05):
    """cond()'s first truthy value within `seconds`, else None."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = cond()
        if found:
            return found
        time.sleep(interval)
    return None
