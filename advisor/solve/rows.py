"""Building PuLP rows fast and by name: an affine expression from (variable, coefficient) pairs in
one pass, a row `sum(a x) <sense> 0`, and the names docs/model.md gives GPU ids in row names."""

from __future__ import annotations

import math
from collections.abc import Iterable

import pulp

LE, GE = pulp.LpConstraintLE, pulp.LpConstraintGE


def affine(terms: Iterable[tuple[pulp.LpVariable, float]], constant: float = 0.0) -> pulp.LpAffineExpression:
    """lpSum(a * x for x, a in terms), built as a dict in one pass: the same terms in the same
    order, a zero coefficient dropped (as a * x drops it), a non-finite one refused (as PuLP
    does); without PuLP's per-term temporary expressions (most of a large model's build time)."""
    kept: dict[pulp.LpVariable, float] = {}
    for x, a in terms:
        if not math.isfinite(a):
            raise pulp.PulpError("Cannot multiply variables with NaN/inf values")
        kept[x] = kept.get(x, 0) + a  # a variable named twice adds up, as lpSum does
    return pulp.LpAffineExpression([(x, a) for x, a in kept.items() if a != 0], constant)


def row(terms: Iterable[tuple[pulp.LpVariable, float]], sense: int) -> pulp.LpConstraint:
    """The constraint sum(a * x) <sense> 0, as `x <= m * z` builds it (an integer zero constant)."""
    return pulp.LpConstraint(affine(terms, 0), sense)


def safe(name: str) -> str:
    """A GPU or server id as it appears in a row or column name."""
    return name.replace("-", "_").replace(".", "_")
