"""Performance models: memory per GPU, the layout search and tokens/s of a training job, from
the model's shape and the GPU's catalog figures. Pure functions; nothing here solves or prices."""

from advisor.data.estimator import Params
from advisor.perf.estimate import Estimate, evaluate, params_from
from advisor.perf.jobspec import (
    JobSpec,
    ModelSpec,
    job_spec,
    resolve_model,
    spec_from_flags,
)
from advisor.perf.layout import choose_layout, min_gpus
from advisor.perf.memory import (
    GB,
    Layout,
    activation_bytes_per_layer,
    memory_per_gpu,
    trainable_params,
)
from advisor.perf.training import mfu_flops_per_token

__all__ = [
    "GB",
    "Estimate",
    "JobSpec",
    "Layout",
    "ModelSpec",
    "Params",
    "activation_bytes_per_layer",
    "choose_layout",
    "evaluate",
    "job_spec",
    "memory_per_gpu",
    "mfu_flops_per_token",
    "min_gpus",
    "params_from",
    "resolve_model",
    "spec_from_flags",
    "trainable_params",
]
