"""The decision's basis and what to check before acting on it, what happens to bought GPUs at
the end, and the cost of the other way of acquiring them (the decision: docs/model.md §2.7; disposal:
README.md, A workload file). Every
key optional: a plan carries them when its flow computed them."""

from typing import Any, Literal

from pydantic import Field

from advisor.contract.base import Num, Out
from advisor.contract.costs import PurchaseItem

# a plan moves off the point optimum only on a saving of 2 standard errors (one-sided ~98%), and a
# difference over the draws is worded with the same noise
Z_SWITCH = 2.0


class Verify(Out):
    """An input worth checking before committing: its current value, the range it may take (P10,
    P90), and the expected value of knowing it exactly (EVPI, explain/value_of_information.py).
    `input` is "<kind>:<gpu>" (kind: rental_rate, purchase_price, speed; lead_time once lead times
    are drawn); a rate or price is in US dollars (per GPU-hour for a rate), a speed a factor on the
    estimate."""

    input: str
    kind: Literal["rental_rate", "purchase_price", "speed", "lead_time"] | None = None
    gpu: str | None = None
    count: int | None = None  # GPUs of that type the decision is about (the most any candidate uses)
    current: Any = None
    range: Any = None
    confidence: str | None = None  # a price's confidence grade, or a speed's evidence
    evpi_usd: Num | None = None
    message: str


class Decision(Out):
    """How the plan was chosen among joint draws of speeds and prices (explain/decision.py)."""

    basis: Literal["expected", "point", "p80", "p90"]
    draws: int | None = None  # the workload's decision.draws: the candidates are found on them
    scored_draws: int | None = None  # the draws the candidates are chosen among on and the costs below are over
    expected_cost_usd: Num | None = None
    expected_cost_se_usd: Num | None = None  # its Monte-Carlo standard error over the scored draws
    p80_cost_usd: Num | None = None
    p90_cost_usd: Num | None = None
    point_optimal: dict[str, Any] | None = (
        None  # {purchase: [{gpu, ownership, count}], expected_cost_usd, p80_cost_usd}
    )
    price_of_robustness_usd: Num | None = None  # the point plan's expected loss against this one, on fresh draws
    price_of_robustness_se_usd: Num | None = None  # its Monte-Carlo standard error (paired, over the fresh draws)
    fresh_draws: int | None = None  # the draws that price was measured on (0: the plans are one)
    candidates: int | None = None  # the plans compared
    # the prices the break-evens and marginal values re-solve at: the catalog's, or the expected prices
    # (the draws' means) a plan chosen on expected cost over another is optimal at
    explained_at: Literal["catalog", "expected"] | None = None
    message: str | None = None
    verify: list[Verify] = Field(default_factory=list)


class Disposal(Out):
    """A bought GPU type resold: after the work or at the horizon's end."""

    gpu: str
    when: Literal["after_work", "horizon"]
    month: Num | None = None
    count: int | None = None
    resale_usd: Num | None = None
    message: str


class OtherOwnership(Out):
    """The best plan that acquires the GPUs the other way (buying instead of renting or back)."""

    ownership: Literal["buy", "rent"]
    status: str | None = None  # the other plan's solve: optimal, feasible or infeasible
    site: str | None = None  # where its GPUs work (a cloud workload buys into a datacenter)
    total_cost_usd: Num | None = None  # present value, as the plan's
    nominal_cost_usd: Num | None = None  # cash over the horizon
    difference_usd: Num | None = None  # total_cost_usd less the plan's
    purchase: list[PurchaseItem] = Field(default_factory=list)
    message: str
