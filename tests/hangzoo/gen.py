"""The hang generator: composes causal chains from mechanisms, per seed.

A case is a chain of roles R0 .. Rd (depth d = 1..5).  R0 is the main thread
of the program (the hung thread); R(i-1) waits on R(i) through link i (a
mechanism: a pipe, a mutex, waitpid, ...); the last role Rd does the root
behaviour (CPU work, a sleep, a timer, sched_yield spinning, fsync).  Each
role Ri holds its link (a lock, a child process, an unanswered request)
from the start, waits downstream, and releases its link only when that wait
is over, so the hang of R0 lasts as long as the root behaviour.

Ground truth follows from the chain, not from Argus:
  hung block type   LongWait (R0 blocks on link 1) or RepeatedYield (R0
                    polls link 1: a non-blocking try, then a 5 ms sleep)
  root block type   cpu -> LongRunning; sleep, timer -> LongWait;
                    yield, fsync -> RepeatedYield (many waits < 20 ms or
                    sched_yield calls: docs/diagnosis-json.md, blocktype.py)
Noise (each a coin flip per case): an idle event-loop thread, fd reuse (a
quick wait on another object with the same fd number before the hang),
unrelated load (a process busy on a CPU during the hang), baselines (quick
instances of link 1..d's request before the hang, on token links).

Generation is a pure function of (seed, index): `cases(seed, n)` returns the
same list on every machine, and the first 60 of the full set are the fast
set.  Case k's first link (or its root, for root behaviours) is the k-th
mechanism of MECHANISMS in rotation, so any 60 consecutive cases cover them
all.
"""
import random
from dataclasses import asdict, dataclass, field

LONG_WAIT, LONG_RUNNING, REPEATED_YIELD = "LongWait", "LongRunning", "RepeatedYield"


@dataclass(frozen=True)
class Mechanism:
    name: str
    placement: str      # "thread": R(i) is a thread of R(i-1)'s process; "process": a child process; "any"
    token: bool         # can be released more than once (a byte, a post): baselines use it
    langs: tuple


C, PY, GO = "c", "python", "go"
ALL = (C, PY, GO)

LINKS = (
    Mechanism("pipe", "any", True, ALL),
    Mechanism("unix_stream", "any", True, ALL),
    Mechanism("unix_dgram", "any", True, ALL),
    Mechanism("tcp", "any", True, ALL),
    Mechanism("socketpair", "any", True, ALL),
    Mechanism("eventfd", "any", True, ALL),
    Mechanism("mutex", "thread", False, ALL),
    Mechanism("condvar", "thread", True, ALL),
    Mechanism("semaphore", "thread", True, ALL),
    Mechanism("rwlock", "thread", False, (C, GO)),
    Mechanism("flock", "any", False, ALL),
    Mechanism("fcntl", "process", False, (C, PY)),
    Mechanism("waitpid", "process", False, (C, PY)),
    Mechanism("signal", "thread", False, (C, PY, GO)),
    Mechanism("epoll", "any", True, (C, PY)),
    Mechanism("poll", "any", True, (C, PY)),
    Mechanism("select", "any", True, (C, PY)),
    Mechanism("future", "thread", False, ALL),
    Mechanism("channel", "thread", True, (GO,)),
)
ROOTS = {"cpu": LONG_RUNNING, "sleep": LONG_WAIT, "timer": LONG_WAIT,
         "yield": REPEATED_YIELD, "fsync": REPEATED_YIELD}
BY_NAME = {m.name: m for m in LINKS}
MECHANISMS = tuple(m.name for m in LINKS) + tuple(ROOTS)
# Go runs every role as a goroutine of one process (a child would be a re-exec)
PROCESS_LANGS = (C, PY)

FAST_N, FULL_N = 60, 300
HOLD_S = 3.5          # root behaviour of a hang that ends before tracing stops
ONGOING_HOLD_S = 30.0  # ... of one still going on when tracing stops (killed after)
BASELINES = 5


@dataclass
class Case:
    id: str
    seed: int
    index: int
    lang: str
    links: list                 # mechanism names, link 1 .. d
    root: str                   # root behaviour of Rd
    placement: list             # per role 0..d: "main", "thread" or "process"
    hung_mode: str              # "block" or "poll"
    ongoing: bool
    hold_s: float
    noise: dict = field(default_factory=dict)   # idle, fd_reuse, load, baselines (bool each)
    pinned: list = field(default_factory=list)  # Go: per role, locked to an OS thread (tid known)

    @property
    def depth(self):
        return len(self.links)

    @property
    def hung_type(self):
        return REPEATED_YIELD if self.hung_mode == "poll" else LONG_WAIT

    @property
    def root_type(self):
        return ROOTS[self.root]

    def mechanisms(self):
        return sorted(set(self.links) | {self.root})

    def to_dict(self):
        d = asdict(self)
        d.update(depth=self.depth, hung_type=self.hung_type, root_type=self.root_type)
        return d


def _langs_for(name):
    return BY_NAME[name].langs if name in BY_NAME else ALL


def make_case(seed, index):
    rng = random.Random(f"hangzoo:{seed}:{index}")
    focus = MECHANISMS[index % len(MECHANISMS)]
    langs = _langs_for(focus)
    lang = langs[(index // len(MECHANISMS)) % len(langs)]
    depth = rng.randint(1, 5)
    usable = [m.name for m in LINKS if lang in m.langs]
    links = [rng.choice(usable) for _ in range(depth)]
    root = rng.choice(sorted(ROOTS))
    if focus in ROOTS:
        root = focus
    else:
        links[0] = focus
    if lang == GO:
        # Go's signals are process-wide: a second signal link would take the first one's wakeup
        links = [m if m != "signal" or k == links.index("signal") else "channel" for k, m in enumerate(links)]
    placement = ["main"]
    for name in links:
        where = BY_NAME[name].placement
        if where == "any":
            where = rng.choice(("thread", "process")) if lang in PROCESS_LANGS else "thread"
        placement.append(where)
    hung_mode = "poll" if lang != GO and rng.random() < 0.25 else "block"
    ongoing = rng.random() < 0.3
    noise = {k: rng.random() < 0.35 for k in ("idle", "fd_reuse", "load", "baselines")}
    pinned = [True] + [lang != GO or rng.random() < 0.5 for _ in links]
    return Case(id=f"{index:03d}-{lang}-{'-'.join(links)}-{root}", seed=seed, index=index, lang=lang,
                links=links, root=root, placement=placement, hung_mode=hung_mode, ongoing=ongoing,
                hold_s=ONGOING_HOLD_S if ongoing else HOLD_S, noise=noise, pinned=pinned)


def cases(seed, n):
    return [make_case(seed, k) for k in range(n)]
