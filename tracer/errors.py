"""ArgusError: a failure the user caused or can fix, printed as one line.

It sits in the bottom layer (argus.tracer, tests/test_layers.py) because the
bottom already raises it: safe_files' refusals (UnsafePath) are ArgusErrors,
and safe_files serves every layer.  argus.cli.common re-exports it, and the
CLI's main() turns each one into `argus: <line>` and a non-zero exit.
"""


class ArgusError(Exception):
    """A failure the user caused or can fix; printed as one line."""

    def __init__(self, message, exit_code=1):
        super().__init__(message)
        self.exit_code = exit_code
