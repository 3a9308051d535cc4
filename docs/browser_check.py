"""Check a built site in headless Chromium, page by page, as readers at 1280 and 390 px see it.

    python docs/browser_check.py build/site/html [--chromium /usr/bin/chromium]
        [--width 1280 --width 390] [--min-font-px 9] [--screenshots DIR]
        [--json report.json] [--only page.html]

Every page is loaded at each width (a laptop's 1280 px, a phone's 390 px): every
check below at the first, the layout checks (overflow and figure text size) at
the others, their failures named "page at 390 px". ``--screenshots`` saves the
window as Chromium shows it, scrolled a screen at a time (``page-1280-00.png``...).

Every ``*.html`` page of the folder (the theme's own templates in ``_static``
excepted) is loaded from disk by the Chromium found on the machine, driven
over the DevTools protocol on a pipe (``--remote-debugging-pipe``), so nothing
beyond the standard library and the browser is needed and nothing is
downloaded. Each page is checked for:

console
    no console error, uncaught exception or failed resource load;
images
    every image loaded;
overflow
    the page does not scroll sideways, no notebook code cell (input or text
    output) overflows its box (at the narrower widths a code block that scrolls
    in its own box passes), and no table runs past the article column
    unless it scrolls inside a box of its own no taller than a screen (900 px,
    so that its scrollbar is in sight); long text in a table cell wraps;
stderr
    no stderr output block, and no warning or ``INFO:``-style log line in any
    output;
paths
    no local absolute path (``/work/``, ``/root/``, ``/tmp/``, ``/home/``, ``/Users/``)
    anywhere in the page's text, collapsed cells included;
links
    every link into the site resolves: its file exists and its ``#fragment``
    names an element of the target page (or, into the question explorer, is
    its state: ``#r=dr001&t=...&q=...``);
quotes
    no typographic quote (‘ ’ “ ”) inside code (inline code, code blocks,
    notebook inputs), and none used as a string's delimiters anywhere in the text
    (``query=’’``, ``[‘passage: ’, ‘query: ’]``): docutils'
    smart quotes turn a quoted repr into text that breaks when copied as Python;
fonts
    every figure saved by :func:`hierret.publish.figures.save` records in its PNG the
    smallest font it uses and its resolution; displayed at the width the page
    gives it, that font must be at least ``--min-font-px`` CSS pixels;
explorer
    on the question explorer (a page with ``#hr-explorer``): its data loaded,
    and for the first and the last comparison a question found by a word of
    its text in the search box, picked from the list, and its rankings shown:
    one column per arm, the rank of each arm's first answer-bearing unit as
    the data has it, and a row per ranked unit.

Exit status 0 when every check passes, 1 otherwise (2: no Chromium). The
report lists the counts per check and every failure.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import json
import os
import queue
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

CHECKS = (
    "console",
    "images",
    "overflow",
    "stderr",
    "paths",
    "links",
    "fonts",
    "quotes",
    "explorer",
)
#: Typographic quotes: never inside code (a copied ``query='a '`` must stay Python).
TYPOGRAPHIC = re.compile(r"[\u2018\u2019\u201c\u201d]")
#: Typographic quotes as string delimiters in running text or output, where a repr or a
#: parameter value is quoted (``query=\u2019\u2019``, ``[\u2018passage: \u2018,``):
#: docutils' smart quotes at work on code-like text.
QUOTED_CODE = re.compile(
    r"(?:[\w\])]=|\[)\s?[\u2018\u2019\u201c\u201d]"
    r"|[\u2018\u2019\u201c\u201d],\s?[\u2018\u2019\u201c\u201d]"
)
#: The window widths every page is loaded at: a laptop's, then a phone's (overflow and
#: figure text size only).
WIDTHS = (1280, 390)
#: Seconds to wait for Chromium's reply to a command or for a page's load event: a guard
#: against a hung browser only, which a machine that other work keeps busy never reaches.
WAIT_S = 600.0
#: A screen's height in CSS pixels: a table that scrolls sideways in a box taller than
#: this has its scrollbar out of sight while its first rows are read.
SCREEN = 900
#: Local absolute paths that must never reach a page.
LOCAL_PATH = re.compile(
    r"(?<![\w.~/-])(?:/(?:work|root|tmp|home|Users|private/var|var/folders)/"
    r"|[A-Za-z]:\\(?:Users|work)\\|file:///)"
)
#: The question explorer's state in a link's fragment (``#r=dr001&q=...``), not an element id.
_STATE = re.compile(r"^[a-z]=[^&]*(?:&[a-z]=[^&]*)*$")
#: Log and warning lines that are noise on a page.
NOISE = re.compile(r"(?m)^(?:INFO|WARNING|ERROR|DEBUG|CRITICAL):[\w.]+:|\b\w*Warning: ")
#: PNG text keys written by hierret.publish.figures.save.
FONT_KEY, DPI_KEY = "hierret:min_font_pt", "hierret:dpi"

_PROBE = r"""
(() => {
  const article = document.querySelector('article.bd-article') || document.querySelector('main')
    || document.body;
  const box = article.getBoundingClientRect();
  const SCREEN = %(screen)d;  // a laptop screen's height: a scrollbar below it is unseen
  const de = document.documentElement;
  const out = {images: [], code: [], tables: [], wrap: [], stderr: [], noise: [], links: [],
               ids: []};
  out.pageOverflow = Math.max(de.scrollWidth, document.body.scrollWidth) - de.clientWidth;
  out.wide = [];
  if (out.pageOverflow > 1) {  // the outermost elements reaching past the window, to name them
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.right > de.clientWidth + 1 && !(el.parentElement
          && el.parentElement.getBoundingClientRect().right > de.clientWidth + 1)) {
        out.wide.push(`${el.tagName.toLowerCase()}.${[...el.classList].join('.')} `
                      + `(${Math.round(r.right)} px): ${el.textContent.trim().slice(0, 60)}`);
      }
      if (out.wide.length >= 3) break;
    }
  }
  for (const img of document.images) {
    const r = img.getBoundingClientRect();
    out.images.push({src: img.currentSrc || img.src, ok: img.complete && img.naturalWidth > 0,
                     natural: img.naturalWidth, shown: r.width});
  }
  document.querySelectorAll('details').forEach(d => { d.open = true; });  // collapsed cells too
  const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  for (const pre of document.querySelectorAll('div.cell div.cell_input pre, '
                                              + 'div.cell div.cell_output pre')) {
    const over = pre.scrollWidth - pre.clientWidth;
    if (over > 1) out.code.push({over, scrolls: scrolls(pre) || scrolls(pre.parentElement),
                                 text: pre.textContent.trim().slice(0, 90)});
  }
  for (const t of article.querySelectorAll('table')) {
    const r = t.getBoundingClientRect();
    const label = (t.querySelector('caption') || t).textContent.trim().slice(0, 60);
    if (r.right <= box.right + 1 && r.left >= box.left - 1) {
      out.tables.push({state: 'fits', label});
      continue;
    }
    let el = t.parentElement, ok = false;
    while (el && el !== article) {
      const er = el.getBoundingClientRect();
      if (scrolls(el) && er.right <= box.right + 1 && er.left >= box.left - 1) { ok = true; break; }
      el = el.parentElement;
    }
    const tall = ok && el.getBoundingClientRect().height > SCREEN;
    out.tables.push({state: ok ? (tall ? 'scrolls, scrollbar a screen away' : 'scrolls') : 'cut',
                     label, right: r.right, column: box.right});
  }
  for (const td of article.querySelectorAll('td, th')) {
    const ws = getComputedStyle(td).whiteSpace;
    if (td.textContent.length > 100 && (ws === 'nowrap' || ws === 'pre')) {
      out.wrap.push(td.textContent.trim().slice(0, 60));
    }
  }
  for (const el of document.querySelectorAll('div.output.stderr, div.output_stderr')) {
    out.stderr.push(el.textContent.trim().slice(0, 200));
  }
  for (const el of document.querySelectorAll('div.cell_output')) {
    out.noise.push(el.textContent);
  }
  out.codeText = [];  // code the reader may copy: inline code, code blocks, cell inputs
  for (const el of article.querySelectorAll('code, kbd, samp, div.highlight pre')) {
    if (!el.closest('div.cell_output') && !el.parentElement.closest('code, pre')) {
      out.codeText.push(el.textContent);
    }
  }
  const text = article.cloneNode(true);
  text.querySelectorAll('script, style').forEach(e => e.remove());
  out.text = text.textContent;
  out.title = document.title;
  for (const a of document.querySelectorAll('a[href]')) out.links.push(a.href);
  for (const e of document.querySelectorAll('[id]')) out.ids.push(e.id);
  for (const e of document.querySelectorAll('a[name]')) out.ids.push(e.getAttribute('name'));
  return JSON.stringify(out);
})()
"""


_EXPLORER = r"""
(() => {
  const root = document.getElementById('hr-explorer');
  if (!root) return JSON.stringify(null);
  const out = {checked: [], problems: []};
  const sel = document.getElementById('hr-set'), search = document.getElementById('hr-search');
  const list = document.getElementById('hr-questions'), view = document.getElementById('hr-view');
  const data = window.HIERRET_EXPLORER;
  if (!data || !sel || !search || !list || !view) {
    out.problems.push('the explorer did not start: ' + (data ? 'no question list'
                      : 'no data (window.HIERRET_EXPLORER; _static/explorer-data.js)'));
    return JSON.stringify(out);
  }
  const sets = [];
  data.records.forEach(r => r.sets.forEach(s => sets.push(s)));
  for (const i of [...new Set([0, sets.length - 1])]) {
    const set = sets[i];
    sel.value = String(i); sel.dispatchEvent(new Event('change'));
    const q = set.questions[Math.floor(set.questions.length / 2)];
    const word = (q.text.split(/\s+/).find(w => w.length > 3) || q.id).toLowerCase();
    search.value = word; search.dispatchEvent(new Event('input'));
    const found = [...list.options].some(o => o.value === q.id);
    if (!found) { out.problems.push(`search "${word}" does not list ${q.id}`); continue; }
    list.value = q.id; list.dispatchEvent(new Event('change'));
    const table = view.querySelector('table');
    const where = `${set.title}, ${set.target} target, question ${q.id}`;
    if (!table) { out.problems.push(`${where}: no rankings shown`); continue; }
    const rows = [...table.rows].map(r => [...r.cells].map(c => c.textContent.trim()));
    const head = rows[0].slice(1), first = rows.find(r => r[0] === 'first answer at rank');
    const depth = Math.max(...set.arms.map(a => set.rows[q.id][a].hits.length));
    const ranks = rows.filter(r => /^rank \d+$/.test(r[0])).length;
    const want = set.arms.map(a => set.rows[q.id][a].first === null ? 'none ranked'
                                   : String(set.rows[q.id][a].first));
    if (head.join('|') !== set.arms.join('|')) out.problems.push(`${where}: arms ${head}`);
    else if (!first || first.slice(1).join('|') !== want.join('|'))
      out.problems.push(`${where}: first answer ranks ${first} instead of ${want}`);
    else if (ranks !== depth) out.problems.push(`${where}: ${ranks} ranked rows of ${depth}`);
    else out.checked.push(where);
  }
  search.value = ''; search.dispatchEvent(new Event('input'));
  return JSON.stringify(out);
})()
"""


class BrowserError(RuntimeError):
    """Chromium could not be started or stopped answering."""


def find_chromium(explicit: str | None = None) -> str | None:
    """The Chromium to drive: ``explicit``, ``$CHROMIUM``, or one on the PATH."""
    for candidate in (
        explicit,
        os.environ.get("CHROMIUM"),
        "chromium",
        "chromium-browser",
        "google-chrome",
        "/usr/bin/chromium",
    ):
        if candidate and (path := shutil.which(candidate)):
            return path
    return None


class Browser:
    """Headless Chromium over the DevTools protocol on a pipe (fds 3 and 4 of the child)."""

    def __init__(self, chromium: str, width: int = 1280, height: int = 1600) -> None:
        self.width, self.height = width, height
        self._profile = tempfile.mkdtemp(prefix="browser-check-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def child_fds() -> None:  # fds 3 and 4, whatever numbers the pipes got
            a = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-scrollbars=false",
            "--allow-file-access-from-files",
            f"--user-data-dir={self._profile}",
            f"--window-size={width},{height}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self._proc = subprocess.Popen(
            args,
            pass_fds=(3, 4),
            preexec_fn=child_fds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._next = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self._events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_child, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._replies[-1] = {"error": {"message": "Chromium closed the pipe"}}
                    self._cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    with self._cond:
                        self._replies[message["id"]] = message
                        self._cond.notify_all()
                else:
                    self._events.put(message)

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = WAIT_S,
    ) -> dict[str, Any]:
        """Send one command and wait for its reply; raise :class:`BrowserError` on an error."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._next not in self._replies and -1 not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BrowserError(f"{method}: no reply from Chromium in {timeout:.0f} s")
                self._cond.wait(left)
            reply = self._replies.pop(self._next, None) or self._replies[-1]
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def events(self) -> Iterator[dict[str, Any]]:
        """The events received since the last call."""
        while True:
            try:
                yield self._events.get_nowait()
            except queue.Empty:
                return

    def wait_for(self, method: str, session: str, timeout: float = WAIT_S) -> list[dict[str, Any]]:
        """Every event up to and including the first ``method`` event of ``session``."""
        seen, deadline = [], time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"no {method} within {timeout:.0f} s")
            try:
                event = self._events.get(timeout=left)
            except queue.Empty:
                continue
            seen.append(event)
            if event.get("method") == method and event.get("sessionId") == session:
                return seen

    def close(self) -> None:
        """Stop Chromium and remove its profile."""
        with contextlib.suppress(BrowserError):
            self.send("Browser.close", timeout=10)
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def png_text(path: Path) -> dict[str, str]:
    """The ``tEXt`` (and uncompressed ``iTXt``) entries of a PNG file; ``{}`` for anything else."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return {}
    out, pos = {}, 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"tEXt" and b"\0" in body:
            k, v = body.split(b"\0", 1)
            out[k.decode("latin-1")] = v.decode("latin-1")
        elif kind == b"zTXt" and b"\0" in body:
            k, v = body.split(b"\0", 1)
            out[k.decode("latin-1")] = zlib.decompress(v[1:]).decode("latin-1")
        elif kind == b"iTXt" and b"\0" in body:
            k, rest = body.split(b"\0", 1)
            compressed, rest = rest[0], rest[2:]
            _lang, rest = rest.split(b"\0", 1)
            _tkey, value = rest.split(b"\0", 1)
            out[k.decode("latin-1")] = (zlib.decompress(value) if compressed else value).decode()
        elif kind == b"IEND":
            break
        pos += 12 + length
    return out


@dataclass
class Report:
    """What the check found: per check, how many things were looked at and what failed."""

    pages: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHECKS, 0))
    failures: dict[str, list[str]] = field(default_factory=lambda: {c: [] for c in CHECKS})
    notes: dict[str, int] = field(default_factory=dict)
    fonts: list[dict[str, Any]] = field(default_factory=list)

    def fail(self, check: str, page: str, what: str) -> None:
        """Record one failure of ``check`` on ``page``."""
        self.failures[check].append(f"{page}: {what}")

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return not any(self.failures.values())

    def summary(self) -> str:
        """One line per check: what was looked at, how many failed; then every failure."""
        lines = [f"browser check: {len(self.pages)} pages"]
        for check in CHECKS:
            bad = self.failures[check]
            lines.append(f"  {check:<9} {self.counts[check]:>5} checked  {len(bad):>4} failed")
        for name, n in sorted(self.notes.items()):
            lines.append(f"  ({name}: {n})")
        for check in CHECKS:
            for item in self.failures[check]:
                lines.append(f"FAIL {check}: {item}")
        lines.append("all checks pass" if self.ok else "some checks FAILED")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "pages": self.pages,
            "counts": self.counts,
            "failures": self.failures,
            "notes": self.notes,
            "fonts": self.fonts,
            "ok": self.ok,
        }


def site_pages(root: Path) -> list[Path]:
    """Every page of a built site: its ``*.html`` files, the theme's templates left out."""
    return sorted(p for p in root.rglob("*.html") if "_static" not in p.relative_to(root).parts)


