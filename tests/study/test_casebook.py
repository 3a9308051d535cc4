"""hierret.study.casebook: the discordant questions of every declared comparison, their pages."""

from __future__ import annotations

import html
import json
import re
from functools import cache
from pathlib import Path

import pytest
from _toy import reference_slice

from hierret.encoders import HashEncoder
from hierret.evaluation.stats import StatsSettings
from hierret.search.profile import Profile
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import build_hierarchy
from hierret.structure.units import Query
from hierret.study import casebook, experiment

ARMS = {
    "passages": Profile(),
    "sections": Profile(level="sections"),
    "bm25": Profile(ranker="bm25"),
}
PAIRS = [("sections", "passages"), ("bm25", "passages")]


@cache
def _setup() -> tuple[Searcher, tuple[Query, ...]]:
    corpus, queries = reference_slice(40, 6)
    return Searcher(build_hierarchy(corpus), HashEncoder(dimension=64, window=48)), queries


@cache
def _result(metric: str = "hit@1") -> experiment.Result:
    s, queries = _setup()
    return experiment.run(
        ARMS,
        list(queries),
        searcher=s,
        targets=["sections", "documents"],
        metrics=[metric],
        baseline="passages",
        family=PAIRS,
        stats=StatsSettings(n_resamples=200),
    )


def test_counts_are_mcnemars_counts_of_the_hit_table() -> None:
    """Independent reference: compare_hits' paired counts
    (hierret.evaluation.stats.paired_proportions)."""
    book = casebook.build("dr9", {"pyref": _result()})
    assert len(book.comparisons) == 4  # two pairs at two targets
    for c in book.comparisons:
        row = _result().table(c.target, "hit@1").loc[c.a]
        assert (c.both, c.only_a, c.only_b, c.neither) == (
            row["both"],
            row["only_arm"],
            row["only_base"],
            row["neither"],
        )
    assert any(c.only_a + c.only_b > 0 for c in book.comparisons)  # the test can fail


def test_counts_do_not_need_a_hit_metric() -> None:
    by_ndcg = casebook.build("dr9", {"pyref": _result("ndcg@10")})
    by_hit = casebook.build("dr9", {"pyref": _result()})
    assert by_ndcg.values() == by_hit.values()


def test_cases_are_the_discordant_questions_with_their_ranks() -> None:
    r = _result()
    for c in casebook.build("dr9", {"pyref": r}, max_cases=100).comparisons:
        hits = r.scores[c.target]["hit@1"]
        assert [x.query_id for x in c.cases_a] == sorted(
            q for q in hits[c.a] if hits[c.a][q] == 1 and hits[c.b][q] == 0
        )
        assert [x.query_id for x in c.cases_b] == sorted(
            q for q in hits[c.a] if hits[c.a][q] == 0 and hits[c.b][q] == 1
        )
        for case in c.cases_a:
            assert case.first[c.a] == 1
            assert case.first[c.b] != 1
            assert case.hits[c.a][0].relevant
            assert not case.hits[c.b][0].relevant
            assert case.question == r.queries[case.query_id].text


def test_the_sample_shown_is_seeded_stable_and_counts_stay_whole() -> None:
    c = max(
        casebook.build("dr9", {"pyref": _result()}, max_cases=100).comparisons,
        key=lambda x: x.only_a,
    )
    assert c.only_a >= 3
    pick = [casebook.build("dr9", {"pyref": _result()}, max_cases=2, seed=s) for s in (0, 0, 1)]
    shown = [[x.query_id for x in b.comparisons[0].cases_a] for b in pick]
    assert shown[0] == shown[1]
    same = next(b for b in pick[0].comparisons if (b.target, b.a) == (c.target, c.a))
    ids = [x.query_id for x in same.cases_a]
    assert len(ids) == 2
    assert ids == sorted(ids)
    assert set(ids) <= {x.query_id for x in c.cases_a}
    assert same.only_a == c.only_a


def test_snippets_mark_the_evidence_and_escape_the_text() -> None:
    r = _result()
    book = casebook.build("dr9", {"pyref": r}, max_cases=100)
    case = next(x for c in book.comparisons if c.target == "sections" for x in c.cases_a)
    query = r.queries[case.query_id]
    evidence = " ".join(r.hierarchies["passages"].corpus[d].text[s:e] for d, s, e in query.evidence)
    top = next(h for hits in case.hits.values() for h in hits if h.relevant)
    marked = re.findall(r"<mark>(.*?)</mark>", top.snippet, re.S)
    assert marked, top.snippet
    import html

    assert all(" ".join(html.unescape(m).split()) in " ".join(evidence.split()) for m in marked)
    assert case.evidence
    assert "<mark>" in case.evidence[0][1]
    assert "<script" not in casebook._marked("<script>x</script>", 0, [(0, 3)], 100)


def test_the_page_is_one_html_block_per_comparison(tmp_path: Path) -> None:
    values = casebook.write("dr9", tmp_path, {"pyref": _result()})
    page = (tmp_path / "casebook-dr9.md").read_text(encoding="utf-8")
    assert page.startswith("# Casebook DR-9")
    assert re.search(r"^## pyref: \S+ against \S+", page, re.MULTILINE)  # words, not a key
    blocks = [b for b in page.split("\n\n") if b.startswith("<div")]
    assert len(blocks) == 4
    assert all(b.count('<div class="hr-comparison"') == 1 for b in blocks)
    assert all(f">{v}<" in page for v in values.values())
    book = casebook.build("dr9", {"pyref": _result()}, max_cases=1)
    for c in book.comparisons:  # what the label says is what is shown
        for arm, n, cases in ((c.a, c.only_a, c.cases_a), (c.b, c.only_b, c.cases_b)):
            label = (
                "none"
                if n == 0
                else f"all {n}"
                if n == len(cases)
                else f"{len(cases)} of {n} shown"
            )
            assert f"Only {arm} answers first ({label})" in book.markdown()
    assert casebook.write("dr9", None, {"pyref": _result()}) == values


