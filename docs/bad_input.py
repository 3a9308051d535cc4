"""Run every bad-input case and write the site's "What bad input gets" page.

    python docs/bad_input.py --out build/site/src/bad-input.md [--check]

Each module in `docs/bad_input_cases/` holds ``CASES``: a short description of a
hostile but honest input, a zero-argument call that feeds it to the package,
and, for a case where the package may answer, the checks that say what a
correct answer is (see ``docs/bad_input_cases/__init__.py``). Each call runs
here, with a time limit, and its outcome is classified:

* **handled**: the call returned and every declared check holds;
* **clear error**: the package raised one of its documented error types
  (``ValueError``, ``TypeError``, ``OSError``, ``KeyError`` and their
  subclasses, each with a message that names the problem), or a command line
  exited non-zero with a message;
* **silent**: it returned, but a check says the answer is wrong, or the case
  declares no check at all (so nothing is "handled" by default);
* **lost**: a check says data the user had is gone (an index that saved but
  does not load, a cache entry destroyed, a file overwritten or half-written);
* **crash**: any other exception (``AttributeError``, ``IndexError``, ...), an
  error without a message, or an error raised by the case's own code;
* **hang**: it stopped making progress: its process (threads and child
  processes included) used less than ``IDLE_SHARE`` of one CPU over the last
  ``IDLE_S`` seconds (it sleeps, waits or blocks), or it used ``CPU_LIMIT_S``
  seconds of CPU without returning (a loop that does not end).

A hang is judged on CPU time, not on the clock: on a machine that other work
keeps busy a case gets a smaller share of the CPU and takes longer, but it
still makes progress, so a case that finishes is never counted as a hang; a
case that waits for something that never comes uses no CPU and is stopped
after ``IDLE_S`` seconds however busy the machine is.

The page is generated from the code at every site build, so it cannot drift;
``--check`` exits 1 when any case is silent, lost, crashes or hangs.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter, deque
from collections.abc import Callable, Iterator, Set
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import NamedTuple

import psutil

import hierret

DOCS = Path(__file__).resolve().parent
if str(DOCS) not in sys.path:  # the case modules import their vocabulary from bad_input_cases
    sys.path.insert(0, str(DOCS))

from bad_input_cases import Check  # noqa: E402

CASES_DIR = DOCS / "bad_input_cases"
PACKAGE = Path(hierret.__file__).resolve().parent
CLEAR = (ValueError, TypeError, OSError, KeyError)
#: A case makes no progress when, over the last IDLE_S seconds, its threads and child
#: processes were running or ready to run (waiting for a CPU that other work held) for
#: less than IDLE_SHARE of that time: it sleeps, waits or blocks, and is a hang. A wait a
#: case makes on purpose (a package's time-out, say) must be shorter than IDLE_S.
IDLE_S = 20.0
IDLE_SHARE = 0.05
#: A case that used this many seconds of CPU time without returning is a hang (a loop
#: that does not end). The most a case used was 4.4 s, the first that loads a model
#: (``docs/bad_input.py --times 5``; 11 s on the clock at load average 9 on two cores).
CPU_LIMIT_S = 60.0
#: How often the watch looks at what the case uses, in seconds.
POLL_S = 0.25
#: The outcome classes, in the order the page counts them.
OUTCOMES = ("handled", "clear error", "silent", "lost", "crash", "hang")
FAILURES = ("silent", "lost", "crash", "hang")
_PLURAL = {"clear error": "clear errors", "crash": "crashes", "hang": "hangs"}


class CaseError(ValueError):
    """A case module declares a case the page cannot judge (e.g. an empty list of checks)."""


class Case(NamedTuple):
    """One case: its area (module), input, call and checks (empty: it must refuse)."""

    area: str
    text: str
    call: Callable[[], object]
    checks: tuple[Check, ...]


class _Hang(BaseException):  # not an Exception: a case's ``except Exception`` keeps it
    pass


def _waited(pid: int) -> dict[int, float]:
    """Seconds each thread of process ``pid`` has spent ready to run but not running, by
    thread id (Linux's ``/proc/<pid>/task/<tid>/schedstat``, its second field; nothing
    where the system has no such file or the process has ended)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    waited = {}
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as f:
                waited[int(tid)] = int(f.read().split()[1]) / 1e9
        except (OSError, ValueError, IndexError):  # the thread ended meanwhile
            continue
    return waited


