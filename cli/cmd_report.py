"""`argus report --html FILE`: one self-contained HTML page for a diagnosis.

The hang is picked and answered as `argus export` does (the options of
`argus debug`: --pid, --tid, --at, --buffer, --answers, --resume ...; --resume
shows a saved session's questions and answers).  The page
(diagnose/report_html.py): the hang, a timeline of the threads on the path
(inline SVG), the chain with block types and evidence, root causes, the
questions asked and their answers, links to the lldb results found next to
the buffer (<buffer>.lldb/, `argus lldb-script`), and the diagnosis slice
drawn by graphviz when its `dot` program is installed.  Every name from the
trace is HTML-escaped and the page runs no script (a Content-Security-Policy
says so); the file is 0600 like every file Argus derives from a trace.
"""
import sys

from argus.cli.progress import Progress
from argus.tracer.textsafe import safe_lines
from argus.cli.cmd_debug import add_diagnosis_args
from argus.tracer.safe_files import UnsafePath
from argus.scripts.lldb.generate import results_for
from argus.cli.cmd_export import check_output_path, diagnosis_for_output, write_output


def register(sub):
    p = sub.add_parser("report", help="write a diagnosis as one self-contained HTML page (docs/export.md)")
    p.add_argument("--html", metavar="FILE", required=True, help="the HTML file to write")
    add_diagnosis_args(p, json=False)
    p.set_defaults(func=run)


def _lldb_results(ctx):
    """{(pid, tid): [lldb result docs]} of the root-cause threads."""

    out = {}
    for r in ctx.report["root_causes"]:
        try:
            out[(r["pid"], r["tid"])] = results_for(ctx.buffer, r["pid"], r["tid"]) if ctx.buffer else []
        except UnsafePath as e:            # already a note of the report (context._note_lldb_traces)
            print(safe_lines(f"argus: {e}"), file=sys.stderr)
            return {}
    return out


def run(args):
    # local for start-up time: the HTML and DOT renderers, only for `argus report`
    from argus.diagnose import export_dot, report_html

    check_output_path("--html", args.html)
    ctx, tl = diagnosis_for_output(args)
    with Progress() as progress:
        progress.stage(f"writing {args.html}")
        try:
            graph = export_dot.render_svg(tl)
        except RuntimeError as e:            # no graphviz: the page without the drawing, and why
            graph = None
            ctx.report.setdefault("notes", []).append(f"the slice graph is missing: {e}")
        answers = ctx.chooser.answers if ctx.chooser is not None else []
        page = report_html.render(ctx.report, tl, answers, _lldb_results(ctx), graph)
        write_output(args.html, page)
        progress.finished("wrote a report of", len(tl["path"]))
    h = ctx.hang
    print(safe_lines(f"argus: wrote the report of {ctx.g.comm(h.utid)}/{h.tid} ({h.block_type}, "
                     f"{len(tl['roots'])} root causes) to {args.html}"), file=sys.stderr)
    return 0
