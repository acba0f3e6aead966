"""Starter workload files (`advisor init [--serve]`): every field a first-day user needs, each with
a comment saying what it means and what it takes. Both validate and plan as written
(tests/test_ux.py checks it)."""

from __future__ import annotations

_HEAD = """\
# A gpu-advisor workload: what to train or serve, where, and within what limits.
#   advisor validate {file}      check it (every mistake at once, with its line)
#   advisor plan {file}          what to buy or rent, and why
#   advisor memo {file} -o memo.html   the justification memo
# Every field: README.md, "A workload file"; `advisor schema` for editors.
"""

TRAINING = (
    _HEAD
    + """\
name: my training run

deployment:
  context: datacenter        # office | datacenter | cloud (cloud: rented GPUs only)
  region: US                 # ISO country code of where the GPUs go: export-control rules read it
  ownership: any             # buy | rent | any (whichever costs less)
  horizon_months: 36         # bought hardware is costed (and resold) over this many months

# One training job, written at the top level; for several, list them under `jobs:`.
kind: finetune               # pretrain | finetune | lora | qlora
model: llama-3-8b            # a preset (`advisor models`), or its shape: {params: 7B, layers: 32, hidden: 4096}
tokens: 2B                   # tokens to train on: 500M, 2B, 1 trillion
precision: bf16              # bf16 | fp16 | fp8
deadline: 7d                 # 36h, 7d, 2 weeks; leave it out for no deadline

gpus:
  max: 16                    # at most this many GPUs; `count: 8` for exactly eight
  # allow: [h100-sxm, a100-80gb-sxm]   # only these GPU types (`advisor catalog list`)

# budget_usd: 250K           # the most the plan may cost over the horizon
"""
)

SERVING = (
    _HEAD
    + """\
name: my chat service

deployment:
  context: datacenter        # office | datacenter | cloud (cloud: rented GPUs only)
  region: US                 # ISO country code of where the GPUs go: export-control rules read it
  ownership: any             # buy | rent | any (whichever costs less)
  horizon_months: 24         # how long the service runs; bought hardware is costed over it

# One serving job, written at the top level; for several (or training beside it), use `jobs:`.
kind: serve
model: llama-3.1-8b          # a serving model: `advisor estimate --kind serve --list-models`
precision: fp8               # bf16 | fp16 | fp8 | fp4 | int8 | int4 (int8/int4: weights only)
traffic:
  requests_per_s: 10         # average over the day
  input_tokens: 1000         # mean prompt length, tokens
  output_tokens: 300         # mean answer length, tokens
  peak_factor: 2             # busiest hour's rate / the average: capacity is sized for the peak
  # mix: [{name: chat, input_tokens: 800, output_tokens: 250, share: 0.8}, ...]   # instead of one size
slo:
  ttft_ms: 2000              # time to the first token, at the percentile below
  tpot_ms: 100               # time per output token after it
  percentile: 99
"""
)


def starter(serve: bool = False, file: str = "workload.yaml") -> str:
    """A commented starter workload: one training job, or one serving job."""
    return (SERVING if serve else TRAINING).replace("{file}", file)