def _descendants(process: psutil.Process, besides: Set[int]) -> list[psutil.Process]:
    """The child processes of ``process`` and theirs, less those in ``besides`` with all
    of their own (whose time, when they end, goes to a parent that is not counted)."""
    found, todo = [], [process]
    while todo:
        try:
            children = todo.pop().children()
        except psutil.Error:  # ended meanwhile
            continue
        fresh = [c for c in children if c.pid not in besides]
        found += fresh
        todo += fresh
    return found


def usage(besides: Set[int] = frozenset()) -> tuple[float, dict[int, float]]:
    """What this process and its child processes have used: (CPU time, waits for a CPU).

    CPU time (user and system, in seconds) of every thread of this process, of its child
    processes that ended and of those still running, their children included; and, for
    each thread running now, the seconds it waited, ready to run, for a CPU (Linux only:
    empty elsewhere). Running child processes whose ids are in ``besides`` (those a case
    did not start, say) are left out, and so are their own children.

    Examples
    --------
    >>> before, _ = usage()
    >>> _ = sum(i * i for i in range(300_000))
    >>> usage()[0] > before
    True
    """
    me = psutil.Process()
    own = me.cpu_times()
    cpu = own.user + own.system + own.children_user + own.children_system
    waited = _waited(me.pid)
    for child in _descendants(me, besides):
        try:
            t = child.cpu_times()
        except psutil.Error:  # ended meanwhile: its time is in its parent's children_*
            continue
        cpu += t.user + t.system + t.children_user + t.children_system
        waited |= _waited(child.pid)
    return cpu, waited


class _Watch(threading.Thread):
    """Watches what a case uses from a thread and stops the main thread when it hangs.

    Every ``POLL_S`` it reads :func:`usage` (less its own CPU time and the child processes
    that were running before the case began): the case's CPU time, and its progress, the
    CPU time plus the time its threads waited for a CPU, which on a busy machine is where
    the time goes that they do not get. When the case makes no progress or passes
    ``CPU_LIMIT_S`` it writes why in :attr:`verdict` and sends SIGALRM to the main thread,
    whose handler raises ``_Hang`` there (a blocking call such as ``time.sleep``, a lock or
    a socket read is interrupted).
    """

    def __init__(self) -> None:
        super().__init__(name="bad-input-watch", daemon=True)
        self.verdict: str | None = None
        self.done = threading.Event()
        self._main = threading.main_thread().ident
        self._start = time.monotonic()
        self._besides = frozenset(c.pid for c in psutil.Process().children(recursive=True))
        self._cpu0, self._seen = usage(self._besides)
        self._waited = 0.0
        self._cpu = 0.0

    def _used(self, own_cpu: float) -> tuple[float, float]:
        """(CPU seconds, CPU seconds plus seconds waited for a CPU) since the case began.

        Both only grow: a child process that has ended but is not yet reaped is in no
        reading (not among the running, not yet in its parent's ``children_*``), so a
        reading can fall for a moment; the highest reading so far stands until then.
        """
        cpu, waited = usage(self._besides)
        for tid, seconds in waited.items():
            if tid != self.native_id:  # a thread's wait counts from its first sight
                self._waited += max(0.0, seconds - self._seen.get(tid, 0.0))
        self._seen = waited
        self._cpu = max(self._cpu, cpu - self._cpu0 - own_cpu)
        return self._cpu, self._cpu + self._waited

    def run(self) -> None:
        own = time.thread_time()  # the watch's own CPU time is no progress of the case
        window: deque[tuple[float, float]] = deque()
        while not self.done.wait(POLL_S):
            now = time.monotonic()
            cpu, progress = self._used(time.thread_time() - own)
            window.append((now, progress))
            while len(window) > 1 and window[1][0] <= now - IDLE_S:
                window.popleft()
            wall, (then, before) = now - self._start, window[0]
            if cpu >= CPU_LIMIT_S:
                self.verdict = (
                    f"still running after {cpu:.0f} s of CPU time "
                    f"(limit {CPU_LIMIT_S:.0f} s; {wall:.0f} s on the clock)"
                )
            elif then <= now - IDLE_S and progress - before < IDLE_SHARE * (now - then):
                self.verdict = (
                    f"no progress: it ran or waited for a CPU {progress - before:.2f} s "
                    f"in the last {now - then:.0f} s (it sleeps, waits or blocks; "
                    f"{wall:.0f} s on the clock, {cpu:.1f} s of CPU time in all)"
                )
            if self.verdict is not None:
                assert self._main is not None
                signal.pthread_kill(self._main, signal.SIGALRM)
                return


