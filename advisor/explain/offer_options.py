"""Which rental offers a decision's extra candidates leave out (explain/decision.py, and the value of
information's candidates): two plans of one purchase on other offers of a GPU type are two plans.

Offers of one GPU type read one rent normal (explain/draws.py), so two offers of one grade and one
way of billing keep their order in every draw, and a plan on the dearer never wins. Two offers
differ in a draw only when their bands differ (a low-confidence rate against a firmer one: the
expected basis weighs each at its own band's mean, explain/draws.Prices) or when one is a commitment
(billed by the term: a job that runs past it pays a second, a step the mean-factor re-solve cannot
see). So: per rented GPU type of a plan, the cheapest plan with its commitments left out and with
them forced (decision), and without each offer it rents whose GPU type has an offer of another
profile (verify).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.solve.rental_offers import offers_of, rent_offers

if TYPE_CHECKING:
    from advisor.solve.problem import Problem
    from advisor.solve.solution import Solution

Offer = tuple[str, str]  # (GPU id, provider): what Scenario.offer_factor prices


def profiles(problem: Problem) -> dict[Offer, tuple[str, bool]]:
    """Every offer some candidate (a job's or a replica's) rents on, with its (confidence, commits?)."""
    return {k: (str(o.confidence), o.term_hours is not None) for k, o in rent_offers(problem).items()}


def commitment_splits(problem: Problem, sol: Solution) -> list[tuple[str, frozenset[Offer]]]:
    """(label, offers to leave out) per GPU type `sol` rents that has both commitments and offers
    billed by use: the cheapest plan with its commitments left out, and with them forced."""
    every = profiles(problem)
    out = []
    for g in sorted({g for g, _ in offers_of(sol)}):
        mine = {o: commits for o, (_, commits) in every.items() if o[0] == g}
        if len(set(mine.values())) == 2:
            out.append((f"{g} without commitments", frozenset(o for o, c in mine.items() if c)))
            out.append((f"{g} on commitments only", frozenset(o for o, c in mine.items() if not c)))
    return out


def offer_drops(problem: Problem, sol: Solution) -> list[tuple[str, frozenset[Offer]]]:
    """(label, {offer}) for each offer `sol` rents on whose GPU type has an offer of another profile
    (confidence, or commitment): the plan without it is the runner-up only the draws can rank."""
    every = profiles(problem)
    out = []
    for o in sorted(offers_of(sol)):
        if any(g == o[0] and p != every.get(o) for (g, _), p in every.items()):
            out.append((f"without {o[1]} ({o[0]})", frozenset({o})))
    return out


def on_offers(text: str, mine: Solution, other: Solution) -> str:
    """`text` (a purchase in words) with the offers `mine` rents on that `other` does not, when the two
    purchases read alike: 'the optimum (8x H100 (rent) on RunPod ...)' against the plan on Nebius."""
    return text + offers_apart(offers_of(mine), offers_of(other))


def offers_apart(mine: frozenset[Offer], other: frozenset[Offer]) -> str:
    """' on PROVIDER + ...': the providers of the offers in `mine` that are not in `other` ('' if none)."""
    extra = sorted(provider for _, provider in mine - other)
    return " on " + " + ".join(extra) if extra else ""
