"""How a sized deployment is installed and started: the engine release the estimate holds for, the line that
installs exactly that release, and the launch command with the environment toggles the estimate assumed.

An estimate holds for one engine release (`estimator.versions`): the launch lines name it, so whoever starts the
deployment runs the release that was sized, not whatever `pip install vllm` gives that day.

>>> install_line(engine="vllm", version="0.11.0", install="pip")
'pip install vllm==0.11.0'
>>> install_line(engine="vllm", version="0.11.0", install="docker")
'docker pull vllm/vllm-openai:v0.11.0'
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

USAGE_CONTEXTS: tuple[str, ...] = ("serve", "llm")  # vLLM: `vllm serve` (the OpenAI server) | Python `LLM(...)`
ENGINE_MODES: tuple[str, ...] = ("auto", "v0", "v1")  # vLLM 0.8-0.10: its own choice | V0 | V1
INSTALLS: tuple[str, ...] = ("pip", "docker")  # the PyPI wheel | the engine's official image

# EstimateRequest field -> the environment variable that sets it ("1" on, "0" off), as vLLM and NCCL read them.
ENV_TOGGLES: dict[str, str] = {
    "flashinfer_sampler": "VLLM_USE_FLASHINFER_SAMPLER",
    "estimate_cudagraphs": "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS",
    "nccl_nvls": "NCCL_NVLS_ENABLE",
}

# The package each engine publishes on PyPI and its official image, by engine (estimator.engines values); an
# engine without one gets a comment naming the release instead of an install line.
_PIP_PACKAGES: dict[str, str] = {"vllm": "vllm", "sglang": "sglang[all]", "trtllm": "tensorrt_llm"}
_DOCKER_IMAGES: dict[str, str] = {
    "vllm": "vllm/vllm-openai:v{version}",
    "tgi": "ghcr.io/huggingface/text-generation-inference:{version}",
}
# The official vLLM image's entrypoint is the OpenAI server: it takes the server's flags, the model as --model.
_DOCKER_RUN = "docker run --gpus all --ipc=host -p 8000:8000"


def install_line(*, engine: str, version: str, install: str = "pip") -> str | None:
    """The shell line that installs `engine` at `version`, or None when the engine has no such package or image
    (or no version is known)."""
    if not version:
        return None
    if install == "docker" and engine in _DOCKER_IMAGES:
        return f"docker pull {_DOCKER_IMAGES[engine].format(version=version)}"
    if install == "pip" and engine in _PIP_PACKAGES:
        return f"pip install {shlex.quote(f'{_PIP_PACKAGES[engine]}=={version}')}"
    return None


def env_assignments(toggles: Mapping[str, bool | None]) -> tuple[str, ...]:
    """`VAR=1` / `VAR=0` for each toggle the user set (a toggle left None stays the engine's default: unset)."""
    return tuple(
        f"{ENV_TOGGLES[key]}={int(bool(value))}"
        for key, value in toggles.items()
        if key in ENV_TOGGLES and value is not None
    )


def _python_arguments(args: Sequence[str]) -> str:
    """CLI flags as `LLM(...)` keyword arguments: `--tensor-parallel-size 2` -> `tensor_parallel_size=2`."""
    words: list[str] = []
    for arg in args:
        flag, _, value = str(arg).partition(" ")
        name = flag.lstrip("-").replace("-", "_")
        if not value:
            words.append(f"{name}=True")
            continue
        value = value.strip().strip("'")
        is_number = value.replace(".", "", 1).isdigit()
        words.append(f"{name}={value if is_number or value.startswith('{') else repr(value)}")
    return ", ".join(words)


def launch_lines(
    *,
    engine: str,
    label: str,
    version: str,
    requested: str = "latest",
    install: str = "pip",
    usage_context: str = "serve",
    command: str,
    model: str = "MODEL",
    args: Sequence[str] = (),
    toggles: Mapping[str, bool | None] | None = None,
) -> tuple[str, ...]:
    """The lines that install and start what was sized: a comment naming the release the estimate holds for, the
    install line, and the launch command (`vllm serve MODEL ...`, the image's `docker run ...`, or for
    `usage_context` llm the Python call), the environment toggles set in front.

    `command` is the engine's launch command with `MODEL` in it (estimator.engines); `args` the estimate's
    launch arguments ("--tensor-parallel-size 2", one flag with its value each).
    """
    release = f"{label} {version}" if version else label
    asked = f" (asked for: {requested})" if requested and version and requested != version else ""
    lines = [f"# {release}: the estimate holds for this release{asked}"]
    installed = install_line(engine=engine, version=version, install=install)
    if installed:
        lines.append(installed)
    env = env_assignments(toggles or {})
    flags = " ".join(str(arg) for arg in args)
    if engine == "vllm" and usage_context == "llm":
        if env:
            lines.append(f"# environment: {' '.join(env)}")
        arguments = _python_arguments(args)
        lines.append(f"from vllm import LLM; llm = LLM(model={model!r}" + (f", {arguments})" if arguments else ")"))
        return tuple(lines)
    if install == "docker" and engine in _DOCKER_IMAGES:
        image = _DOCKER_IMAGES[engine].format(version=version or "latest")
        options = "".join(f" -e {assignment}" for assignment in env)
        start = f"--model {model}" if engine == "vllm" else f"--model-id {model}"
        lines.append(f"{_DOCKER_RUN}{options} {image} {start}" + (f" {flags}" if flags else ""))
        return tuple(lines)
    if command:
        started = command.replace("MODEL", model)
        lines.append(" ".join([*env, started, *([flags] if flags else [])]))
    return tuple(lines)


__all__ = [
    "ENGINE_MODES",
    "ENV_TOGGLES",
    "INSTALLS",
    "USAGE_CONTEXTS",
    "env_assignments",
    "install_line",
    "launch_lines",
]
