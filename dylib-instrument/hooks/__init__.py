"""argus.hooks: the hook specs and the Python that applies them.

The specs are the JSON files beside this package's modules (one per
library); the modules read them and turn them into what each way of hooking
needs:
  hookspec              load and validate the specs, flatten them for the
                        agent of `argus run` (dylib-instrument/agent.c)
  uprobe_hooks          the same hooks as uprobes for argusd (`argus start
                        --uprobe-hooks`)
  static_rewrite        `argus instrument`: a copy of a library with the
                        trampolines built in (ELF and Mach-O, through LIEF)
  static_rewrite_macho  the Mach-O bind fixups LIEF cannot write
It sits above the tracer (schema, safe_files, errors) and below the CLI,
which drives it; it imports nothing of graphbuild, diagnose or the debugger.
"""
