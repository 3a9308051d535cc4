"""Fused search with rank-fused legs: the legs, the fusion before issue 26 and the candidates.

Builds corpora of short documents with many short labelled sections (see
``corpus_*`` below: how each question is made is said there), runs the
passage and the section legs of fused search once per ranker, fuses them
every candidate way, and prints nDCG@10 and hit@1 per corpus, target and arm.

Run from the repository root::

    HIERRET_DATA=/work/shared/datasets HIERRET_CACHE=<scratch> PYTHONHASHSEED=0 \
        PYTHONPATH=src python docs/fused_legs.py --encoder wordllama

Research script, not a test: it reads ``HIERRET_DATA``'s SciFact and Qasper files.

Arms (``w`` = ``--weight``, the section leg's weight): ``passage-leg`` and
``section-leg`` searched alone; ``fused-package`` what ``Profile(level="fused")``
gives in this checkout; ``minmax`` the package's fusion before issue 26
(passages lifted to the section holding most of each, min-max blend);
``*-overlap`` a passage lifted to every section it overlaps (the package's
fusion since), ``*-half`` only to sections sharing at least half of the
shorter span; ``rrf`` weighted reciprocal rank fusion of the two legs' final
rankings, ``borda`` linear rank scores, ``z`` z-scores (a missing unit takes
the leg's lowest).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from hierret import (
    Corpus,
    Document,
    Profile,
    Query,
    Searcher,
    build_hierarchy,
    cached_encoder,
    load,
)
from hierret.datasets import data_home
from hierret.evaluation import Ranking, evaluate, lift, mean_scores, qrels_from_evidence, rank
from hierret.search.rankers import minmax_fuse

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text.strip()) if s]


def corpus_scifact_split(per_section: int = 2) -> tuple[Corpus, list[Query], tuple[str, ...]]:
    """SciFact abstracts, each a short document cut into sections of ``per_section`` sentences.

    Every abstract of the corpus (5,183) becomes a document ``# title`` with
    sections ``## Part i``; the questions are SciFact's own claims (test and
    train splits, judged relevant abstracts: score > 0), judged at the
    document target only (BEIR judges abstracts).
    """
    root = data_home() / "scifact"
    docs = []
    for line in (root / "corpus.jsonl").read_text().splitlines():
        d = json.loads(line)
        sents = _sentences(d["text"])
        parts = [" ".join(sents[i : i + per_section]) for i in range(0, len(sents), per_section)]
        body = "".join(f"## Part {i + 1}\n\n{p}\n\n" for i, p in enumerate(parts))
        title = " ".join(d["title"].split()) or "Untitled"
        docs.append(Document(d["_id"], title, f"# {title}\n\n{body}"))
    corpus = Corpus("scifact-split", docs)
    ids = {d.id for d in docs}
    claims = {
        json.loads(x)["_id"]: json.loads(x)["text"]
        for x in (root / "queries.jsonl").read_text().splitlines()
    }
    judged: dict[str, list[str]] = {}
    for split in ("test", "train"):
        for row in (root / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]:
            qid, did, score = row.split("\t")
            if int(score) > 0 and did in ids:
                judged.setdefault(qid, []).append(did)
    queries = [
        Query(q, claims[q], tuple((d, 0, len(corpus[d].text)) for d in ds), level="documents")
        for q, ds in judged.items()
    ]
    return corpus, queries, ("documents",)


def corpus_qasper_ict(seed: int = 0) -> tuple[Corpus, list[Query], tuple[str, ...]]:
    """Qasper's 10-paper sample, one short document per paper section, one section a paragraph.

    Each Qasper section (e.g. "Experiments ::: Dataset") becomes a document
    ``# paper title: section name`` whose paragraphs are sections
    ``## Paragraph i``. Questions by the inverse cloze task (Lee, Chang and
    Toutanova, ACL 2019): from every paragraph of at least three sentences one
    sentence, drawn with ``random.Random(seed)``, is taken out of the text and
    becomes the question; the rest of that paragraph is its evidence (judged
    at the section and document targets).
    """
    papers = json.loads((data_home() / "qasper" / "qasper-train-sample10-v0.3.json").read_text())
    rng = random.Random(seed)
    docs, queries = [], []
    for pid, paper in papers.items():
        for si, sec in enumerate(paper["full_text"]):
            head = f"# {paper['title']}: {sec['section_name']}\n\n"
            text, spans, held = head, [], []
            for pi, para in enumerate(p for p in sec["paragraphs"] if p.strip()):
                sents = _sentences(para)
                out = rng.randrange(len(sents)) if len(sents) >= 3 else None
                kept = " ".join(s for i, s in enumerate(sents) if i != out)
                text += f"## Paragraph {pi + 1}\n\n"
                spans.append((len(text), len(text) + len(kept)))
                held.append(sents[out] if out is not None else None)
                text += kept + "\n\n"
            did = f"{pid}-{si}"
            docs.append(Document(did, f"{paper['title']}: {sec['section_name']}", text))
            queries += [
                Query(f"{did}-{i}", q, ((did, *spans[i]),), level="sections")
                for i, q in enumerate(held)
                if q is not None
            ]
    return Corpus("qasper-ict", docs), queries, ("sections", "documents")


def corpus_reference() -> tuple[Corpus, list[Query], tuple[str, ...]]:
    """DR-004's reference setting: the Python reference with its provisional gold questions."""
    b = load("python-reference")
    return b.corpus, list(b.queries), ("sections", "documents")


