"""Notebook parameters are checked: unknown names, wrong types and unknown choices fail early.

The references are independent of :mod:`hierret.study.params`: papermill's own
reading of each notebook's parameters cell, the corpus and encoder names the
loaders and the registry hold, and real papermill runs of a small notebook.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hierret
from hierret.datasets import load, source_names
from hierret.datasets.beir import BEIR_DOWNLOADS
from hierret.encoders import registered_encoders
from hierret.encoders.base import HashEncoder
from hierret.study import PRESETS
from hierret.study.params import (
    BEIR,
    CORPUS,
    ENCODER,
    SIZES,
    SMOKE_ENV,
    UNEVALUATED,
    Choices,
    ParameterError,
    check_notebook,
    check_parameters,
    declared_parameters,
    notebook_parameters,
)

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
DECLARED = {
    "max_chars": 900,
    "section_weight": 0.65,
    "smoke": False,
    "sizes": [600, 900],
    "corpora": ["scifact"],
    "min_score": {"maxsim": 0.55},
    "max_docs": None,
    "encoder": "minilm",
}


def _error(given: dict[str, object], **kw: object) -> str:
    with pytest.raises(ParameterError) as info:
        check_parameters(given, DECLARED, **kw)  # type: ignore[arg-type]
    return str(info.value)


# --- names -------------------------------------------------------------------------------------


def test_unknown_name_is_named_with_a_suggestion_and_the_parameters() -> None:
    message = _error({"max_chrs": 600})
    assert message.startswith("unknown parameter 'max_chrs' (did you mean 'max_chars'?)")
    assert message.endswith("parameters of this notebook: " + ", ".join(DECLARED))


def test_unknown_name_without_a_close_one_gets_no_suggestion() -> None:
    message = _error({"zzz": 1}, where="04_dr003_reranking")
    assert "did you mean" not in message
    assert "parameters of 04_dr003_reranking: max_chars" in message


def test_declared_names_with_good_values_pass() -> None:
    check_parameters(
        {
            "max_chars": 600,
            "section_weight": 0.5,
            "smoke": True,
            "sizes": [300],
            "corpora": [],
            "min_score": {"e5": 1},
        },
        DECLARED,
    )
    check_parameters({}, DECLARED)


# --- types -------------------------------------------------------------------------------------


def test_wrong_type_names_the_parameter_the_value_and_the_type() -> None:
    assert _error({"section_weight": "abc"}) == (
        "section_weight must be a float (an int will do), got 'abc' (str); the default is 0.65"
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("section_weight", 1),
        ("section_weight", 0.5),
        ("max_chars", 600),
        ("smoke", True),
        ("sizes", [600, 1200]),
        ("sizes", (600,)),
        ("min_score", {"e5-rescore": 1}),
        ("max_docs", 12),
        ("max_docs", "anything"),  # a None default takes anything
    ],
)
def test_values_of_the_declared_type_pass(name: str, value: object) -> None:
    check_parameters({name: value}, DECLARED)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("max_chars", 600.0, "an int"),
        ("max_chars", True, "an int"),  # a bool is not a count
        ("max_chars", "600", "an int"),
        ("section_weight", False, "a float (an int will do)"),
        ("smoke", 1, "a bool (True or False)"),
        ("smoke", "False", "a bool (True or False)"),
        ("sizes", 600, "a list of int"),
        ("sizes", [600, "900"], "a list of int"),
        ("sizes", [600.5], "a list of int"),
        ("corpora", "scifact", "a list of str"),
        ("min_score", {"maxsim": "high"}, "a dict of float"),
        ("encoder", 3, "a str"),
    ],
)
def test_values_of_another_type_fail(name: str, value: object, expected: str) -> None:
    message = _error({name: value})
    assert message.startswith(f"{name} must be {expected}, got {value!r}")


def test_a_list_given_as_a_string_says_how_to_give_a_list() -> None:
    message = _error({"corpora": "scifact"}, list_hint=" (use -y '{name}: [...]')")
    assert message.endswith("(use -y 'corpora: [...]')")


def test_a_default_that_is_not_a_literal_is_not_type_checked() -> None:
    check_parameters({"seed": "x"}, {"seed": UNEVALUATED})


def test_every_problem_is_reported_at_once() -> None:
    message = _error({"max_chrs": 600, "smoke": 1})
    assert message.splitlines()[0] == "2 parameter problems:"
    assert [line[:12] for line in message.splitlines()[1:]] == ["- unknown pa", "- smoke must"]


# --- choices -----------------------------------------------------------------------------------


def test_an_unknown_corpus_in_a_list_is_named_with_its_position_and_the_choices() -> None:
    message = _error({"corpora": ["scifact", "scifcat"]}, choices={"corpora": CORPUS})
    assert message.startswith("corpora[1] = 'scifcat' is not accepted (did you mean 'scifact'?)")
    assert "python-reference, qasper, scifact" in message


def test_an_unknown_encoder_is_named_with_the_registry_and_what_else_loads() -> None:
    message = _error({"encoder": "e5-smal"}, choices={"encoder": ENCODER})
    assert "encoder = 'e5-smal' is not accepted (did you mean 'e5-small'?)" in message
    assert ", ".join(registered_encoders()) in message
    assert message.endswith("or a sentence-transformers folder or hub id 'org/model'")


def test_corpus_choices_are_what_the_loader_takes(tmp_path: Path) -> None:
    for name in ["python-reference", "qasper", *BEIR_DOWNLOADS]:
        assert CORPUS.accepts(name)
    assert CORPUS.accepts("scifact-sections")
    assert CORPUS.accepts(str(tmp_path))  # a path: the loader decides what it holds
    for refused in ["SciFact", "scifcat", str(tmp_path / "absent")]:
        assert not CORPUS.accepts(refused)
        with pytest.raises(ValueError, match="is neither a corpus name"):
            load(refused)
    assert BEIR.accepts("scifact")
    assert not BEIR.accepts("qasper")
    assert not BEIR.accepts(None)
    assert BEIR.or_none().accepts(None)


def test_encoder_choices_follow_the_registry(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in registered_encoders():
        assert ENCODER.accepts(name)
        assert ENCODER.accepts(f" {name.upper()}")
    assert ENCODER.accepts("all-MiniLM-L6-v2")  # the notebooks' spelling, as load_encoder takes it
    assert ENCODER.accepts("intfloat/e5-base")
    assert ENCODER.accepts(str(tmp_path))
    assert not ENCODER.accepts("my-encoder")
    monkeypatch.setitem(hierret.encoders.registry._REGISTRY, "my-encoder", HashEncoder)
    assert ENCODER.accepts("my-encoder")  # read when checked, not at import


def test_a_value_listed_among_the_choices_passes_whatever_its_type() -> None:
    check_parameters({"encoder": None}, DECLARED, choices={"encoder": [None, "minilm"]})
    message = _error({"encoder": "e5"}, choices={"encoder": [None, "minilm"]})
    assert message == "encoder = 'e5' is not accepted; accepted: None, minilm"


def test_choices_for_a_name_not_declared_are_a_mistake_of_the_caller() -> None:
    with pytest.raises(ValueError, match="choices are given for 'corpus', which this notebook"):
        check_parameters({}, DECLARED, choices={"corpus": CORPUS})


def test_choices_object_suggests_case_blind() -> None:
    pick = Choices(lambda: ["bm25", "dense"], fold_case=True)
    assert pick.accepts(" Dense ")
    assert not pick.accepts(["dense"])
    assert pick.problem("ranker", "DENS") == (
        "ranker = 'DENS' is not accepted (did you mean 'dense'?); accepted: bm25, dense"
    )


# --- the parameters cell, read as papermill reads it -------------------------------------------


def test_declared_parameters_reads_assignments_only() -> None:
    source = "import os\nk = 10  # depth\nnames: list[str] = ['a']\nseed = int('0')\nprint(k)\n"
    assert declared_parameters(source) == {"k": 10, "names": ["a"], "seed": UNEVALUATED}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_parameters_agree_with_papermill(path: Path) -> None:
    pm = pytest.importorskip("papermill")
    reference = pm.inspect_notebook(str(path))
    declared = notebook_parameters(path)
    assert list(declared) == list(reference)
    assert declared == {name: ast.literal_eval(p["default"]) for name, p in reference.items()}


def _cells(path: Path) -> tuple[str, str]:
    """The sources of the parameters cell and of the cell after it."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    at = next(i for i, c in enumerate(cells) if "parameters" in c["metadata"].get("tags", []))
    return "".join(cells[at]["source"]), "".join(cells[at + 1]["source"])


