"""The ids a workload names -- GPUs and model presets -- checked while the file is read, so that an
unknown id is reported with every other mistake, at its line and path as written.

inputs/ sits below the catalog, so the caller passes what it knows (`Known`, built from the catalog
by advisor.api.known_ids) in pydantic's validation context; without one, ids are checked later,
when the workload is planned. GPU names are read as people write them, as SkyPilot reads
accelerators: any case, `H100` for the one GPU whose id starts so, `H100:8` for eight of it (in
`gpus:`), and a name matching several ids is refused with all of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import AfterValidator, ValidationInfo, WithJsonSchema

from advisor.errors import InputError, either, suggest


@dataclass(frozen=True)
class Known:
    """What a catalog offers: GPU ids, training presets, and a check of a serving model's name
    (which raises InputError for an unknown one)."""

    gpus: frozenset[str]
    presets: frozenset[str]
    serving: Callable[[str], Any] | None = field(default=None, compare=False)


def known_in(info: ValidationInfo) -> Known | None:
    ctx = info.context
    return ctx.get("known") if isinstance(ctx, dict) else None


def resolve_gpu(text: str, ids: frozenset[str] | set[str]) -> str:
    """The GPU id `text` names: the id itself in any case ('H100-SXM'), without its hyphens
    ('RTX4090'), or the first words of exactly one id ('h200' -> h200-sxm). ValueError when it
    names none (with every close id) or several (with all of them)."""
    if text in ids:
        return text
    low = "-".join(text.strip().lower().replace("_", " ").split())
    if low in ids:
        return low
    compact = low.replace("-", "")
    same = sorted(g for g in ids if g.replace("-", "") == compact)
    if len(same) == 1:
        return same[0]
    words = low.split("-")
    starting = sorted(g for g in ids if g.split("-")[: len(words)] == words)
    if len(starting) == 1:
        return starting[0]
    if starting:
        raise ValueError(f"{text!r} names {len(starting)} GPUs: {either(starting)}; write the one you mean")
    raise ValueError(f"unknown GPU id {text!r}{suggest(text, ids)}; `advisor catalog list` lists them")


def _gpu_id(value: str, info: ValidationInfo) -> str:
    known = known_in(info)
    return resolve_gpu(value, known.gpus) if known is not None else value


# a GPU id as written in a workload: resolved against the catalog when the caller knows it
GpuId = Annotated[
    str, AfterValidator(_gpu_id), WithJsonSchema({"type": "string", "description": "a GPU id (`advisor catalog list`)"})
]


def check_preset(value: str, info: ValidationInfo) -> str:
    """A training job's model preset, in any case; ValueError naming every close preset."""
    known = known_in(info)
    if known is None or value in known.presets:
        return value
    if value.lower() in known.presets:
        return value.lower()
    raise ValueError(
        f"unknown model preset {value!r}{suggest(value, known.presets)}; presets: "
        f"{', '.join(sorted(known.presets))} (`advisor models`); or give the model's shape: "
        "{params: 7B, layers: 32, hidden: 4096}"
    )


def check_serving_model(value: str, info: ValidationInfo) -> str:
    """A serving job's model, checked by the caller's serving catalog."""
    known = known_in(info)
    if known is None or known.serving is None:
        return value
    try:
        known.serving(value)
    except InputError as exc:
        raise ValueError(str(exc).removeprefix("`model`: ")) from None
    return value


def gpus_shorthand(value: Any) -> Any:
    """`gpus: h100-sxm` -> {allow: [h100-sxm]}; `gpus: "H100:8"` -> {allow: [H100], count: 8}
    (SkyPilot's accelerator:count); anything else unchanged."""
    if not isinstance(value, str):
        return value
    name, sep, count = value.partition(":")
    out: dict[str, Any] = {"allow": [name.strip()]}
    if sep:
        out["count"] = int(count) if count.strip().isdigit() else count.strip()
    return out