def test_each_question_links_to_itself_in_the_explorer(tmp_path: Path) -> None:
    """Its record, result, target, the two arms and its id, in the explorer's hash."""
    from urllib.parse import parse_qs, urlsplit

    book = casebook.build("dr9", {"pyref": _result()}, max_cases=100)
    page = book.markdown()
    c = next(c for c in book.comparisons if c.cases_a)
    link = casebook.explorer_link("dr9", c.title, c.target, (c.a, c.b), c.cases_a[0].query_id)
    assert f'<a href="{html.escape(link)}"' in page
    parts = urlsplit(link)
    assert parts.path == "../../explorer.html"
    state = {k: v[0] for k, v in parse_qs(parts.fragment).items()}
    assert state == {
        "r": "dr9",
        "t": c.title,
        "g": c.target,
        "a": f"{c.a},{c.b}",
        "q": c.cases_a[0].query_id,
    }
    assert page.count("explorer.html#") == sum(
        len(x.cases_a) + len(x.cases_b) for x in book.comparisons
    )


def test_the_explorer_holds_every_question_under_every_arm(tmp_path: Path) -> None:
    r = _result()
    casebook.write("dr9", tmp_path, {"pyref": r})
    casebook.write("dr8", tmp_path, {"pyref": r})
    script = casebook.explorer_script(tmp_path)
    prefix = f"window.{casebook.EXPLORER_GLOBAL} = "
    assert script.startswith(prefix)
    assert "</script" not in script
    data = json.loads(script[len(prefix) :].rstrip().rstrip(";"))
    assert [rec["record"] for rec in data["records"]] == ["dr8", "dr9"]
    sets = data["records"][1]["sets"]
    assert [s["target"] for s in sets] == ["sections", "documents"]
    for s in sets:
        assert {q["id"] for q in s["questions"]} == set(r.scores[s["target"]]["hit@1"]["bm25"])
        for by_arm in s["rows"].values():
            assert set(by_arm) == set(ARMS)
            for row in by_arm.values():
                assert row["metrics"]["hit@1"] == float(row["first"] == 1)
                assert all(h[0] in s["units"] for h in row["hits"])


def test_bad_input_is_refused_with_the_fix() -> None:
    hand = experiment.Result(
        {}, {"sections": {"mrr": {"a": {"q": 1.0}}}}, "a", [], ["sections"], ["mrr"]
    )
    with pytest.raises(ValueError, match="keeps no rankings"):
        casebook.build("dr9", {"hand": hand})
    with pytest.raises(ValueError, match="unknown arms"):
        casebook.build("dr9", {"pyref": (_result(), [("bm25", "nope")])})


def test_results_nest_and_pairs_apply_where_their_arms_are() -> None:
    r, ndcg = _result(), _result("ndcg@10")
    book = casebook.build(
        "dr9",
        {("pyref", 900): (r, ndcg), "skipped": None, "own": (r, [("bm25", "sections")])},
        pairs=[("bm25", "passages")],
    )
    assert [(c.title, c.a, c.b) for c in book.comparisons if c.target == "sections"] == [
        ("pyref · 900", "bm25", "passages"),
        ("pyref · 900", "bm25", "passages"),
        ("own", "bm25", "sections"),
    ]
    assert [s["title"] for s in book.sets][:2] == ["pyref · 900"] * 2
    with pytest.raises(ValueError, match="no result has together"):
        casebook.build("dr9", {"pyref": r}, pairs=[("bm25", "nope")])
    with pytest.raises(TypeError, match="give a Result"):
        casebook.build("dr9", {"pyref": {"deep": 3}})


def test_section_paths_name_the_document_once() -> None:
    h = _setup()[0].hierarchy
    units = casebook._Units()
    section = next(
        u for u in h.units("sections") if u.title.split(" > ")[0] == h.corpus[u.doc_id].title
    )
    doc = h.corpus[section.doc_id].title
    assert units.path(h, section.id, "sections").count(doc) == 1
    nested = next(u for u in h.units("sections") if " > " in u.title)
    parts = units.path(h, nested.id, "sections").split(" › ")
    assert parts[-1] == nested.title.split(" > ")[-1]
    assert len(parts) >= 2
    assert units.path(h, section.doc_id, "documents") == doc


def test_an_arm_scored_outside_the_searcher_is_left_out_of_the_explorer(
    tmp_path: Path,
) -> None:
    """Result.add arms (auto-merging, a router) have scores but no rankings to show."""
    r = _result()
    r.add("routed", {t: r.scores[t]["hit@1"]["passages"] for t in r.targets})
    casebook.write("dr9", tmp_path, {"pyref": r}, pairs=PAIRS)
    data = json.loads(casebook.explorer_script(tmp_path).split(" = ", 1)[1].rstrip().rstrip(";"))
    for s in data["records"][0]["sets"]:
        for by_arm in s["rows"].values():
            assert set(by_arm) == set(ARMS)  # "routed" is not shown, and nothing fails
