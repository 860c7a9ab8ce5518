"""The load generator's distribution (packages/loadgen): its build backend's wheel, installed in a fresh virtual
environment with no Django and no checkout on the path, answers `--help` and runs a tiny plan against a local
server. Offline: the wheel's dependencies come from the uv cache through the lock (`uv export --format pylock.toml`
names the locked files by URL, which the cache holds since `make install`). About 2 s. No database."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks_app.results.detect import import_text
from tests.loadgen.streams import ThreadedSseServer

ROOT = Path(__file__).resolve().parents[2]
UV = shutil.which("uv", path=str(ROOT / ".tools" / "bin")) or shutil.which("uv")

pytestmark = pytest.mark.skipif(UV is None, reason="uv builds the wheel (make install bootstraps it into .tools/)")


def _uv(*args: str, cwd: Path = ROOT) -> str:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("VIRTUAL_ENV", "UV_PROJECT"))}
    done = subprocess.run(
        [str(UV), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the built wheel and its locked dependencies, nothing else."""
    folder = tmp_path_factory.mktemp("wheel")
    _uv("build", "--package", "llm-sizing-loadgen", "--wheel", "--offline", "--out-dir", str(folder / "dist"))
    [wheel] = (folder / "dist").glob("llm_sizing_loadgen-*-py3-none-any.whl")
    lock = folder / "pylock.toml"
    _uv(
        "export",
        "--package",
        "llm-sizing-loadgen",
        "--no-dev",
        "--frozen",
        "--no-emit-workspace",
        "--format",
        "pylock.toml",
        "--quiet",
        "--output-file",
        str(lock),
    )
    env = folder / "venv"
    _uv("venv", "--quiet", "--offline", str(env))
    python = str(env / "bin" / "python")
    _uv("pip", "install", "--quiet", "--offline", "--python", python, "-r", str(lock))
    _uv("pip", "install", "--quiet", "--offline", "--no-deps", "--python", python, str(wheel))
    return env


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")}
    return subprocess.run(
        [str(venv / "bin" / "llm-sizing-loadgen"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )


def test_the_wheel_holds_the_generator_alone_and_needs_no_django(venv: Path, tmp_path: Path) -> None:
    # given: the fresh environment's own interpreter, outside the checkout
    python = str(venv / "bin" / "python")
    script = (
        "import importlib.util, llm_sizing_loadgen.__main__ as cli\n"
        "print(cli.__file__)\n"
        "print([name for name in ('django', 'rest_framework', 'celery', 'sizing', 'benchmarks_app')"
        " if importlib.util.find_spec(name)])\n"
    )

    # when
    done = subprocess.run(
        [python, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"]},
        check=True,
        timeout=60,
    )

    # then: the generator is the installed one, and nothing of the service can be imported
    installed, missing = done.stdout.splitlines()
    assert installed.startswith(str(venv))
    assert missing == "[]"


def test_the_installed_command_answers_help(venv: Path, tmp_path: Path) -> None:
    # when
    done = _run(venv, "--help", cwd=tmp_path)

    # then
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m llm_sizing_loadgen [-h] [--version] {run,validate,schema} ...")


def test_the_installed_command_runs_a_tiny_plan_against_a_local_server(venv: Path, tmp_path: Path) -> None:
    # given
    result = tmp_path / "r.json"

    # when: requests of ~40 ms, two clients
    with ThreadedSseServer(ttft_s=0.02, itl_s=0.02) as server:
        done = _run(
            venv,
            "run",
            "--base-url",
            server.url,
            "--model",
            "m",
            "--concurrency",
            "2",
            "--requests",
            "4",
            "--input-tokens",
            "8",
            "--output-tokens",
            "2",
            "--out",
            str(result),
            "--quiet",
            cwd=tmp_path,
        )

    # then: the exit code says what the written result says (0 when the client kept up, 3 when not)
    valid = json.loads(result.read_text())["summary"]["client_fidelity"]["valid"]
    assert done.returncode == (0 if valid else 3), done.stderr
    assert done.stderr.startswith("ok 4 (completed); ")
    fmt, runs = import_text(result.read_text())
    assert fmt == "llm_sizing"
    assert runs[0].completed == 4
