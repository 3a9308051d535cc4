"""Bad input in a user's own folder of documents (run by ``docs/bad_input.py``).

Each call writes a small folder (Markdown, text, a ``questions.jsonl``) into a
fresh temporary folder and loads it with :func:`hierret.datasets.load`, as
``hierret search --corpus <folder>`` does. A file the loader cannot read is a
clear error whose fix is right for that file (the command it names, run on
the file, gives the text back); what the loader reads must be the text a
reader sees.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import unicodedata
import warnings
from pathlib import Path

from bad_input_cases import Case, Facts, right
from hierret.datasets import load

_NOTES = (
    "# Logs\n\nThe service writes its logs to the var/log folder and keeps them for "
    "thirty days before they are removed.\n"
)
_QUESTION = {"question": "Where are the logs?", "relevant": ["logs"]}


def _folder(files: dict[str, bytes], questions: list[dict[str, object]] | None = None) -> Path:
    root = Path(tempfile.mkdtemp(), "notes")
    root.mkdir()
    for name, data in files.items():
        (root / name).write_bytes(data)
    if questions is not None:
        lines = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions)
        (root / "questions.jsonl").write_text(lines, encoding="utf-8")
    return root


def _encoded(text: str, encoding: str) -> Facts:
    """A document saved in ``encoding``: the loader must refuse it, and the command its
    message gives must turn the file into ``text`` (run here, as the user would)."""
    root = _folder({"logs.md": text.encode(encoding)}, [_QUESTION])
    try:
        load(str(root))
    except ValueError as err:
        message = str(err)
        found = re.search(r"(iconv -f (\S+) -t UTF-8 .+? && mv \S+ \S+)", message)
        fixed = ""
        if found:
            subprocess.run(found.group(1), shell=True, check=True, cwd=root)
            fixed = (root / "logs.md").read_bytes().decode("utf-8", "replace")
        named = found.group(2) if found else "(no iconv command)"
        return Facts(
            f"refused, naming {named}; the command it gives, run, "
            f"{'gives the text back' if fixed.removeprefix(chr(0xFEFF)) == text else 'garbles it'}",
            refused=err,
            right=fixed.removeprefix("\ufeff") == text,
        )
    docs = load(str(root)).corpus
    return Facts(f"loaded: {docs['logs'].text[:60]!r}", right=False)


def _forms(doc_form: str, quote_form: str, sentence: str) -> Facts:
    """A document in one Unicode form, a quote typed in another."""
    doc = "# Menu\n\n" + unicodedata.normalize(doc_form, sentence) + "\n"
    quote = unicodedata.normalize(quote_form, sentence)
    root = _folder(
        {"menu.md": doc.encode()},
        [{"question": "Until when?", "evidence": [quote]}],
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bundle = load(str(root))
    spans = [span for q in bundle.queries for span in q.evidence]
    found = [bundle.corpus[d].text[a:b] for d, a, b in spans]
    said = "; ".join(str(w.message).splitlines()[0] for w in caught)
    return Facts(
        f"{len(spans)} evidence span(s) located" + (f" (warning: {said})" if said else ""),
        found=found,
        sentence=unicodedata.normalize("NFC", sentence),
    )


_LOCATED = right(
    "the quote is located, once, and its span reads as the sentence",
    lambda f: f.found == [f.sentence],
)


def _loaded(name: str, data: str, stem: str) -> Facts:
    """Load a folder holding ``name``; what became of that document."""
    root = _folder({name: data.encode()}, [{"question": "What?", "relevant": [stem]}])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bundle = load(str(root))
    doc = bundle.corpus[stem]
    heads = sorted({s.path for s in _sections(bundle, stem)})
    said = "; ".join(str(w.message).splitlines()[-1][:120] for w in caught)
    return Facts(
        f"title {doc.title!r}; text starts {doc.text[:50]!r}; sections {heads}"
        + (f" (warning: {said})" if said else ""),
        title=doc.title,
        text=doc.text,
        heads=heads,
        warned=bool(caught),
    )


def _sections(bundle: object, stem: str) -> list[object]:
    from hierret.structure.hierarchy import build_hierarchy

    h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)  # type: ignore[attr-defined]
    return list(h.sections[stem])


_BODY = "The service keeps its logs for thirty days.\n\n## Rotation\n\nDaily.\n"
_FRONT = (
    right("the front matter's title names the document", lambda f: f.title == "Log policy"),
    right(
        "the block is not text: the text starts at the first line after it, no title: in it",
        lambda f: "title" not in f.text.lower() and f.text.startswith("The service"),
    ),
)
_PAGE = (
    "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Log policy</title>"
    "<style>.x{color:red}</style><script>track('<b>')</script></head>\n<body>"
    "<h1>Logs</h1><p>The service keeps its logs for thirty&nbsp;days.</p>"
    "<h2>Rotation</h2><p>Daily &amp; compressed.</p></body></html>\n"
)
_NO_TAGS = (
    right(
        "no tag, script or style in the text",
        lambda f: not any(t in f.text for t in ("<", "color:red", "track(")),
    ),
    right("its headings are sections", lambda f: ("Logs", "Rotation") in f.heads),
    right("the warning names the page as converted", lambda f: f.warned),
)


def _no_questions() -> Facts:
    """``hierret search`` on a folder of documents and no questions.jsonl."""
    import contextlib
    import io

    from hierret.cli import main

    root = _folder({"logs.md": _NOTES.encode(), "intro.md": b"# Intro\n\nWelcome aboard.\n"})
    out, err = io.StringIO(), io.StringIO()
    argv = ["search", "where are the logs kept?", "--corpus", str(root), "--encoder", "hash"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([*argv, "--cache-dir", tempfile.mkdtemp(), "--k", "1"])
    lines = out.getvalue().strip().splitlines()
    return Facts(
        f"exit status {status}; printed: {' | '.join(lines)[:200]}"
        + (f"; stderr: {err.getvalue().strip()[:160]}" if err.getvalue().strip() else ""),
        status=status,
        first=lines[1].split()[2] if len(lines) > 1 else None,
    )


_FIX_RIGHT = right(
    "the error names the encoding found, and its iconv command gives the text back",
    lambda f: f.right,
)

CASES: list[Case] = [
    (
        "hierret search on a folder of two Markdown documents and no questions.jsonl",
        _no_questions,
        right(
            "exit status 0 and hits: questions are needed to evaluate, not to search",
            lambda f: f.status == 0 and f.first is not None,
        ),
    ),
    (
        "a Markdown file starting with YAML front matter (title, date, tags)",
        lambda: _loaded(
            "policy.md",
            "---\ntitle: Log policy\ndate: 2024-05-01\ntags: [ops, logs]\n---\n" + _BODY,
            "policy",
        ),
        _FRONT,
    ),
    (
        "a Markdown file starting with Hugo's TOML front matter (+++), CRLF line ends",
        lambda: _loaded(
            "policy.md",
            ('+++\ntitle = "Log policy"\nweight = 3\n+++\n' + _BODY).replace("\n", "\r\n"),
            "policy",
        ),
        _FRONT,
    ),
    (
        "an XHTML page (XML declaration first) saved as policy.markdown",
        lambda: _loaded(
            "policy.markdown",
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            + _PAGE.replace(
                "<!DOCTYPE html>\n<html>", '<html xmlns="http://www.w3.org/1999/xhtml">'
            ),
            "policy",
        ),
        _NO_TAGS,
    ),
    (
        "an HTML page saved from a browser as policy.md",
        lambda: _loaded("policy.md", _PAGE, "policy"),
        _NO_TAGS,
    ),
    (
        "an HTML page exported as policy.txt, starting with a comment and <html lang>",
        lambda: _loaded(
            "policy.txt",
            "<!-- exported -->\n" + _PAGE.replace("<!DOCTYPE html>\n<html>", "<HTML lang='en'>"),
            "policy",
        ),
        _NO_TAGS,
    ),
    (
        "a document saved in NFD (macOS), its evidence quote typed in NFC",
        lambda: _forms(
            "NFD", "NFC", "Le café crème est servi à la brasserie jusqu'à minuit, même en été."
        ),
        _LOCATED,
    ),
    (
        "a document in NFC, its evidence quote pasted in NFD (Korean and Vietnamese)",
        lambda: _forms(
            "NFC", "NFD", "한국어 문서: Tiếng Việt có dấu, và những chữ cái được ghép lại với nhau."
        ),
        _LOCATED,
    ),
    (
        "a Markdown document saved as UTF-16 (with a byte-order mark)",
        lambda: _encoded(_NOTES.replace("thirty", "dreißig"), "utf-16"),
        _FIX_RIGHT,
    ),
    (
        "a Markdown document saved as UTF-16LE without a byte-order mark (valid UTF-8 bytes)",
        lambda: _encoded(_NOTES, "utf-16-le"),
        _FIX_RIGHT,
    ),
    (
        "a Markdown document saved in Windows-1251 (Cyrillic)",
        lambda: _encoded(
            "# Журналы\n\nСлужба пишет журналы в папку var/log и хранит их "
            "тридцать дней, затем удаляет.\n",
            "cp1251",
        ),
        _FIX_RIGHT,
    ),
    (
        "a Markdown document saved in Shift-JIS",
        lambda: _encoded(
            "# ログ\n\nサービスはログを var/log フォルダーに書き込み、"
            "三十日間保存してから削除します。\n",
            "shift_jis",
        ),
        _FIX_RIGHT,
    ),
]