@contextmanager
def _watched() -> Iterator[_Watch]:
    """A :class:`_Watch` running over the block (which must run on the main thread)."""
    watch = _Watch()

    def _alarm(signum: int, frame: FrameType | None) -> None:
        if watch.verdict is not None:
            raise _Hang

    previous = signal.signal(signal.SIGALRM, _alarm)
    watch.start()
    try:
        yield watch
    finally:
        watch.done.set()
        try:
            watch.join()  # a verdict reached just now may still raise here
        finally:
            signal.signal(signal.SIGALRM, previous)


def _short(text: str, limit: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _from_package(err: BaseException) -> bool:
    """Whether the error was raised inside hierret (not by the case's own code)."""
    tb = err.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve().is_relative_to(PACKAGE):
            return True
        tb = tb.tb_next
    return False


def classify_error(err: BaseException) -> tuple[str, str]:
    """(outcome, what happened) for an exception a case's call raised or caught.

    A documented error type with a message is a clear error only when it comes
    from the package: the same error raised by the case's own code (say, while
    it looks at what is left on disk) means the case broke, and counts as a crash.
    """
    if isinstance(err, SystemExit):  # a command line refusing with a message and a status
        said = isinstance(err.code, str) and err.code.strip()
        return ("clear error" if said else "crash"), _short(str(err.code))
    msg = f"`{type(err).__name__}`: {_short(str(err))}"
    if not isinstance(err, CLEAR) or not str(err).strip():
        return "crash", msg
    if not _from_package(err):
        return "crash", f"{msg} (raised by the case's own code, not by the package)"
    return "clear error", msg


def run_case(call: Callable[[], object], checks: tuple[Check, ...] = ()) -> tuple[str, str]:
    """(outcome class, what happened) for one case; see the module's docstring.

    Runs on the main thread (a hang is stopped with a signal, see :class:`_Watch`).
    """
    try:
        with _watched() as watch:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = call()
            said = "; ".join(sorted({str(w.message).splitlines()[0] for w in caught}))
            text = str(result) + (f" (warning: {said})" if said else "")
            if not checks:
                return "silent", (
                    f"{text} (returned, and the case declares no check that this is right)"
                )
            failed = []
            for check in checks:
                try:
                    holds = bool(check.holds(result))
                except Exception as err:
                    return "crash", (
                        f"{text}; the check {check.claim!r} could not be evaluated "
                        f"(`{type(err).__name__}`: {err})"
                    )
                if not holds:
                    failed.append(check)
    except _Hang:
        return "hang", str(watch.verdict)
    except (Exception, SystemExit) as err:
        return classify_error(err)
    if failed:
        kind = "lost" if any(c.failing == "lost" for c in failed) else "silent"
        return kind, f"{text}; NOT TRUE: {'; '.join(c.claim for c in failed)}"
    refused = getattr(result, "refused", None)
    if isinstance(refused, BaseException):
        kind, error = classify_error(refused)
        return kind, f"{error}; then: {text}"
    return "handled", text


def _checks(where: str, declared: object) -> tuple[Check, ...]:
    """The checks of a three-item case, refusing what cannot judge a result."""
    checks = (declared,) if isinstance(declared, Check) else declared
    if (
        not isinstance(checks, tuple | list)
        or not checks
        or not all(isinstance(c, Check) for c in checks)
    ):
        raise CaseError(
            f"{where} declares no check ({declared!r}): give a Check made with right(...) or "
            "kept(...), or a non-empty tuple of them; a case whose only correct outcome is "
            "a clear error is written (input, call)"
        )
    return tuple(checks)


def collect(folder: Path = CASES_DIR) -> list[Case]:
    """Every case of the modules in ``folder``, in file order.

    Raises
    ------
    CaseError
        A case is not ``(input, call)`` or ``(input, call, checks)`` with checks.
    """
    cases = []
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"bad_input_cases.{path.stem}", path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for item in module.CASES:
            if not isinstance(item, tuple) or len(item) not in (2, 3) or not callable(item[1]):
                raise CaseError(
                    f"{path.name}: a case must be (input, call) or "
                    f"(input, call, checks), got {item!r}"
                )
            where = f"{path.name}: case {item[0]!r}"
            checks = _checks(where, item[2]) if len(item) == 3 else ()
            cases.append(Case(path.stem, item[0], item[1], checks))
    return cases


def _cell(text: str) -> str:
    """Table-safe text, with temporary folders and local ports made neutral (in square
    brackets: a ``<tmp>`` was raw HTML to MyST, and the page showed nothing there)."""
    text = re.sub(re.escape(tempfile.gettempdir()) + r"/[\w.-]+", "[tmp]", text)
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:[port]", text)
    text = re.sub(r"\b\d{20}-\d+-[0-9a-f]{8}\.hvc\b", "[shard].hvc", text)  # time, pid, random
    return text.replace("|", "\\|").replace("\n", " ")


def summary(kinds: list[str]) -> str:
    """``"N cases: a handled, b clear errors, c silent, d lost, e crashes, f hangs"``."""
    counts = Counter(kinds)
    parts = ", ".join(f"{counts[k]} {_PLURAL.get(k, k)}" for k in OUTCOMES)
    return f"{len(kinds)} cases: {parts}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, help="the page to write (Markdown)")
    ap.add_argument(
        "--check", action="store_true", help="exit 1 on any silent, lost, crashing or hanging case"
    )
    ap.add_argument(
        "--cases",
        type=Path,
        default=CASES_DIR,
        help="folder of case modules (default: docs/bad_input_cases)",
    )
    ap.add_argument(
        "--times",
        type=int,
        default=0,
        metavar="N",
        help="print the N cases that used the most CPU time, with their time on the clock",
    )
    args = ap.parse_args(argv)
    rows, spent = [], []
    for case in collect(args.cases):
        cpu, wall = usage()[0], time.monotonic()
        kind, what = run_case(case.call, case.checks)
        spent.append((usage()[0] - cpu, time.monotonic() - wall, case.area, case.text))
        expect = "; ".join(c.claim for c in case.checks) or "a clear error"
        rows.append((case.area, case.text, expect, kind, what))
    line = summary([kind for *_, kind, _ in rows])
    lines = [
        "# What bad input gets",
        "",
        "Every row below was produced by running the case against the package when "
        "this site was built (`docs/bad_input.py`, cases in `docs/bad_input_cases/`), so "
        "the table cannot drift from the code. Each case declares what a correct outcome "
        "is (*correct means*), and the outcome is judged against it: *handled* means the "
        "package answered and every declared check holds; *clear error* means it refused "
        "with an error that names the problem and the fix, before doing expensive work; "
        "*silent* means it answered but a check says the answer is wrong (or nothing says "
        "it is right); *lost* means data the user had is gone (an index that saved but "
        "does not load, a cache entry destroyed, a file overwritten); *crash* (any other "
        "exception) and *hang* (no progress: less than "
        f"{IDLE_SHARE:.0%} of one CPU over {IDLE_S:.0f} s, or {CPU_LIMIT_S:.0f} s of CPU "
        "time without returning) are bugs. Silent, lost, crash and "
        "hang all fail the site build.",
        "",
        f"**{line}.**",
        "",
        "| area | input | correct means | outcome | what happened |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {area} | {_cell(text)} | {_cell(expect)} | {kind} | {_cell(what)} |"
        for area, text, expect, kind, what in rows
    ]
    page = "\n".join(lines) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(page, encoding="utf-8")
    print(line)
    for cpu, wall, area, text in sorted(spent, reverse=True)[: args.times]:
        print(f"{cpu:7.2f} s CPU {wall:7.2f} s clock  [{area}] {_short(text, 80)}")
    bad = [r for r in rows if r[3] in FAILURES]
    for area, text, _, kind, what in bad:
        print(f"{kind}: [{area}] {text}: {what}", file=sys.stderr)
    return 1 if args.check and bad else 0


if __name__ == "__main__":
    sys.exit(main())