def _run(cells: list[str]) -> dict[str, object]:
    """Run ``cells`` in one namespace with IPython's input history, as a kernel would."""
    ns: dict[str, object] = {"In": [""]}
    for source in cells:
        ns["In"].append(source)  # type: ignore[attr-defined]
        exec(compile(source, "<cell>", "exec"), ns)
    return ns


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_checks_its_parameters_right_after_declaring_them(path: Path) -> None:
    params, check = _cells(path)
    # directly, or through the notebook's Lesson (hierret.study.lesson: the same check)
    assert "check_notebook(globals()" in check or "Lesson.begin(globals()" in check
    _run([params, check])  # the defaults pass
    every = {**notebook_parameters(path), "size": "smoke", "figures_dir": "figures"}
    _run([params, "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in every.items()), check])
    with pytest.raises(ParameterError, match="unknown parameter 'max_chrs'"):
        _run([params, "# Parameters\nmax_chrs = 600\n", check])
    with pytest.raises(ParameterError, match=r"^size must be a str, got True"):
        _run([params, "# Parameters\nsize = True\n", check])
    with pytest.raises(ParameterError, match=r"^size = 'large' is not accepted; accepted: 'smo"):
        _run([params, "# Parameters\nsize = 'large'\n", check])


@pytest.mark.parametrize(
    ("stem", "injected", "error"),
    [
        (
            "03_dr002_embedders",
            "corpora = ['scifact', 'sciface']",
            r"^corpora\[1\] = 'sciface' is not accepted \(did you mean 'scifact'\?\)",
        ),
        ("03_dr002_embedders", "baseline = 'minilm-int9'", r"^baseline = 'minilm-int9' is not"),
        ("05_dr004_hierarchy", "section_weight = 'abc'", r"^section_weight must be a float"),
        ("05_dr004_hierarchy", "encoder = 'e5smal'", r"did you mean 'e5-small'"),
        ("04_dr003_reranking", "corpora = 'scifact'", r"give a list or dict with -y 'corpora: \["),
        ("06_dr005_beyond", "overlap_tokens = 6.5", r"^overlap_tokens must be an int"),
        ("06_dr005_beyond", "thresholds = 0.5", r"^thresholds must be a list of float"),
    ],
)
def test_notebook_checks_refuse_bad_values(stem: str, injected: str, error: str) -> None:
    params, check = _cells(ROOT / "notebooks" / f"{stem}.ipynb")
    with pytest.raises(ParameterError, match=error):
        _run([params, f"# Parameters\n{injected}\n", check])


def test_without_injected_parameters_only_the_choices_are_checked() -> None:
    params, check = _cells(ROOT / "notebooks" / "05_dr004_hierarchy.ipynb")
    _run([params, "figures_dir = 3", check])  # not injected: not a parameter check
    with pytest.raises(ParameterError, match="'qasperr' is not accepted"):
        _run([params, "corpora = ['qasperr']", check])


def test_check_notebook_outside_a_kernel_says_how_to_call_it() -> None:
    with pytest.raises(ValueError, match=r"call it in a notebook cell as check_notebook\(glob"):
        check_notebook({"k": 1})


def test_check_notebook_refuses_choices_for_a_variable_it_lacks() -> None:
    with pytest.raises(ValueError, match="the notebook has no variable 'corpra'"):
        _run(
            [
                "corpora = ['scifact']",
                "from hierret.study.params import CORPUS, check_notebook\n"
                "check_notebook(globals(), corpra=CORPUS)",
            ]
        )


# --- end to end: papermill and docs/execute.py -------------------------------------------------


@pytest.fixture
def kernel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernels import the hierret under test."""
    src = str(Path(hierret.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))


def _small_notebook(path: Path) -> Path:
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A small notebook"),
        nbformat.v4.new_code_cell(
            "max_chars = 900\nsection_weight = 0.65\ncorpora = ['python-reference']",
            metadata={"tags": ["parameters"]},
        ),
        nbformat.v4.new_code_cell(
            "from hierret.study.params import CORPUS, check_notebook\n"
            "check_notebook(globals(), corpora=CORPUS)"
        ),
        nbformat.v4.new_code_cell("print('ran with', max_chars, section_weight, corpora)"),
    ]
    nbformat.write(nb, path)
    return path


@pytest.mark.usefixtures("kernel_env")
def test_papermill_with_bad_parameters_fails_in_the_check_cell(tmp_path: Path) -> None:
    pm = pytest.importorskip("papermill")
    source, out = _small_notebook(tmp_path / "small.ipynb"), tmp_path / "out.ipynb"
    with pytest.raises(pm.PapermillExecutionError) as info:
        pm.execute_notebook(
            str(source),
            str(out),
            kernel_name="python3",
            progress_bar=False,
            parameters={"max_chrs": 600, "section_weight": "abc", "corpora": ["scifcat"]},
        )
    assert info.value.ename == "ParameterError"
    assert info.value.evalue.splitlines() == [
        "3 parameter problems:",
        "- unknown parameter 'max_chrs' (did you mean 'max_chars'?); "
        "parameters of this notebook: max_chars, section_weight, corpora",
        "- section_weight must be a float (an int will do), got 'abc' (str); the default is 0.65",
        "- corpora[0] = 'scifcat' is not accepted (did you mean 'scifact'?); accepted: "
        + ", ".join(source_names())
        + ", or a BEIR folder, a Qasper JSON file, or a folder of Markdown/RST/text "
        "documents with questions.jsonl",
    ]
    cells = json.loads(out.read_text(encoding="utf-8"))["cells"]
    assert [c["execution_count"] for c in cells if c["cell_type"] == "code"] == [1, 2, 3, None]


@pytest.mark.usefixtures("kernel_env")
def test_papermill_with_good_parameters_runs_through(tmp_path: Path) -> None:
    pm = pytest.importorskip("papermill")
    source, out = _small_notebook(tmp_path / "small.ipynb"), tmp_path / "out.ipynb"
    pm.execute_notebook(
        str(source),
        str(out),
        kernel_name="python3",
        progress_bar=False,
        parameters={"max_chars": 600, "section_weight": 1, "corpora": ["scifact", "qasper"]},
    )
    last = json.loads(out.read_text(encoding="utf-8"))["cells"][-1]
    assert "".join(last["outputs"][0]["text"]) == "ran with 600 1 ['scifact', 'qasper']\n"


@pytest.fixture(scope="module")
def execute() -> Callable[[list[str]], int]:
    pytest.importorskip("papermill")
    spec = importlib.util.spec_from_file_location("execute", ROOT / "docs" / "execute.py")
    assert spec is not None
    assert spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--only", "nosuch"],
            "--only 'nosuch': no such notebook; the notebooks are: "
            + ", ".join(p.stem for p in NOTEBOOKS),
        ),
        (["--only", "01_structur"], "no such notebook (did you mean '01_structure'?)"),
        (["-p", "max_chrs", "600"], "unknown parameter 'max_chrs' (did you mean 'max_chars'?)"),
        (
            ["--only", "05_dr004_hierarchy", "-p", "section_weight", "abc"],
            "section_weight must be a float (an int will do), got 'abc' (str)",
        ),
        (
            ["--only", "01_structure", "-p", "section_weight", "0.5"],  # DR-004's, not this one's
            "unknown parameter 'section_weight'; parameters of 01_structure: max_chars",
        ),
        (["-p", "corpora", "scifact"], """as a Python literal: -p corpora "['a', 'b']\""""),
    ],
)
def test_execute_refuses_before_running_anything(
    execute: Callable[[list[str]], int],
    argv: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "site"
    with pytest.raises(SystemExit) as info:
        execute(["--out", str(out), *argv])
    assert info.value.code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()  # nothing was executed, not even the folder made


def test_a_real_notebooks_own_check_runs_before_any_kernel(
    execute: Callable[[list[str]], int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """execute.py runs the notebook's check cell itself: choices and rules, named, up front."""
    argv = ["--out", str(tmp_path / "site"), "--only", "05_dr004_hierarchy"]
    with pytest.raises(SystemExit):
        execute([*argv, "-p", "corpora", "['python-reference', 'qasperr']"])
    err = capsys.readouterr().err
    assert "05_dr004_hierarchy: corpora[1] = 'qasperr' is not accepted (did you mean" in err
    with pytest.raises(SystemExit):
        execute([*argv, "-p", "section_weight", "1.5"])
    assert "section_weight = 1.5 is not accepted; accepted: a number in [0, 1]" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "site").exists()


def _module(name: str) -> ModuleType:
    """A script of docs/ loaded as a module."""
    spec = importlib.util.spec_from_file_location(f"docs_{name}", ROOT / "docs" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: One change per parameter that every notebook declaring it must accept, and one it must
#: refuse up front (before any kernel starts) naming the parameter: the matrix that
#: ``docs/variations.py`` also executes (``nox -s variations``).
VARIATIONS: dict[str, tuple[object, object]] = _module("variations").VARIATIONS
#: Parameters tied to another (a ``document`` of the ``corpus``): changed along with it.
COMPANIONS: dict[str, dict[str, object]] = _module("variations").COMPANIONS
GOOD_FOR: dict[str, dict[str, object]] = _module("variations").GOOD_FOR


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_one_change_variations_are_accepted_or_refused_up_front(path: Path) -> None:
    """The variation matrix of the parameter check: every declared parameter that has a
    meaning in the house vocabulary, changed alone, is accepted, or refused naming it."""
    module = _module("execute")
    declared = notebook_parameters(path)
    module._check_as_notebook(path, {})  # the defaults pass
    tried = 0
    for name, (good, bad) in VARIATIONS.items():
        if name not in declared:
            continue
        default = declared[name]
        if isinstance(default, dict) and not isinstance(good, dict):  # a value per corpus
            keys = default or declared.get("corpora") or ["python-reference"]  # {}: none named
            good, bad = (dict.fromkeys(keys, v) for v in (good, bad))
        good = GOOD_FOR.get(path.stem, {}).get(name, good)
        tied = {k: v for k, v in COMPANIONS.get(name, {}).items() if k in declared}
        module._check_as_notebook(path, {name: good, **tied})
        with pytest.raises(ParameterError, match=rf"(?s)^{path.stem}: .*\b{name}\b"):
            module._check_as_notebook(path, {name: bad})
        tried += 1
    assert tried >= 5, f"{path.stem}: only {tried} parameters varied"


def test_dr001_refuses_a_corpus_judged_at_documents_only_before_any_kernel() -> None:
    """DR-001 compares passages and sections: BEIR's whole-document judgments cannot say."""
    module = _module("execute")
    path = ROOT / "notebooks" / "02_dr001_chunking.ipynb"
    with pytest.raises(ParameterError, match=r"corpus = 'scifact' .*judged at documents only"):
        module._check_as_notebook(path, {"corpus": "scifact"})
    module._check_as_notebook(path, {"corpus": "scifact-sections"})  # sections built from it


def test_a_document_must_be_one_of_the_corpus_as_sampled() -> None:
    module = _module("execute")
    path = ROOT / "notebooks" / "01_structure.ipynb"
    with pytest.raises(ParameterError, match=r"document = 'nope' .*'python-reference'"):
        module._check_as_notebook(path, {"document": "nope"})
    module._check_as_notebook(path, {"document": None})  # the longest
    module._check_as_notebook(path, {"document": "compound"})


def _plain_paths(value: object) -> object:
    if isinstance(value, list):
        return [_plain_paths(v) for v in value]
    return str(value) if isinstance(value, Path) else value


def test_the_site_examples_pass_their_notebooks_checks() -> None:
    """The example-folder runs of the site (docs/execute.py EXAMPLES) are valid runs."""
    module = _module("execute")
    assert module.EXAMPLES, "the site shows the studies on the example folder"
    for name, (stem, params, title) in module.EXAMPLES.items():
        assert name.startswith("own-")
        assert title
        given = {k: _plain_paths(v) for k, v in params.items()}
        module._check_as_notebook(ROOT / "notebooks" / f"{stem}.ipynb", given)


def test_an_example_run_gets_its_own_title_and_relative_paths(tmp_path: Path) -> None:
    module = _module("execute")
    path = tmp_path / "own.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# DR-001 · Chunking\n\nText.")]
    nbformat.write(notebook, str(path))
    module._retitle(path, "DR-001 on the example folder", "02_dr001_chunking")
    cells = nbformat.read(str(path), as_version=4).cells
    assert cells[0].source.startswith("# DR-001 on the example folder\n")
    assert "notebooks/02_dr001_chunking.ipynb" in cells[0].source
    assert cells[1].source.startswith("## DR-001 · Chunking")
    out = tmp_path / "site" / "notebooks"
    out.mkdir(parents=True)
    assert module._relative([tmp_path / "data"], out) == ["../../data"]


def test_late_chunking_and_maxsim_refuse_an_encoder_without_token_vectors() -> None:
    module = _module("execute")
    path = ROOT / "notebooks" / "06_dr005_beyond.ipynb"
    with pytest.raises(ParameterError, match=r"encoder = 'wordllama' .*token vectors"):
        module._check_as_notebook(path, {"encoder": "wordllama"})
    dr003 = ROOT / "notebooks" / "04_dr003_reranking.ipynb"
    with pytest.raises(ParameterError, match=r"maxsim_encoder = 'e5-small' .*token vectors"):
        module._check_as_notebook(dr003, {"maxsim_encoder": "e5-small"})
    module._check_as_notebook(path, {"encoder": "sentence-transformers/all-MiniLM-L6-v2"})


# --- run sizes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_declares_its_smaller_sizes_over_its_own_parameters(path: Path) -> None:
    declared = notebook_parameters(path)
    assert declared["size"] == "reference"
    presets = PRESETS[path.stem]
    assert set(presets) == {"smoke", "class"}
    for size, preset in presets.items():
        stray = set(preset) - set(declared)
        assert not stray, f"{path.stem}: the {size} preset sets {stray}, not parameters"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_size_sets_its_preset_where_the_run_gives_no_value(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-p size class -p max_queries 60`` keeps 60 questions; the rest is the preset's."""
    monkeypatch.delenv(SMOKE_ENV, raising=False)
    params, check = _cells(path)
    defaults = notebook_parameters(path)
    preset = PRESETS[path.stem]["class"]
    plain = [k for k, v in preset.items() if not callable(v)]
    ns = _run([params, "# Parameters\nsize = 'class'\n", check])
    for name, value in preset.items():
        assert ns[name] == (value(defaults) if callable(value) else value), name
    if plain:
        given = {plain[0]: defaults[plain[0]]}
        ns = _run([params, "# Parameters\nsize = 'class'\n" + _assign(given), check])
        assert ns[plain[0]] == defaults[plain[0]]  # given: the run's own value
    ns = _run([params, check])  # the reference size changes nothing
    assert all(ns[k] == v for k, v in defaults.items() if not isinstance(v, type(UNEVALUATED)))
    monkeypatch.setenv(SMOKE_ENV, "1")  # the test session's switch: every run is smoke
    ns = _run([params, "# Parameters\nsize = 'class'\n", check])
    assert ns["size"] == "smoke"


def _assign(values: dict[str, object]) -> str:
    return "".join(f"{k} = {v!r}\n" for k, v in values.items())


IMPORT = "from hierret.study import check_notebook\n"


def test_a_preset_for_an_unknown_size_or_parameter_is_a_mistake_of_the_notebook() -> None:
    cells = ["size = 'reference'\nk = 10", "# Parameters\nsize = 'smoke'\n"]
    with pytest.raises(ValueError, match="a preset is for a smaller size"):
        _run([*cells, f"{IMPORT}check_notebook(globals(), presets={{'reference': {{'k': 1}}}})"])
    with pytest.raises(ValueError, match=r"the preset sets \['kk'\], which the notebook"):
        _run([*cells, f"{IMPORT}check_notebook(globals(), presets={{'smoke': {{'kk': 1}}}})"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_combinations_of_accepted_values_run_or_are_refused_naming_one(
    path: Path, data: st.DataObject
) -> None:
    """Any draw of accepted values (each alone passes the check), at any size, either
    passes the notebook's check or is refused with a message naming a changed parameter;
    nothing else is raised (a rule between parameters may refuse a pair)."""
    module = _module("execute")
    declared = notebook_parameters(path)
    names = [n for n in VARIATIONS if n in declared]
    chosen = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=5))
    combo: dict[str, object] = {"size": data.draw(st.sampled_from(SIZES))}
    for name in chosen:
        good = VARIATIONS[name][0]
        if isinstance(declared[name], dict) and not isinstance(good, dict):
            good = dict.fromkeys(declared[name], good)  # type: ignore[arg-type]
        combo |= {name: GOOD_FOR.get(path.stem, {}).get(name, good)}
        combo |= {k: v for k, v in COMPANIONS.get(name, {}).items() if k in declared}
    problem = None
    try:
        module._check_as_notebook(path, combo)
    except ParameterError as err:
        problem = str(err)
    assert problem is None or any(name in problem for name in combo), problem


# --- exercises ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_exercise_runs_at_class_size_and_its_prose_gives_its_command_and_time(
    path: Path,
) -> None:
    """The exercises' metadata is what ``docs/sizes.py`` runs and times; the prose
    beside it must give the same command, and the cell under it their times."""
    from hierret.publish.timing import EXERCISES_RECORD, exercise_times, exercises_of

    exercises = exercises_of(path)
    assert 2 <= len(exercises) <= 3, path.stem
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    at = next(i for i, c in enumerate(cells) if "exercises" in c["metadata"])
    prose = "".join(cells[at]["source"])
    # each time is the output of the code cell under the exercises (issue 45)
    assert ".exercises()" in "".join(cells[at + 1]["source"]), f"{path.stem}: no times cell"
    items = prose.split("`papermill ")[1:]
    assert len(items) == len(exercises), f"{path.stem}: one command per exercise"
    module = _module("execute")
    for n, (changes, command) in enumerate(zip(exercises, items, strict=True), 1):
        command = command.split("`", 1)[0]
        assert f"notebooks/{path.stem}.ipynb" in command
        assert "-p size class" in command
        for name in changes:
            assert f"-p {name} " in command or f'-y "{name}: ' in command, (n, name)
        module._check_as_notebook(path, {"size": "class", **changes})  # accepted up front
    record = json.loads((ROOT / "data" / "results" / EXERCISES_RECORD).read_text("utf-8"))
    assert set(exercise_times(path.stem, record)) == set(range(1, len(exercises) + 1)), (
        f"{path.stem}: an exercise without a measured time: run `nox -s sizes -- --record`"
    )


@pytest.mark.parametrize(
    ("make", "option", "message"),
    [
        (lambda t: (t / "out.txt").write_text("x") and t / "out.txt", "--out", "is a file"),
        (
            lambda t: (t / "f").write_text("x") and t / "f" / "site",
            "--out",
            "is inside",
        ),
        (lambda t: (t / "r.json").write_text("{}") and t / "r.json", "--results", "is a file"),
        (
            lambda t: (t / "gone").symlink_to(t / "nowhere") or t / "gone",
            "--out",
            "link to nothing",
        ),
    ],
)
def test_execute_checks_its_output_folders_before_running_anything(
    execute: Callable[[list[str]], int],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], Path],
    option: str,
    message: str,
) -> None:
    bad = make(tmp_path)
    argv = ["--out", str(tmp_path / "site"), "--only", "01_structure"]
    argv = [*argv, option, str(bad)] if option == "--results" else ["--out", str(bad), *argv[2:]]
    with pytest.raises(SystemExit) as info:
        execute(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"{option} {bad}" in err
    assert message in err
    assert not (tmp_path / "site").exists()


def test_execute_refuses_a_file_where_the_figures_go(
    execute: Callable[[list[str]], int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "figures").write_text("not a folder")
    with pytest.raises(SystemExit):
        execute(["--out", str(tmp_path), "--only", "01_structure"])
    assert "save their figures in a folder of that name" in capsys.readouterr().err


def test_execute_refuses_a_dir_parameter_naming_a_file(
    execute: Callable[[list[str]], int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "figs.png").write_text("not a folder")
    with pytest.raises(SystemExit):
        execute(["--out", str(tmp_path), "--only", "01_structure", "-p", "figures_dir", "figs.png"])
    assert "-p figures_dir" in capsys.readouterr().err
