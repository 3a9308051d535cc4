"""The README's own-environment path, as a new user takes it.

A fresh virtual environment, the package installed into it by the README's own lines
(read from its section *Open the notebooks in JupyterLab*, so they cannot drift), and a
notebook executed there as a user would, with ``jupyter nbconvert --execute``, on the
kernel the notebook names. It failed with ``NoSuchKernel: No such kernel named
hierret`` while the notebooks named the kernel only nox registers.

Its cost is the install: pip reads every wheel from its cache and the machine's local
wheels when they are there (on the project's machines, all of them), so it downloads no
wheel (only the index's pages), but it still unpacks about 2.3 GB (most of it PyTorch).
The test adds ``--no-compile`` to the README's ``pip install``: Python writes each
module's bytecode when it first imports it instead of pip compiling all of them up
front, which halved the install's CPU time (85 s to 42 s user, 46 s with the system's).
Measured on the project's two-core machine at load average 11, with two CPU-bound
processes beside it: 458 s in all, 360 s of it the install and 49 s the notebook at
smoke size.

Its disk: the environment is 1.8 GB when installed and the install needs about 2.2 GB
at its peak (``df`` every 2 s during a run on the project's machine). The environment
is removed when the test ends, passed or failed, so the three test folders pytest keeps
do not hold 1.8 GB each; an install that runs out of disk says so, with the space
there was, in place of pip's last lines.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "notebooks/01_structure.ipynb"
#: A guard against a hung pip or kernel only: a busy machine never reaches it.
GUARD_S = 3600
#: The install's measured peak on disk (see above), for the message when disk runs out.
PEAK_GB = 2.2


def readme_lines() -> list[str]:
    """The commands of the README's own-environment block, comments dropped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Open the notebooks in JupyterLab", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None, "the README's section has no bash block"
    return [line.split("  #", 1)[0].strip() for line in block.group(1).splitlines()]


def test_the_readme_block_is_what_this_test_runs() -> None:
    lines = readme_lines()
    assert lines[0] == "python3 -m venv .venv && source .venv/bin/activate"
    assert lines[1] == 'pip install -e ".[notebooks,models]"'
    assert lines[2] == "jupyter lab notebooks/"


def test_every_notebook_names_a_kernel_that_every_jupyter_has() -> None:
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        spec = json.loads(path.read_text(encoding="utf-8"))["metadata"]["kernelspec"]
        assert spec["name"] == "python3", f"{path.name} opens on {spec['name']}"


def _script(venv: Path, out: Path) -> str:
    """The README's lines for ``venv``, with Jupyter's command-line execution of one
    notebook where the README opens JupyterLab."""
    install, *_ = readme_lines()[1:]
    return "\n".join(
        [
            "set -euo pipefail",
            f"python3 -m venv {shlex.quote(str(venv))}",
            f"source {shlex.quote(str(venv / 'bin' / 'activate'))}",
            'echo "install: start $(date +%s.%N)"',
            install.replace("pip install", "pip install -q --no-compile", 1),
            'echo "install: end $(date +%s.%N)"',
            f"jupyter nbconvert --to notebook --execute {NOTEBOOK} "
            f"--output-dir {shlex.quote(str(out))}",
            'echo "notebook: end $(date +%s.%N)"',
            'python -c "import hierret; print(hierret.__file__)"',
        ]
    )


@pytest.mark.slow
def test_a_fresh_environment_runs_a_notebook_the_way_the_readme_says(tmp_path: Path) -> None:
    venv, out = tmp_path / ".venv", tmp_path / "executed"
    env = {  # a user's shell: none of this process's Python or Jupyter settings
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV"}
        and not k.startswith("JUPYTER")
    }
    own = tmp_path / "bin"  # the user's python3: the Python 3.11 this one was made from
    own.mkdir()
    (own / "python3").symlink_to(getattr(sys, "_base_executable", sys.executable))
    path = [p for p in env.get("PATH", "").split(os.pathsep) if Path(p) != Path(sys.prefix, "bin")]
    env["PATH"] = os.pathsep.join([str(own), *path])  # and not this environment's bin folder
    env["HIERRET_SMOKE"] = "1"  # the README: every run a smoke run
    started = time.monotonic()
    free_gb = shutil.disk_usage(tmp_path).free / 1e9
    try:
        done = subprocess.run(
            ["bash", "-c", _script(venv, out)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=GUARD_S,
        )
    finally:
        shutil.rmtree(venv, ignore_errors=True)
    said = done.stdout + done.stderr
    if done.returncode and "No space left on device" in said:
        pytest.fail(
            f"the disk ran out during the install: it needs about {PEAK_GB} GB at its "
            f"peak and {free_gb:.1f} GB were free under {tmp_path} when it began. Free "
            "space there (or point pytest's --basetemp at a larger disk) and run again.",
            pytrace=False,
        )
    assert done.returncode == 0, said[-4000:]
    marks = {
        (n, w): float(t) for n, w, t in re.findall(r"^(\w+): (\w+) ([\d.]+)$", done.stdout, re.M)
    }
    print(  # pytest -s, or the report of a failure, shows what each step took
        f"own environment: {time.monotonic() - started:.0f} s in all; the install "
        f"{marks['install', 'end'] - marks['install', 'start']:.0f} s, the notebook "
        f"{marks['notebook', 'end'] - marks['install', 'end']:.0f} s"
    )
    assert done.stdout.strip().splitlines()[-1] == str(ROOT / "src" / "hierret" / "__init__.py")
    executed = json.loads((out / Path(NOTEBOOK).name).read_text(encoding="utf-8"))
    cells = [c for c in executed["cells"] if c["cell_type"] == "code"]
    assert cells
    assert all(c["execution_count"] for c in cells)
    errors = [o for c in cells for o in c["outputs"] if o["output_type"] == "error"]
    assert not errors, errors
    assert executed["metadata"]["kernelspec"]["name"] == "python3"
