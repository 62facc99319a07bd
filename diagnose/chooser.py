"""The asking Chooser: questions for a human (or a recording of one), rules
that answer them, and the bookkeeping behind Table 2's query counts.

Algorithm: Algorithm 1 calls the four Chooser hooks (slice.Chooser).  Each
hook turns its situation into a Question (kind, text, one line per option)
only when the graph is ambiguous:
  pick_predecessor  one candidate, strong  -> follow, no question
                    one candidate, weak    -> follow_weak decides
                    several                -> "which one caused this?"
  follow_weak       "follow or stop?"  (options: follow / stop / not causal)
  pick_baseline     candidates are grouped by what their wake-up looks like
                    (the waker's process and thread name, baseline.signature);
                    one group -> its best-ranked member, no question; several
                    -> "which one is the baseline?" showing one per group
  pick_owner        one holder, strong (the kernel named it) -> it, no
                    question; one, weak -> follow_weak decides; several ->
                    "which thread holds it?" ranked as ownership.owners
  go_on             asked for culprits that can have a culprit of their own
                    (LongWait, RepeatedYield that read data flags); a
                    LongRunning culprit's recursive diagnosis is only its
                    slice, a RepeatedYield's without flags only a holder
                    (pick_owner asks when it is ambiguous) or the bp_watch
                    advice, so those go on without a question.
Before asking, in order:
  1. rules (from earlier sessions, keyed by stable names, never pids:
     rules.edge_key; scoped by build id): an edge marked "not causal" is
     dropped from the candidates, a weak edge (a lock handed over, a
     heuristic split's program order) it matches is not followed.  Rules
     apply in every mode (auto, replay, interactive); each decision is in
     rules.fired, reported and counted as saved_by_rules.
  2. the session's memory: a weak edge between the same two threads
     (unordered pair, same edge type and wait kind) was already answered in
     this session -> the same answer (the question is saved).
  3. preset answers (an answers file, or a resumed session's), in order; a
     preset of another kind than the question means the walk diverged: the
     rest of the presets are dropped.
  4. the live `ask(question) -> str` callback; None (no one to ask) -> the
     automatic heuristic (AutoChooser's answer).
Answer parsing: an option key ("1", "f", "y", ...), or Enter for the
default; anything else is invalid input: the question is put again with
`q.invalid` set to what was typed (the ask callback says so), never taken
as "stop" (a typo must not end the walk; stopping is an explicit key).  A
preset (replayed) answer that is not an option is taken as stop.  EOF /
Ctrl-C inside a question stop, and every later question of the run is
answered "stop" / "no" without asking.

Invariants: `queries` counts only questions a human (or a replayed human
answer) answered; `saved_by_rules` = decisions rules made (len(rules.fired)),
`saved_by_memory` = weak-edge questions this session's memory answered,
`saved` their sum; `answers` is the full, replayable record in question
order.  With no ask callback and no presets ("auto" mode) every answer is
the AutoChooser's, so --auto, --json and Enter-to-every-question walk the
same path given the same rules (auto_twin: the same rules, nobody asked).
"""
from dataclasses import dataclass, field

from argus.diagnose import rules as R
from argus.diagnose.slice import Chooser, AutoChooser
from argus.diagnose.report import fmt_rel, fmt_dur
from argus.diagnose import blocktype as B
from argus.diagnose.stacks import top_frames
from argus.graphbuild.graph import SPLIT_NAMES
from argus.diagnose.baseline import group_by_signature


# The kinds of questions a run asks (and an answers file replays), in one place.
QUESTION_KINDS = ("predecessor", "weak", "baseline", "go_on", "owner")


@dataclass
class Question:
    kind: str                    # one of QUESTION_KINDS
    text: str
    options: list                # [(key, label)]
    default: str                 # the automatic heuristic's key
    stop: str                    # the key that means stop / no
    context: dict = field(default_factory=dict)
    invalid: str = None          # set when asked again: the invalid input just given

    def render(self):
        lines = [self.text]
        for key, label in self.options:
            mark = "*" if key == self.default else " "
            lines.append(f" {mark}[{key}] {label}")
        return "\n".join(lines)

    def keys(self):
        return [k for k, _ in self.options]


class Abort(Exception):
    """Raised by an ask callback on Ctrl-C / EOF inside a question."""