def corpus_scifact_sections() -> tuple[Corpus, list[Query], tuple[str, ...]]:
    """DR-004's SciFact sections (``load("scifact-sections")``, seed 0), all of it."""
    b = load("scifact-sections")
    return b.corpus, list(b.queries), ("sections", "documents")


CORPORA: dict[str, Callable[[], tuple[Corpus, list[Query], tuple[str, ...]]]] = {
    "scifact-split": corpus_scifact_split,
    "qasper-ict": corpus_qasper_ict,
    "python-reference": corpus_reference,
    "scifact-sections": corpus_scifact_sections,
}


# --- candidate fusions of the two legs (each: passages lifted, sections) -----------


def overlap_parents(hierarchy, share: float = 0.0) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """Each passage to every section whose own span it overlaps (by > share of the shorter)."""
    out: dict[str, list[str]] = {}
    secs: dict[str, list] = {}  # type: ignore[type-arg]
    for s in hierarchy.units("sections"):
        secs.setdefault(s.doc_id, []).append(s)
    for p in hierarchy.passages:
        hits = []
        for s in secs[p.doc_id]:
            o = min(p.end, s.end) - max(p.start, s.start)
            if o > 0 and o >= share * min(p.end - p.start, s.end - s.start):
                hits.append(s.id)
        out[p.id] = sorted(set(hits) | {p.parent})
    return out


def lift_multi(ranking: Ranking, parents: dict[str, list[str]]) -> Ranking:
    best: dict[str, float] = {}
    for u, sc in ranking:
        for p in parents[u]:
            if p not in best or sc > best[p]:
                best[p] = sc
    return rank(best)


def rrf_fuse(a: Ranking, b: Ranking, w: float, k: int = 60) -> Ranking:
    sc: dict[str, float] = {}
    for weight, r in ((1 - w, a), (w, b)):
        for i, (u, _) in enumerate(r, start=1):
            sc[u] = sc.get(u, 0.0) + weight / (k + i)
    return rank(sc)


def borda_fuse(a: Ranking, b: Ranking, w: float, pool: int) -> Ranking:
    sc: dict[str, float] = {}
    for weight, r in ((1 - w, a), (w, b)):
        for i, (u, _) in enumerate(r):
            sc[u] = sc.get(u, 0.0) + weight * (1 - i / pool)
    return rank(sc)


