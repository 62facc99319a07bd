"""The `argus debug` REPL: prompt_toolkit for input (completion, history),
rich for output.  registry.py holds the command registry, commands/ one
module per command, context.py the state they share, app.py the loop."""
