"""The decision's message (explain/decision.py `record`): the plan chosen, on what basis, its figures
over the scoring draws, and what the point plan would cost or why it stands, in one sentence."""

from __future__ import annotations

from typing import Any

from advisor.contract.decision import Z_SWITCH
from advisor.contract.numbers import cents, usd


def message(basis: str, rec: dict[str, Any], what: str, point_what: str, same: bool, close: str | None = None) -> str:
    """The decision in one sentence."""
    how = {
        "expected": "the least expected cost",
        "p80": "the least 80th-percentile cost",
        "p90": "the least 90th-percentile cost",
        "point": "the least cost at the point estimates",
    }[basis]
    figures = (
        f"over {rec['scored_draws']:,} joint draws of speed and price (expected {usd(cents(rec['expected_cost_usd']))}"
        # its Monte-Carlo error, worded as such (a bare "±" reads as the cost's spread, ~33% on the knife)
        + (
            f" ±{usd(Z_SWITCH * rec['expected_cost_se_usd'])} at {Z_SWITCH:g} standard errors"
            if rec.get("expected_cost_se_usd")
            else ""
        )
        + f", P80 {usd(cents(rec['p80_cost_usd']))}"
        # the quantile a p90 choice was made on is named with it
        + (
            f", P90 {usd(cents(rec['p90_cost_usd']))})"
            if basis == "p90" and rec.get("p90_cost_usd") is not None
            else ")"
        )
    )
    if close is not None:
        return (
            f"{what}: the optimum at the point estimates, kept on {how.removeprefix('the least ')} {figures}; {close}"
        )
    if basis == "point":  # chosen at the point estimates, then costed over the draws
        return f"{what}: chosen for {how}; {figures.replace(' (', ': ', 1).removesuffix(')')}"
    text = f"{what}: chosen for {how} {figures}"
    if same:
        return text + "; it is also the optimum at the point estimates"
    # at the cents the JSON prints them to, so the band re-computed from the JSON is the one in the words
    loss, noise = cents(rec["price_of_robustness_usd"]), Z_SWITCH * cents(rec["price_of_robustness_se_usd"])
    within = f", within its noise ({Z_SWITCH:g} standard errors: {usd(noise)})" if abs(loss) < noise else ""
    return (
        text + f"; the optimum at the point estimates ({point_what}) is expected to cost "
        f"{usd(abs(cents(loss)))} {'more' if loss >= 0 else 'less'} on {rec['fresh_draws']:,} fresh draws"
        + (within or f" (±{usd(noise)} at {Z_SWITCH:g} standard errors)")
    )
