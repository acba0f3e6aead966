"""The one strict base class of every model read from a file (workloads, catalog, economics, rules):
unknown keys are errors, models are immutable, NaN and infinity are refused, and YAML's `yes`/`true`
is never taken for the number 1. It sits in the lowest layer that all of them may import."""
from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """YAML reads `yes`, `on` and `true` as booleans, which pydantic would take for the number 1."""
        if isinstance(value, bool) and info.field_name is not None:
            ann = cls.model_fields[info.field_name].annotation
            types = set(typing.get_args(ann)) | {ann}
            if bool not in types and types & {int, float}:
                raise ValueError("must be a number, not true or false")
        return value