def _local(url: str, root: Path) -> tuple[Path, str] | None:
    """A ``file://`` link into ``root`` as (file, fragment); ``None`` for any other link."""
    parts = urlsplit(url)
    if parts.scheme != "file":
        return None
    path = Path(unquote(parts.path))
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return None
    if path.is_dir() or parts.path.endswith("/"):
        path = path / "index.html"
    return path, unquote(parts.fragment)


def _ids_in_file(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    return set(re.findall(r"""\b(?:id|name)=["']([^"']+)["']""", text))


def _screenshot(browser: Browser, session: str, out: Path, tiles: int, width: int) -> None:
    """Up to ``tiles`` screenshots of the window scrolled down a screen at a time, as
    Chromium shows the page (sticky sidebar and header in place), not the page laid out
    again at its full height."""

    def run(expression: str) -> Any:
        return browser.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session,
        )["result"].get("value")

    height = int(run("document.documentElement.scrollHeight"))
    for i in range(min(tiles, max(1, -(-height // browser.height)))):
        run(
            f"window.scrollTo(0, {i * browser.height}); "
            "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        shot = browser.send("Page.captureScreenshot", {"format": "png"}, session)
        out.with_name(f"{out.stem}-{width}-{i:02d}.png").write_bytes(base64.b64decode(shot["data"]))
    run("window.scrollTo(0, 0)")


def _console(events: list[dict[str, Any]], session: str) -> list[str]:
    found = []
    for e in events:
        if e.get("sessionId") != session:
            continue
        p = e.get("params", {})
        if e["method"] == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            found.append(
                "exception: " + str(d.get("exception", {}).get("description") or d.get("text"))
            )
        elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            found.append(
                "console.error: "
                + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", []))
            )
        elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            entry = p["entry"]
            found.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}")
    return found


def _check_page(
    report: Report,
    page: str,
    probe: dict[str, Any],
    root: Path,
    min_font_px: float,
    layout_only: bool = False,
) -> list[str]:
    """Record what ``probe`` found on ``page``; its links. ``layout_only``: another width
    of a page already checked, so only overflow and figure text size are checked."""
    if probe["pageOverflow"] > 1:
        report.fail(
            "overflow",
            page,
            f"the page scrolls sideways by {probe['pageOverflow']} px "
            f"({'; '.join(probe['wide']) or 'element not found'})",
        )
    report.counts["overflow"] += 1 + len(probe["tables"])
    for c in probe["code"]:
        if layout_only and c.get("scrolls"):  # a phone: 88-character lines scroll in their box
            report.notes["code blocks that scroll (narrow window)"] = (
                report.notes.get("code blocks that scroll (narrow window)", 0) + 1
            )
            continue
        report.fail("overflow", page, f"code cell overflows by {c['over']} px: {c['text']!r}")
    report.counts["overflow"] += len(probe["code"])
    for t in probe["tables"]:
        report.notes[f"tables that {t['state']}"] = (
            report.notes.get(f"tables that {t['state']}", 0) + 1
        )
        if t["state"] == "cut":
            report.fail(
                "overflow",
                page,
                f"table cut off at the column edge ({t['right']:.0f} px "
                f"> {t['column']:.0f} px): {t['label']!r}",
            )
        elif t["state"] != "fits" and t["state"] != "scrolls":
            report.fail(
                "overflow",
                page,
                f"table wider than the column scrolls in a box taller "
                f"than the window, so its scrollbar is out of sight: {t['label']!r}",
            )
    for text in probe["wrap"]:
        report.fail("overflow", page, f"long table text does not wrap: {text!r}")
    if layout_only:
        _check_fonts(report, page, probe, root, min_font_px)
        return []
    report.counts["stderr"] += 1 + len(probe["noise"])
    for text in probe["stderr"]:
        report.fail("stderr", page, f"stderr block: {text!r}")
    for text in probe["noise"]:
        for m in NOISE.finditer(text):
            line = text[max(0, m.start() - 40) : m.end() + 80].strip().replace("\n", " ")
            report.fail("stderr", page, f"log or warning line in an output: {line!r}")
    source = page.startswith("_modules/")  # the source as it is: its quotes are its own
    codes, text = ([], "") if source else (probe["codeText"], probe["text"])
    report.counts["quotes"] += 1 + len(codes)
    for code in codes:
        if TYPOGRAPHIC.search(code):
            report.fail("quotes", page, f"typographic quote in code: {code.strip()[:80]!r}")
    for m in QUOTED_CODE.finditer(text):
        around = text[max(0, m.start() - 40) : m.end() + 40].replace("\n", " ")
        report.fail("quotes", page, f"typographic quotes around code-like text: {around!r}")
    report.counts["paths"] += 1
    for m in LOCAL_PATH.finditer(probe["text"]):
        around = probe["text"][max(0, m.start() - 40) : m.end() + 60].replace("\n", " ")
        report.fail("paths", page, f"local path in the text: {around.strip()!r}")
    for img in probe["images"]:
        report.counts["images"] += 1
        if not img["ok"]:
            report.fail("images", page, f"image not loaded: {img['src']}")
    _check_fonts(report, page, probe, root, min_font_px)
    return list(probe["links"])


def _check_fonts(
    report: Report, page: str, probe: dict[str, Any], root: Path, min_font_px: float
) -> None:
    """The smallest text of each figure saved by hierret, at the size the page shows it."""
    for img in probe["images"]:
        if not img["ok"]:
            continue
        target = _local(img["src"], root)
        meta = png_text(target[0]) if target else {}
        if FONT_KEY in meta and DPI_KEY in meta and img["shown"] > 0:
            px = float(meta[FONT_KEY]) * float(meta[DPI_KEY]) / 72 * img["shown"] / img["natural"]
            report.counts["fonts"] += 1
            report.fonts.append(
                {
                    "page": page,
                    "image": Path(img["src"]).name,
                    "font_pt": float(meta[FONT_KEY]),
                    "shown_px": img["shown"],
                    "natural_px": img["natural"],
                    "min_font_px": round(px, 1),
                }
            )
            if px < min_font_px:
                report.fail(
                    "fonts",
                    page,
                    f"figure text {px:.1f} px < {min_font_px} px "
                    f"({meta[FONT_KEY]} pt at {meta[DPI_KEY]} dpi, {img['natural']} px "
                    f"shown at {img['shown']:.0f} px): {Path(img['src']).name}",
                )


def _load(browser: Browser, session: str, path: Path, width: int) -> list[dict[str, Any]]:
    """Open ``path`` in a window ``width`` CSS pixels wide; the events of its loading."""
    browser.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": browser.height, "deviceScaleFactor": 1, "mobile": False},
        session,
    )
    list(browser.events())
    browser.send("Page.navigate", {"url": path.as_uri()}, session)
    events = browser.wait_for("Page.loadEventFired", session)
    browser.send(
        "Runtime.evaluate",
        {"expression": "document.fonts.ready.then(() => 1)", "awaitPromise": True},
        session,
    )
    time.sleep(0.3)
    return events


def check_site(
    root: Path,
    chromium: str,
    *,
    widths: tuple[int, ...] = WIDTHS,
    min_font_px: float = 9.0,
    screenshots: Path | None = None,
    tiles: int = 6,
    pages: list[Path] | None = None,
    log: Any = None,
) -> Report:
    """Load every page of the built site ``root`` in Chromium and check it (see the module):
    every check at the first of ``widths``, overflow and figure text at the others."""
    root = root.resolve()
    report = Report()
    links: dict[str, list[str]] = {}
    ids: dict[Path, set[str]] = {}
    with Browser(chromium, width=widths[0]) as browser:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for method in ("Page.enable", "Runtime.enable", "Log.enable"):
            browser.send(method, session=session)
        for path in pages if pages is not None else site_pages(root):
            page = path.relative_to(root).as_posix()
            if log:
                log(f"[browser check] {page}")
            for n, width in enumerate(widths):
                events = _load(browser, session, path, width)
                if screenshots is not None:
                    screenshots.mkdir(parents=True, exist_ok=True)
                    name = page.removesuffix(".html").replace("/", "__")
                    _screenshot(browser, session, screenshots / f"{name}.png", tiles, width)
                value = browser.send(
                    "Runtime.evaluate",
                    {"expression": _PROBE % {"screen": SCREEN}, "returnByValue": True},
                    session,
                )
                probe = json.loads(value["result"]["value"])
                if n:  # the same page narrower: its layout only
                    _check_page(report, f"{page} at {width} px", probe, root, min_font_px, True)
                    continue
                explorer = json.loads(
                    browser.send(
                        "Runtime.evaluate",
                        {"expression": _EXPLORER, "returnByValue": True},
                        session,
                    )["result"]["value"]
                )
                if explorer is not None:
                    report.counts["explorer"] += len(explorer["checked"])
                    for problem in explorer["problems"]:
                        report.fail("explorer", page, problem)
                events += list(browser.events())
                report.pages.append(page)
                report.counts["console"] += 1
                for problem in _console(events, session):
                    report.fail("console", page, problem)
                links[page] = _check_page(report, page, probe, root, min_font_px)
                ids[path.resolve()] = set(probe["ids"])
    for page, hrefs in links.items():
        for href in hrefs:
            local = _local(href, root)
            if local is None:
                continue
            report.counts["links"] += 1
            file, fragment = local
            if not file.exists():
                report.fail("links", page, f"no such file: {file.relative_to(root)}")
                continue
            if fragment and file.suffix == ".html":
                known = ids.get(file.resolve())
                if known is None:
                    known = ids[file.resolve()] = _ids_in_file(file)
                if fragment not in known and not (
                    _STATE.match(fragment) and "hr-explorer" in known
                ):
                    report.fail(
                        "links", page, f"no #{fragment} in {file.relative_to(root).as_posix()}"
                    )
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("html", type=Path, help="the built site (sphinx-build's output folder)")
    ap.add_argument("--chromium", help="the browser (default: $CHROMIUM or chromium on PATH)")
    ap.add_argument(
        "--width",
        type=int,
        action="append",
        help=f"window width in CSS pixels; repeat for more (default: {WIDTHS}); every check "
        "runs at the first, overflow and figure text size at the others",
    )
    ap.add_argument(
        "--min-font-px",
        type=float,
        default=9.0,
        help="smallest figure text allowed, in CSS pixels as displayed",
    )
    ap.add_argument("--screenshots", type=Path, help="save screenshots of every page here")
    ap.add_argument("--tiles", type=int, default=6, help="screenshots per page (1600 px each)")
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        help="check only these pages (paths relative to the site)",
    )
    ap.add_argument("--json", type=Path, help="write the report as JSON")
    args = ap.parse_args(argv)
    chromium = find_chromium(args.chromium)
    if chromium is None:
        print(
            "browser check: no Chromium found (install Debian's `chromium`, or pass "
            "--chromium / set $CHROMIUM)",
            file=sys.stderr,
        )
        return 2
    if not (args.html / "index.html").is_file():
        ap.error(f"{args.html} holds no built site (no index.html)")
    pages = [args.html.resolve() / p for p in args.only] or None
    report = check_site(
        args.html,
        chromium,
        widths=tuple(args.width or WIDTHS),
        min_font_px=args.min_font_px,
        screenshots=args.screenshots,
        tiles=args.tiles,
        pages=pages,
        log=lambda m: print(m, file=sys.stderr, flush=True),
    )
    print(report.summary())
    if args.json:
        args.json.write_text(json.dumps(report.as_dict(), indent=1), encoding="utf-8")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
