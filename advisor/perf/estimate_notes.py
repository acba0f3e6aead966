"""What a training estimate (perf/estimate.py) says in words beside its numbers: the model's shape
when it is inferred or unusual, a speed held to the best published MFU, and what the chosen layout
costs (a raised global batch, idle GPUs, tensor parallelism over PCIe, the pipeline bubble)."""

from __future__ import annotations

from advisor.data.catalog import GPU
from advisor.data.estimator import Params
from advisor.data.evidence import generation_name
from advisor.perf.jobspec import JobSpec
from advisor.perf.memory import Layout
from advisor.perf.published_mfu import mfu_cap
from advisor.perf.training import generation


def shape_notes(job: JobSpec) -> list[str]:
    """What the estimate of this model's shape must say: an inferred shape, a mixture of experts, a
    parameter count too small for its embeddings."""
    m, notes = job.model, []
    if m.shape_inferred:
        notes.append("layers and hidden size were inferred from the parameter count; give them for a better estimate")
    if m.active_params is not None:
        notes.append(
            f"a mixture of experts: compute counts the {m.active_params:.3g} parameters a token is routed "
            f"through, memory all {m.params:.3g}; the all-to-all of expert parallelism is not modelled, so "
            "the speed is an upper bound"
        )
    if m.params < 2 * m.embedding_params and not m.tied_embeddings:
        notes.append(
            f"{m.params:.3g} parameters hardly cover untied input and output embeddings of "
            f"{m.vocab:,} x {m.hidden:,}: check params, vocab and hidden"
        )
    return notes


def held_note(job: JobSpec, gpu: GPU, lay: Layout, p: Params, mfu: float, tps: float, upper: float) -> str:
    """Why the speed is below the model's: held to the best published MFU of the GPU's generation
    (`tps` tokens/s at `mfu` the model's, `upper` after the hold)."""
    return (
        f"held to the best published {job.precision} MFU on {generation_name(generation(gpu))} GPUs, "
        f"{100 * (mfu_cap(gpu, job.precision, p, lay.count) or 0.0):.1f}% before communication (model: "
        f"{100 * mfu:.1f}%, now {100 * mfu * upper / tps:.1f}%)"
    )


def layout_notes(gpu: GPU, count: int, lay: Layout, t: dict, batch: float, asked: float, needs_tp: bool) -> list[str]:
    """What the chosen layout costs that the numbers alone do not say: a global batch raised above
    the `asked` one, GPUs left idle, tensor parallelism over PCIe without peer-to-peer, the pipeline
    bubble (`t`: the layout's step time)."""
    notes = []
    if batch > asked * 1.0001:
        notes.append(
            f"global batch raised from {asked:,.0f} to {batch:,.0f} tokens: {count} GPUs need at "
            f"least one sequence each per step in this layout"
        )
    if lay.count < count:
        notes.append(
            f"{count - lay.count} of {count} GPUs idle: tensor x pipeline parallelism "
            f"{lay.tp} x {lay.pp} on {lay.count} is faster than any layout using all {count}"
        )
    if needs_tp and gpu.interconnect.p2p.value is not True and gpu.interconnect.link == "none":
        notes.append(
            f"only fits with tensor parallelism {lay.tp}, whose per-layer all-reduces cross PCIe "
            f"without peer-to-peer on {gpu.name}"
        )
    if lay.pp > 1:
        notes.append(
            f"pipeline parallelism {lay.pp}: {100 * t['bubble'] / (1 + t['bubble']):.0f}% of each step is pipeline bubble"
        )
    return notes
