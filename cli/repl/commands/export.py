"""export: write the last report (JSON / text) or the session's answers."""
import json

from argus.cli.common import ArgusError
from argus.cli.repl.registry import CommandParser, command, ReplUsageError
from argus.cli.repl.render import report_text
from argus.tracer.safe_files import write_output
from argus.cli.session import write_answers_file
from argus.diagnose.chooser import QUESTION_KINDS

parser = CommandParser("export", "Write the last diagnosis to FILE as JSON (default) or text, or with --answers "
                                 "the session's answers, replayable with `argus debug --answers FILE`.  "
                                 "Files are created 0600 (traces hold sensitive data), as a new file renamed "
                                 "over FILE: a link or a file already there is replaced, never written through.")
parser.add_argument("file", type=str, help="output file")
parser.add_argument("--format", choices=("json", "text"), default="json", help="report format (default json)")
parser.add_argument("--answers", action="store_true", help="write the answers file instead of the report")


@command(parser, category="session")
def run(ctx, args):
    try:
        if args.answers:
            answers = ctx.store.answers(ctx.sid) if ctx.store is not None else ctx.hang_answers
            write_answers_file(args.file, answers, {"pid": ctx.hang.pid, "tid": ctx.hang.tid},
                               rules_made=ctx.rules_made)
            n = sum(a["kind"] in QUESTION_KINDS for a in answers)
            ctx.out(f"wrote {n} answers to {args.file}")
            return
        if ctx.report is None:
            raise ReplUsageError("export: no diagnosis yet: run diagnose")
        text = json.dumps(ctx.report, indent=2) + "\n" if args.format == "json" else report_text(ctx.report)
        write_output(args.file, text)
        ctx.out(f"wrote the {args.format} report to {args.file}")
    except ArgusError as e:            # tracer/safe_files.py: one line (refused, or the OS error)
        raise ReplUsageError(f"export: {e}")