def z_fuse(a: Ranking, b: Ranking, w: float) -> Ranking:
    def z(r: Ranking) -> dict[str, float]:
        v = np.array([s for _, s in r])
        sd = v.std() or 1.0
        return {u: (s - v.mean()) / sd for u, s in r}

    za, zb = z(a), z(b)
    floor_a = min(za.values(), default=0.0)
    floor_b = min(zb.values(), default=0.0)
    return rank(
        {u: (1 - w) * za.get(u, floor_a) + w * zb.get(u, floor_b) for u in za.keys() | zb.keys()}
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--encoder", default="wordllama")
    ap.add_argument("--corpora", nargs="*", default=list(CORPORA))
    ap.add_argument("--pool", type=int, default=100)
    ap.add_argument("--weight", type=float, default=0.65)
    ap.add_argument("--max-queries", type=int, default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    enc = cached_encoder(args.encoder)
    w, pool = args.weight, args.pool
    rows = []
    for name in args.corpora:
        corpus, queries, targets = CORPORA[name]()
        queries = queries[: args.max_queries]
        styles = ("rst", "markdown", "numbered") if name == "python-reference" else ("markdown",)
        h = build_hierarchy(corpus, heading_styles=styles)
        s = Searcher(h, enc)
        units = [u for lv in ("documents", "sections", "passages") for u in h.units(lv)]
        qrels = {
            t: qrels_from_evidence(
                [q for q in queries if q.judged_at(t)], [u for u in units if u.level == t]
            )
            for t in targets
        }
        p2s = h.parents("passages", "sections")
        over = overlap_parents(h)
        half = overlap_parents(h, 0.5)
        n_straddle = sum(len(v) > 1 for v in over.values())
        print(
            f"{name}: {len(corpus)} docs, {len(h.units('sections'))} sections, "
            f"{len(h.passages)} passages ({n_straddle} straddle a heading), "
            f"{len(queries)} questions",
            flush=True,
        )
        to = {
            "sections": h.parents("sections", "sections"),
            "documents": h.parents("sections", "documents"),
        }
        ptd = {"sections": p2s, "documents": h.parents("passages", "documents")}
        for ranker in ("dense", "bm25", "hybrid"):
            P = s.run(queries, Profile(level="passages", ranker=ranker, pool=pool), k=pool)
            S = s.run(queries, Profile(level="sections", ranker=ranker, pool=pool), k=pool)
            F = s.run(
                queries, Profile(level="fused", ranker=ranker, pool=pool, section_weight=w), k=pool
            )
            lifted = lift(P, p2s)
            lifted_o = {q: lift_multi(r, over) for q, r in P.items()}
            lifted_h = {q: lift_multi(r, half) for q, r in P.items()}
            arms: dict[str, dict[str, Ranking]] = {
                "passage-leg": P,  # lifted straight to the target below
                "section-leg": S,
                "fused-package": F,  # this checkout's Profile(level="fused")
                "minmax": {q: minmax_fuse(lifted[q], S[q], w) for q in S},
                "minmax-overlap": {q: minmax_fuse(lifted_o[q], S[q], w) for q in S},
                "minmax-half": {q: minmax_fuse(lifted_h[q], S[q], w) for q in S},
                "rrf-half": {q: rrf_fuse(lifted_h[q], S[q], w) for q in S},
                "rrf": {q: rrf_fuse(lifted[q], S[q], w) for q in S},
                "rrf-overlap": {q: rrf_fuse(lifted_o[q], S[q], w) for q in S},
                "borda": {q: borda_fuse(lifted[q], S[q], w, pool) for q in S},
                "borda-overlap": {q: borda_fuse(lifted_o[q], S[q], w, pool) for q in S},
                "z": {q: z_fuse(lifted[q], S[q], w) for q in S},
                "z-overlap": {q: z_fuse(lifted_o[q], S[q], w) for q in S},
            }
            for arm, run in arms.items():
                for t in targets:
                    r = lift(P, ptd[t]) if arm == "passage-leg" else lift(run, to[t])
                    m = mean_scores(evaluate(r, qrels[t], ["ndcg@10", "hit@1"]))
                    rows.append(
                        {
                            "corpus": name,
                            "ranker": ranker,
                            "arm": arm,
                            "target": t,
                            "n": len(qrels[t]),
                            **m,
                        }
                    )
                    print(
                        f"  {ranker:6s} {arm:15s} {t:9s} nDCG@10 {m['ndcg@10']:.4f} "
                        f"hit@1 {m['hit@1']:.4f}",
                        flush=True,
                    )
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
