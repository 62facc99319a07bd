"""Names of programs the diagnosis treats by what they are (a leaf module:
candidates.py, objects.py and bystanders.py all read it, and it imports
none of them, so no import cycle runs through these names)."""

SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox", "tcsh", "csh"))
