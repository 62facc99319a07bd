"""What every REPL command works on: the graph, the hang, the session, the
cursor (a vertex, with a stack for `back`) and the last diagnosis.

run_diagnosis is the one place Algorithm 1 runs for the REPL and for the
non-interactive modes: presets (answers file / resumed session) first, then
rules, then the live `ask` callback (None: the automatic heuristic); every
answer and every new rule is written to the session store as it is given.
"""
import json

from argus.tracer.textsafe import safe_console
from argus.cli.tracefile import ThreadNames
from argus.diagnose import AskingChooser, diagnose_hang, to_json
from argus.diagnose.rules import describe
from argus.cli.repl.registry import ReplUsageError
from argus.cli.repl.render import thread_label
from argus.tracer.safe_files import UnsafePath
from argus.scripts.lldb.generate import results_for
from argus.graphbuild import multihost as MH


class ReplContext:
    def __init__(self, g, hang, threshold_ns, store=None, sid=None, buffer=None, console=None, notes=()):
        self.g = g
        self.hang = hang
        self.threshold_ns = int(threshold_ns)
        self.store = store
        self.sid = sid
        self.buffer = buffer
        self.console = console or safe_console(highlight=False, soft_wrap=True)   # names are untrusted
        self.notes = list(notes)
        self.cursor = int(hang.vertex)
        self.path_index = None      # the cursor's place in the diagnosis's path, when `follow` took it
        self._thread_names = None   # thread_names(), built on first use
        self.back_stack = []        # (cursor, path_index) before each move
        self.diagnosis = None
        self.report = None
        self.chooser = None
        self.ask = None             # set by the REPL: Question -> str
        self.presets = []
        self.preset_rules = []      # {"kind", "key"} of the rules the presets made: not applied while replaying
        self.rules_made = []        # the rules the answers about the session's hang made (export --answers)
        self.hang_answers = []      # those answers (without a store; with one, the store has them)
        self.running = True
        self.questions_asked = 0
        self.exit_code = 0
        self.no_rules = False       # argus debug --no-rules
        self.show_rules = False     # the REPL: say so when a rule decides (with how to undo it)

    # --- output ---
    def out(self, *a, **kw):
        kw.setdefault("markup", False)
        kw.setdefault("emoji", False)     # "web:100: run" is text, not the :100: emoji
        self.console.print(*a, **kw)

    @property
    def t0(self):
        return int(self.hang.start_ns)

    def thread_names(self):
        """tid -> name of the trace's threads (cli.tracefile.ThreadNames, as
        `argus events` reads them), built once."""
        if self._thread_names is None:
            self._thread_names = ThreadNames(self.g.rows)
        return self._thread_names

    # --- cursor ---
    def move(self, v, path_index=None):
        """Moves the cursor to v; path_index: v's place in the diagnosis's
        path when the move followed it (None: any other move)."""
        self.back_stack.append((self.cursor, self.path_index))
        self.cursor = int(v)
        self.path_index = path_index

    def go_back(self):
        """Undoes the last move; False when there is none."""
        if not self.back_stack:
            return False
        self.cursor, self.path_index = self.back_stack.pop()
        return True

    def path_place(self, v=None):
        """v's (default: the cursor's) index in the diagnosis's path: the
        cursor's place when `follow` put it there, else v's first
        occurrence; None when v is not on the path."""
        d = self.diagnosis
        v = self.cursor if v is None else int(v)
        if d is None:
            return None
        i = self.path_index if v == self.cursor else None
        if i is not None and 0 <= i < len(d.path) and d.path[i].vertex == v:
            return i
        return next((k for k, p in enumerate(d.path) if p.vertex == v), None)

    def path_next(self, v=None):
        """(index, PathElem) of the step the diagnosis's walk took after v
        (default: the cursor), or None: v's place in the path (path_place)
        and the next element.  From the spinning vertex that is the vertex
        after the wait, then the thread that ended it, then baselines' and
        culprits' steps, as `path` lists them."""
        i = self.path_place(v)
        if i is None or i + 1 >= len(self.diagnosis.path):
            return None
        return i + 1, self.diagnosis.path[i + 1]

    def check_vertex(self, v):
        if v is None:
            return self.cursor
        if not 0 <= int(v) < self.g.num_vertices:
            raise ReplUsageError(f"no vertex {v} (0..{self.g.num_vertices - 1})")
        return int(v)

    # --- rules / annotations ---
    def rules(self, replaying=False):
        """The store's rules; replaying, without those the recorded answers
        made: the answer that made one is replayed in its place (the same
        decision, and the recording stays in step)."""
        if self.no_rules:
            return []
        rules = self.store.rules() if self.store is not None else []
        if replaying and self.preset_rules:
            made = {(r["kind"], json.dumps(r["key"], sort_keys=True)) for r in self.preset_rules}
            rules = [r for r in rules if (r["kind"], json.dumps(r["key"], sort_keys=True)) not in made]
        return rules

    def add_rule(self, rule, kind, target, detail=None):
        """Stores a rule; its id (None without a store)."""
        if self.store is None:
            return None
        rid = self.store.add_rule(rule, self.sid)
        self.store.annotate(self.sid, kind, target, detail if detail is not None else rule["key"])
        return rid

    def _rule_fired(self, entry):
        if self.show_rules:
            rid = entry["id"] if entry.get("id") is not None else "(made in this diagnosis)"
            self.out(f"rule {rid} applies: {entry['rule']}: {entry['effect']}"
                     + (f" (undo: {entry['undo']}, or argus debug --no-rules)" if entry.get("undo") else ""))

    def lldb_results(self, utid):
        """The `argus lldb-script` results stored for a thread: next to its
        host's buffer, under its pid and tid on that host (a graph merged from
        several buffers gives the other hosts' threads shifted ids).  Raises
        UnsafePath like results_for."""
        pid, tid = int(self.g.threads.pid[utid]), int(self.g.threads.tid[utid])
        buffer = self.buffer
        if self.g.hosts is not None:
            buffer = self.g.hosts[MH.host_of(pid)].path
            pid, tid = MH.local_id(pid), MH.local_id(tid)
        return results_for(buffer, pid, tid) if buffer else []

    def _note_lldb_traces(self, d):
        """Instruction-level evidence already captured for a root cause
        (`argus lldb-script`) is attached to the report as a note."""
        for rc in d.root_causes:
            try:
                docs = self.lldb_results(rc.utid)
            except UnsafePath as e:
                d.notes.append(str(e))
                return
            for doc in docs:
                d.notes.append(f"lldb trace of {thread_label(self.g, rc.utid)}: "
                               f"{len(doc.get('instructions') or [])} instructions, "
                               f"{len(doc.get('calls') or [])} library calls"
                               + (f" from {doc['function']}" if doc.get("function") else "")
                               + " (REPL: lldb)")

    # --- Algorithm 1 ---
    def run_diagnosis(self, hang=None, auto=False, ask=None):
        """auto: the automatic answers (with the rules, like every mode), and
        the session's recorded answers are left alone."""
        own = hang is None or int(hang.vertex) == int(self.hang.vertex)   # the session's hang
        hang = hang or self.hang
        store, sid = self.store, self.sid

        def record(rec):
            if store is not None and own:
                store.add_answer(sid, rec)
        if auto:
            chooser = AskingChooser(self.g, rules=self.rules(), t0=hang.start_ns, on_rule=self._rule_fired)
        else:
            # the session keeps the answers about its own hang; `diagnose V`
            # (another vertex) leaves them alone, so `export --answers` and
            # --resume still replay the hang's diagnosis
            if store is not None and own:
                store.clear_answers(sid)
            replaying = bool(self.presets)
            chooser = AskingChooser(self.g, ask=ask, presets=self.presets, rules=self.rules(replaying),
                                    t0=hang.start_ns, on_answer=record, on_rule=self._rule_fired)
            self.presets = []
        d = diagnose_hang(self.g, hang, self.threshold_ns, chooser)
        d.notes.extend(self.notes)
        if chooser.diverged:
            d.notes.append("the recorded answers did not fit this walk; the rest were asked or chosen automatically")
        if chooser.aborted:
            d.notes.append("the diagnosis was interrupted; unanswered questions were answered 'stop'")
        if own and not auto:
            self.rules_made, self.hang_answers = list(chooser.new_rules), list(chooser.answers)
        for r in chooser.new_rules:
            # an answer's rule is marked as such: --resume replays the answer in its place
            target = self.store.ANSWER_TARGET if own and self.store is not None else "edge"
            rid = self.add_rule(r, "not_causal", target, r["key"])
            if self.show_rules and rid is not None:
                self.out(f"rule {rid} saved: {describe(r)} (undo: argus rules rm {rid})")
        self._note_lldb_traces(d)
        self.chooser = chooser
        self.diagnosis = d
        self.report = to_json(d)
        if self.store is not None:
            self.store.save_report(self.sid, self.report)
        return d
