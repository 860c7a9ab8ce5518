"""A Django-free wheel of the load generator, for the air-gapped agent (`pip install llm_sizing_loadgen-*.whl`).

The repository's own project installs the whole service (Django included), so the generator gets its own small
distribution, built here without any build tool: a wheel is a zip with `*.dist-info/{METADATA,WHEEL,RECORD}`.
It holds `benchmarks_app/loadgen/` and the two pure modules it imports (`sizing/estimator/workload.py` and
`errors.py`), with empty parent packages, and requires only httpx and numpy. It installs the
`llm-sizing-loadgen` command; `python -m benchmarks_app.loadgen` works too.

    python -m benchmarks_app.loadgen wheel --out dist/
    pip install dist/llm_sizing_loadgen-0.1.0-py3-none-any.whl   # on the machine inside the customer's network
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from benchmarks_app.loadgen import TOOL_NAME, __version__

DISTRIBUTION = "llm_sizing_loadgen"
REQUIRES = ("httpx>=0.27,<0.29", "numpy>=2.1,<3")
PACKAGE_DIR = Path(__file__).resolve().parent
ROOT = PACKAGE_DIR.parents[1]
PARENT_STUB = '"""Parent package of the load generator (the wheel holds only `benchmarks_app.loadgen`)."""\n'
SIZING_STUB = '"""The pure workload module the load generator draws its requests from (no Django)."""\n'
PURE_MODULES = ("sizing/estimator/errors.py", "sizing/estimator/workload.py")
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed: the same sources give the same wheel


def wheel_files() -> dict[str, bytes]:
    """Archive path → content of every module in the wheel."""
    files: dict[str, bytes] = {
        "benchmarks_app/__init__.py": PARENT_STUB.encode(),
        "sizing/__init__.py": SIZING_STUB.encode(),
        "sizing/estimator/__init__.py": SIZING_STUB.encode(),
    }
    for path in sorted(PACKAGE_DIR.glob("*.py")):
        files[f"benchmarks_app/loadgen/{path.name}"] = path.read_bytes()
    for module in PURE_MODULES:
        files[module] = (ROOT / module).read_bytes()
    return files


def _metadata() -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {TOOL_NAME}", f"Version: {__version__}",
             "Summary: LLM load generator of the llm-sizing service (air-gapped agent, no Django)",
             "Requires-Python: >=3.11"]
    lines += [f"Requires-Dist: {requirement}" for requirement in REQUIRES]
    return "\n".join(lines) + "\n"


def _digest(content: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()


def build_wheel(out: str | Path) -> Path:
    """Write the wheel into the folder `out` and return its path."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    info = f"{DISTRIBUTION}-{__version__}.dist-info"
    files = wheel_files()
    files[f"{info}/METADATA"] = _metadata().encode()
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: {TOOL_NAME} {__version__}\nRoot-Is-Purelib: true\n"
                              "Tag: py3-none-any\n").encode()
    files[f"{info}/entry_points.txt"] = (f"[console_scripts]\n{TOOL_NAME} = "
                                         "benchmarks_app.loadgen.__main__:main_exit\n").encode()
    record = "".join(f"{name},{_digest(content)},{len(content)}\n" for name, content in files.items())
    files[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    target = folder / f"{DISTRIBUTION}-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            entry = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, content)
    return target
