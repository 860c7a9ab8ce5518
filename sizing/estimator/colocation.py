"""Several deployments sharing the same GPUs (e.g. two vLLM instances at 0.45 each, or a chat model beside an
embedding model): the card's memory is the sum of their bills, and each engine must find its share free when
it starts.

>>> from sizing.estimator.architecture import architecture_from_config
>>> from sizing.estimator.hardware import GpuSpec
>>> from sizing.estimator.units import GiB
>>> arch = architecture_from_config({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16,
...     "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256,
...     "torch_dtype": "bfloat16", "max_position_embeddings": 8192})
>>> gpu = GpuSpec(slug="g", name="80 GiB", memory_bytes=80 * GiB)
>>> shared = estimate_colocated((EstimateRequest(arch=arch, gpu=gpu, gpu_memory_utilization=0.45),
...                              EstimateRequest(arch=arch, gpu=gpu, gpu_memory_utilization=0.45)))
>>> shared.fits, len(shared.deployments)
(True, 2)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from sizing.estimator.engines import Allocation
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.memory import EstimateRequest, MemoryEstimate, estimate_memory
from sizing.estimator.units import format_bytes


@dataclass(frozen=True, kw_only=True)
class ColocatedEstimate:
    """The shared bill of one GPU: each deployment's components summed, against the card."""

    deployments: tuple[MemoryEstimate, ...]
    memory_per_gpu: dict[str, int]  # component -> bytes, summed over the deployments
    deployment_bytes_per_gpu: tuple[int, ...]  # each deployment's required bytes
    capacity_bytes_per_gpu: int
    required_bytes_per_gpu: int
    headroom_bytes_per_gpu: int
    fits: bool
    problems: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def estimate_colocated(requests: tuple[EstimateRequest, ...]) -> ColocatedEstimate:
    """Estimate deployments started in the given order on the same GPUs."""
    if len(requests) < 2:
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT,
            message="give two or more deployments to share",
            extra={"fields": {"deployments": ["give two or more deployments"]}},
        )
    capacities = {r.gpu_memory_bytes or r.gpu.memory_bytes for r in requests}
    if len({r.gpu.slug for r in requests}) > 1 or len(capacities) > 1:
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT,
            message="co-located deployments must run on the same GPU type and memory",
            extra={"fields": {"deployments": ["one GPU type for all"]}},
        )
    estimates = []
    for index, request in enumerate(requests):
        try:
            estimates.append(estimate_memory(request))
        except SizingError as error:
            raise error.for_item(field=f"deployments[{index}]", label=f"deployment {index + 1}") from error
    results = tuple(estimates)
    capacity = capacities.pop()
    problems: list[str] = []
    used = 0
    for index, result in enumerate(results):
        problems.extend(f"deployment {index + 1}: {problem}" for problem in result.problems)
        if result.allocation == Allocation.PREALLOCATED.value:
            # the engine checks at start that its budget is free: what earlier deployments hold is not
            wanted = result.budget_bytes_per_gpu
            if wanted > capacity - used:
                problems.append(
                    f"deployment {index + 1} ({result.engine}) wants {format_bytes(wanted)} free at start, "
                    f"{format_bytes(capacity - used)} is left after deployments 1–{index}; lower its "
                    f"gpu_memory_utilization (now {result.assumptions['gpu_memory_utilization']})"
                )
        used += result.required_bytes_per_gpu
    components: dict[str, int] = {}
    for result in results:
        for key, value in result.memory_per_gpu.items():
            components[key] = components.get(key, 0) + value
    required = sum(result.required_bytes_per_gpu for result in results)
    if required > capacity:
        problems.append(
            f"together the deployments need {format_bytes(required)} per GPU, {format_bytes(capacity)} on the card"
        )
    return ColocatedEstimate(
        deployments=results,
        memory_per_gpu=components,
        deployment_bytes_per_gpu=tuple(result.required_bytes_per_gpu for result in results),
        capacity_bytes_per_gpu=capacity,
        required_bytes_per_gpu=required,
        headroom_bytes_per_gpu=capacity - required,
        fits=not problems,
        problems=tuple(problems),
    )