class AskingChooser(Chooser):
    def __init__(self, g, ask=None, presets=(), rules=(), t0=0, on_answer=None, on_rule=None):
        self.g = g
        self.ask = ask
        self.presets = list(presets)
        self.rules = R.RuleSet(rules, on_fire=on_rule)
        self.t0 = int(t0)
        self.on_answer = on_answer
        self.queries = 0
        self.saved_by_memory = 0
        self.answers = []
        self.new_rules = []
        self.aborted = False
        self.diverged = False
        self.stop_origin = None
        self._memo = {}
        self.mode = "interactive" if ask is not None else ("replay" if self.presets else "auto")

    @property
    def saved_by_rules(self):
        return len(self.rules.fired)

    @property
    def saved(self):
        return self.saved_by_memory + self.saved_by_rules

    def auto_twin(self):
        """A chooser for the --auto run of the same hang: same rules, nobody
        asked, nothing reported."""
        return AskingChooser(self.g, rules=[r for r in self.rules.rules if r not in self.new_rules],
                             t0=self.t0)

    # --- asking ---
    def _answer(self, q):
        """(key, source) for q."""
        if self.aborted:
            return q.stop, "aborted"
        if self.presets:
            p = self.presets[0]
            if p.get("kind") == q.kind:
                self.presets.pop(0)
                key = str(p.get("answer"))
                return (key if key in q.keys() else q.stop), "replay"
            self.presets.clear()
            self.diverged = True
        if self.ask is None:
            return q.default, "auto"
        q.invalid = None
        while True:
            try:
                raw = self.ask(q)
            except (Abort, EOFError, KeyboardInterrupt):
                self.aborted = True
                return q.stop, "aborted"
            raw = (raw or "").strip().lower()
            if raw == "" and q.default is not None:
                return q.default, "user"
            if raw in q.keys():
                return raw, "user"
            q.invalid = raw

    def _record(self, q, key, source):
        if source in ("user", "replay"):
            self.queries += 1
        rec = {"kind": q.kind, "answer": key, "source": source, "vertex": q.context.get("vertex"),
               "question": q.text, "label": dict(q.options).get(key)}     # for reports (HTML)
        self.answers.append(rec)
        if self.on_answer is not None:
            self.on_answer(rec)
        return key

    def _put(self, q):
        key, source = self._answer(q)
        return self._record(q, key, source)

    # --- descriptions ---
    def who(self, v):
        g = self.g
        u = int(g.seg.utid[v])
        pid = int(g.threads.pid[u])
        return f"{g.comm(u)}/{int(g.threads.tid[u])} in {g.process_name(pid)}/{pid}"

    def frames(self, v):
        """"  [f <- g <- h]": the top frames of the user stack v blocked with, or ""."""
        frames = top_frames(self.g, v, 3)
        return "  [" + " <- ".join(frames) + "]" if frames else ""

    def edge_line(self, e):
        return f"{self.who(e.src)}  {e.type}{' (weak)' if e.weak else ''} at {fmt_rel(e.ts - self.t0)}" \
            + self.frames(e.src)

    # --- Chooser hooks ---
    def pick_predecessor(self, vertex, candidates):
        keep = [c for c in candidates if not self.rules.not_causal(self.g, c)]
        if len(keep) < len(candidates):
            self.answers.append({"kind": "rule", "answer": "not-causal", "source": "rule", "vertex": vertex})
        if not keep:
            self.stop_origin = {"kind": "not_causal", "label": "every incoming edge is marked not causal (rule)"}
            return None
        if len(keep) == 1:
            return keep[0]
        q = Question("predecessor", f"{self.who(vertex)} has {len(keep)} incoming edges; which one caused it?",
                     [(str(i + 1), self.edge_line(c)) for i, c in enumerate(keep)] + [("s", "stop the slice here")],
                     default="1", stop="s", context={"vertex": int(vertex), "edges": [c.eid for c in keep]})
        key = self._put(q)
        return None if key == "s" else keep[int(key) - 1]

    def follow_weak(self, edge):
        if self.rules.not_causal(self.g, edge):
            self.answers.append({"kind": "rule", "answer": "not-causal", "source": "rule", "vertex": edge.dst})
            return False
        memo_key = R.pair_key(self.g, edge)
        if memo_key in self._memo:
            self.saved_by_memory += 1
            self.answers.append({"kind": "memo", "answer": self._memo[memo_key], "source": "memo",
                                 "vertex": edge.dst})
            return self._memo[memo_key] == "f"
        q = Question("weak", f"{self.weak_why(edge)} into {self.who(edge.dst)}:\n"
                             f"  from {self.edge_line(edge)}\nfollow it?",
                     [("f", "follow"), ("s", "stop here"), ("n", "not causal: stop, and remember for later traces")],
                     default="f", stop="s", context={"vertex": int(edge.dst), "edge": edge.eid})
        key = self._put(q)
        if key == "n":
            self.new_rules.append(R.not_causal_rule(self.g, edge))
            self.rules.add(self.new_rules[-1])
            key = "s"
        self._memo[memo_key] = key
        return key == "f"

    def weak_why(self, edge):
        if edge.type == "program_order":
            kind = SPLIT_NAMES.get(int(self.g.seg.split_kind[edge.dst]), "?") \
                if "split_kind" in self.g.seg.names else "?"
            if kind == "callback":     # an exact cut from a callback probe, not a guess
                return "weak program-order edge (a callback began or ended here: the earlier vertex " \
                       "is other work of the same loop)"
            return f"weak program-order edge (the {kind} heuristic split the thread's run here: the " \
                   f"earlier vertex may be other work)"
        return "weak edge (maybe only a lock handed over)"

    def pick_baseline(self, candidates):
        if not candidates:
            return None
        groups = group_by_signature(self.g, candidates)
        if len(groups) == 1:
            return groups[0]
        opts = []
        for i, b in enumerate(groups):
            opts.append((str(i + 1), self.baseline_line(b)))
        q = Question("baseline", f"{len(groups)} kinds of similar waits ended quickly; which one is the baseline?",
                     opts + [("n", "none: go on without a baseline")], default="1", stop="n",
                     context={"vertex": int(candidates[0].vertex), "baselines": [b.vertex for b in groups]})
        key = self._put(q)
        return None if key == "n" else groups[int(key) - 1]

    def baseline_line(self, b):
        g = self.g
        waker = int(g.edges.src[b.edge])
        rel = ["same thread" if b.same_thread else f"thread {g.comm(b.utid)}/{int(g.threads.tid[b.utid])}"]
        if b.same_obj:
            rel.append("same object")
        sim = f"similarity {b.similarity:.2f}" if b.similarity is not None else ""
        return (f"{fmt_dur(b.wait_ns)} wait at {fmt_rel(b.wait_start_ns - self.t0)}, woken by {self.who(waker)} "
                f"({', '.join(rel)}{', ' + sim if sim else ''})" + self.frames(b.vertex))

    def pick_owner(self, vertex, owners):
        g = self.g
        keep = [o for o in owners if not self.rules.not_causal(g, o.edge_ref(g, vertex))]
        if len(keep) < len(owners):       # rules.not_causal recorded the firing (saved_by_rules)
            self.answers.append({"kind": "rule", "answer": "not-causal", "source": "rule", "vertex": vertex})
        if not keep:
            return None
        if len(keep) == 1:
            o = keep[0]
            return o if not o.weak or self.follow_weak(o.edge_ref(g, vertex)) else None
        q = Question("owner", f"{self.who(vertex)} waits for or polls something {len(keep)} threads may hold; "
                              "which one holds it?",
                     [(str(i + 1), self.owner_line(o)) for i, o in enumerate(keep)]
                     + [("n", "none: stop here (watch the polled flag with bp_watch)")],
                     default="1", stop="n", context={"vertex": int(vertex), "edges": [o.edge for o in keep]})
        key = self._put(q)
        return None if key == "n" else keep[int(key) - 1]

    def owner_line(self, o):
        how = "released what it polls" if o.edge < 0 else o.kind
        return (f"{self.who(o.vertex)}  {how}{' (weak)' if o.weak else ''}, {o.tries_text} at it, last at "
                f"{fmt_rel(o.ts - self.t0)}, on CPU {fmt_dur(o.cpu_ns)} in the hang")

    def go_on(self, root_cause):
        if root_cause.block_type == B.LONG_RUNNING:
            return True
        if root_cause.block_type == B.REPEATED_YIELD and \
                not B.flag_reads(self.g, root_cause.utid, root_cause.start_ns, root_cause.end_ns):
            return True          # no data flag read: its diagnosis is only the bp_watch advice
        g = self.g
        u = root_cause.utid
        q = Question("go_on", f"root cause at depth {root_cause.depth}: {g.comm(u)}/{int(g.threads.tid[u])} "
                              f"{root_cause.block_type}: {root_cause.why}{self.frames(root_cause.vertex)}\n"
                              f"diagnose it in turn (its own culprit)?",
                     [("y", "yes, go on"), ("n", "no, stop here")], default="y", stop="n",
                     context={"vertex": int(root_cause.vertex)})
        return self._put(q) == "y"


def auto_answers_of(chooser):
    """The replayable answers of a run (rule / memo entries are not questions)."""
    return [{"kind": a["kind"], "answer": a["answer"]} for a in chooser.answers
            if a["kind"] in QUESTION_KINDS]


__all__ = ["Question", "QUESTION_KINDS", "Abort", "AskingChooser", "AutoChooser", "auto_answers_of"]
