"""Command-line front end: `argus` and `bp_watch`."""
