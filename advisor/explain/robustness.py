"""The robustness verdict: draw every GPU type's real speed and prices from their distributions
(catalog/uncertainty.yaml), re-solve, and count how often the recommended purchase (its GPU types,
bought or rented) stays the cheapest plan -- and what wins otherwise.

Seeded (same input, same verdict) and cheap: one model, its coefficients changed per draw
(solve/redraw.py). DRAWS = 200 keeps the check within 3x the plan's own solve on the article
examples (docs/accuracy.md, "Ranges").

Sequential stop: the draws are looked at after every CHECK_EVERY of them, and stop once the 95%
(Wilson) interval of the share that holds is at most SETTLED_WIDTH wide, i.e. the share is known
to within about 5 points (40 of 40 draws hold: 91-100%). The draws are the first of the same
seeded sequence, and the model is built for all of them, so a stopped verdict is the full one cut
short (same input, same verdict); its message says how many were drawn and the interval.
"""

from __future__ import annotations

import functools
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from advisor.contract.numbers import share_of_draws
from advisor.explain.draws import shared_draws
from advisor.explain.offer_options import offers_apart
from advisor.explain.ranges import SEED, cost_range, job_ranges
from advisor.solve import parallel
from advisor.solve.constraints.gpu_count import held_counts
from advisor.solve.milp import solve
from advisor.solve.problem import Problem
from advisor.solve.redraw import TIMED_OUT, Answer, Redraw, Signature, describe, signature
from advisor.solve.rental_offers import offers_of, pairs_of
from advisor.solve.run import stage, step
from advisor.solve.scenario import baseline
from advisor.solve.settings import SolveSettings
from advisor.solve.solution import Solution

DRAWS = 200
MIN_DRAWS = 40
CHECK_EVERY = MIN_DRAWS  # draws between two looks at the verdict (so never fewer than MIN_DRAWS)
SETTLED_WIDTH = 0.10  # stop once the hold share's 95% interval is at most 10 points wide
Z95 = 1.959964  # the two-sided 95% normal quantile
COLUMNS_AT_FULL = 400  # models with more candidate columns get proportionally fewer draws (not below MIN_DRAWS)
# Draws begun before the plan is solved from this many candidate columns (the 200-job fleet: 29,675,
# ~0.6 s a draw beside a ~4 s solve; team-fleet: 2,833, 0.01 s a draw beside a 0.02 s solve)
EARLY_COLUMNS = 10000
# On models that large, each draw gets at most this many seconds (a fleet draw's row-generation runs
# share them: solve/draw_rows.py): a draw stopped there counts its best plan (`unproven_draws`, said in
# the message), or none when it has no plan of the full model then. The 200-job fleet's 40 joint draws took 38 s of CPU, two
# of them 7.5 and 8.3 s (median 0.5 s); capped, see docs/performance.md
DRAW_TIME_LIMIT = 2.0


def draws_for(columns: int, draws: int = DRAWS) -> int:
    """N: 200 draws, fewer for large models so the check stays near 3x the plan's time (deterministic)."""
    return max(min(draws, MIN_DRAWS), min(draws, draws * COLUMNS_AT_FULL // max(columns, 1)))


def wilson(held: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a share `held` of `n` (exact enough at 0 and n, unlike +-1.96 sd)."""
    p, z2 = held / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def settled(held: int, n: int) -> bool:
    """Is the verdict decided: the 95% interval of the hold share at most SETTLED_WIDTH wide?"""
    lo, hi = wilson(held, n)
    return hi - lo <= SETTLED_WIDTH


def robustness(
    problem: Problem, sol: Solution, settings: SolveSettings, draws: int | None = None, seed: int = SEED
) -> dict | None:
    """{draws, seed, holds, holds_share, alternatives: [{purchase, share}], unproven_draws, reused_model,
    message}; None without a plan."""
    if not sol.feasible or (draws is not None and draws <= 0):
        return None
    return Verdict(problem, settings, draws, seed).verdict(sol)


class Verdict:
    """A robustness verdict ready to draw: `first_block()` are its first CHECK_EVERY draws as
    independent calls (assemble runs them beside the sensitivity re-solves, on two cores), and
    `verdict(sol, first)` their answers, in order, followed by the later blocks as needed.

    The draws need the candidates, not the plan: `begin()` starts the first block in a child
    process before the plan is solved (plan.plan, for problems of EARLY_COLUMNS candidate columns
    or more), and first_block() then holds only the draws the child had not begun."""

    def __init__(self, problem: Problem, settings: SolveSettings, draws: int | None = None, seed: int = SEED):
        """`draws`: how many joint draws (explain/draws.py) to plan for (None: the workload's
        decision.draws, 200 by default); the decision (explain/decision.py) reads the same ones."""
        self.problem, self.seed = problem, seed
        joint = shared_draws(problem, problem.workload.decision.draws if draws is None else draws, seed)
        draws = joint.n
        gids = list(joint.gpus)
        samples = [(*joint.maps(i), joint.rent_normals(i), joint.serve_map(i)) for i in range(draws)]
        fastest = {g: max(s[0][g] for s in samples) for g in gids}
        columns = sum(len(cs) for cs in problem.candidates)
        self.samples = samples[: draws_for(columns, draws)]
        self.block = min(CHECK_EVERY, len(self.samples))  # the first block: always drawn
        if columns >= EARLY_COLUMNS and (settings.time_limit is None or settings.time_limit > DRAW_TIME_LIMIT):
            settings = settings.but(time_limit=DRAW_TIME_LIMIT)
        speeds, serves = [s[0] for s in self.samples], [s[4] for s in self.samples]
        self.redraw = Redraw(problem, baseline(problem), fastest, settings, speeds, serves)
        self.names = {g: problem.catalog.gpus[g].name for g in gids}
        self.cpu, self.drawn = 0.0, 0  # CPU s and count of the draws made in this process
        self.known: dict[int, Answer | None] = {}  # draws answered (answers())
        self.early: parallel.Early | None = None
        self.begun: list[int] = []  # the first block's draws first_block() handed out

    @classmethod
    def begin(cls, problem: Problem, settings: SolveSettings) -> Verdict | None:
        """A verdict whose first block is drawing in a child process (solve/parallel.py) while the
        caller solves the plan; None when the problem is too small for that to pay (EARLY_COLUMNS
        candidate columns; any size when parallel is forced) or there is one core. close() stops
        the child when the verdict is not drawn after all."""
        if parallel.workers() < 2 or not (
            parallel.mode() == "on" or sum(map(len, problem.candidates)) >= EARLY_COLUMNS
        ):
            return None
        self = cls(problem, settings)
        if self.redraw.model is not None or parallel.mode() == "on":
            self.early = parallel.Early(self.draw, self.block, state=lambda: (self.cpu, self.drawn))
        return self

    def hold(self, sol: Solution) -> bool:
        """Draw each rented rate at the GPUs `sol` holds at once on its provider (gpu_count.held_counts), as
        its purchase rows grade it (Redraw.hold); True when that moved a band: the draws made at the old
        bands (an early start's, another plan's) are forgotten and drawn again."""
        if not self.redraw.hold(held_counts(self.problem, sol)):
            return False
        self.close()
        self.known.clear()
        return True

    def close(self) -> None:
        if self.early is not None:
            self.early.cancel()
            self.early = None

    def draw(self, i: int) -> Answer | None:
        """Draw i's plan, solved at the plan's own settings (without highspy a draw is a full solve)."""
        if i in self.known:
            return self.known[i]
        t = time.process_time()
        try:
            return self.redraw.choice(*self.samples[i])
        finally:
            self.cpu += time.process_time() - t
            self.drawn += 1

    def answers(self) -> list[Answer | None]:
        """Every planned draw's answer, in order (the p80/p90 decision reads their optima); each is
        drawn once, and verdict() reuses them."""
        if self.early is not None:
            self.first_block()
            self.known.update(enumerate(self._first([])))
        missing = [i for i in range(len(self.samples)) if i not in self.known]
        if missing:
            per = self.cpu / max(self.drawn, 1)
            got = parallel.run(lambda k: self.draw(missing[k]), len(missing), work_s=per * len(missing) or None)
            self.known.update(zip(missing, got))
        return [self.known[i] for i in range(len(self.samples))]

    def answered(self) -> list[Answer | None]:
        """The answers of the draws made so far (verdict() stops once settled), in order: what the
        value of information reads without drawing more (explain/value_of_information.py)."""
        return [self.known[i] for i in sorted(self.known)]

    def first_block(self) -> list[Callable[[], Answer | None]]:
        """The first block's draws that no process has begun, as calls (all of them without begin())."""
        self.begun = self.early.rest() if self.early is not None else list(range(self.block))
        return [functools.partial(self.draw, i) for i in self.begun]

    def _first(self, first: list) -> list:
        """The whole first block in order: `first` (the answers to first_block()'s calls), the
        early child's answers, and any the child did not give (it failed) drawn here."""
        got = dict(zip(self.begun, first))
        if self.early is not None:
            answers, state = self.early.done()
            self.early = None
            got.update(answers)
            if state is not None:
                self.cpu, self.drawn = self.cpu + state[0], self.drawn + state[1]
        return [got[i] if i in got else self.draw(i) for i in range(self.block)]

    def verdict(self, sol: Solution, first: list | None = None) -> dict:
        """The verdict on `sol` from draws 0, 1, ... (`first`: the answers to first_block())."""
        draws = len(self.samples)
        chosen = (pairs_of(sol), offers_of(sol))
        if self.hold(sol) and first is not None:
            first = []  # drawn at other bands
        if first is not None or self.early is not None:
            first = self._first(first or [])
        got_all, held = self._draw_until_settled(draws, chosen, first)
        timed_out = sum(1 for one in got_all if _timed_out(one))
        unproven = sum(1 for one in got_all if one is not None and not one[2]) - timed_out  # plans found, not proven
        other = Counter[str]()
        groups: dict[tuple[frozenset, str], list[Signature]] = {}  # an alternative's pairs and offers: its purchases
        for one in got_all:
            if _held(one, chosen):
                continue
            if one is None or _timed_out(one):
                other["no feasible plan" if one is None else TIMED_OUT] += 1
                continue
            groups.setdefault((one[0], _offers(one, chosen)), []).append(one[1])
        for (_, offers), sigs in groups.items():
            other[describe_group(sigs, self.names) + offers] += len(sigs)
        planned, draws = draws, len(got_all)
        ranked = sorted(other.items(), key=lambda kv: (-kv[1], kv[0]))
        alts: list[dict] = [{"purchase": k, "share": v / draws} for k, v in ranked]
        share = held / draws
        mine = describe(signature(self.problem, sol.bought, sol.assignment, sol.serving), self.names)
        msg = f"the choice ({mine}) holds in {share_of_draws(held, draws)} of {draws} draws of speed and price"
        if alts:
            msg += f"; otherwise {alts[0]['purchase']} ({share_of_draws(ranked[0][1], draws)})"
        msg += self._caveats(held, draws, planned, unproven, timed_out)
        return {
            "draws": draws,
            "seed": self.seed,
            "holds": held,
            "holds_share": share,
            "alternatives": alts[:5],
            "unproven_draws": unproven,
            "reused_model": self.redraw.model is not None,
            "message": msg,
        }

    def _draw_until_settled(
        self, draws: int, chosen: tuple[frozenset, frozenset], first: list | None
    ) -> tuple[list, int]:
        """(the draws' answers in index order, how many held `chosen`): blocks of CHECK_EVERY draws
        until all `draws` are drawn or the share that held is settled (so a clear verdict stops early)."""
        held = 0
        got_all: list = []
        with stage("robustness", total=draws):  # the CLI's progress line counts the draws
            while len(got_all) < draws:
                start = len(got_all)
                idx = list(range(start, min(draws, start + CHECK_EVERY)))
                got: list = []
                if start == 0 and first is not None:
                    got, idx = list(first), idx[len(first) :]
                elif not self.drawn:  # time one draw here: is the rest of the block worth a second process?
                    got, idx = [self.draw(idx[0])], idx[1:]
                # each draw is a fresh HiGHS run of the model with that draw's coefficients: a block's
                # draws over both cores (solve/parallel.py), merged in index order, as drawn serially
                per_draw = self.cpu / max(self.drawn, 1)
                got += parallel.run(lambda i: self.draw(idx[i]), len(idx), work_s=per_draw * len(idx))
                for one in got:
                    self.known.setdefault(len(got_all), one)
                    got_all.append(one)
                    held += _held(one, chosen)
                    step()
                n = len(got_all)
                if n < draws and settled(held, n):  # looked at every CHECK_EVERY draws
                    break
        return got_all, held

    def _caveats(self, held: int, draws: int, planned: int, unproven: int, timed_out: int) -> str:
        """What the verdict's message adds about its own draws: stopped early (with the share's 95%
        interval), plans not proven within the gap, draws with no plan in time."""
        msg = ""
        if draws < planned:
            lo, hi = wilson(held, draws)
            msg += f" (stopped at {draws} of {planned} draws: settled, 95% interval {100 * lo:.0f}-{100 * hi:.0f}%)"
        limit = "" if self.redraw.time_limit is None else f" {self.redraw.time_limit:g} s"
        if unproven:
            msg += (
                f"; {unproven} of {draws} draws stopped at the{limit} time limit, their plans not proven within the gap"
            )
        if timed_out:
            msg += f"; {timed_out} of {draws} draws found no plan within the{limit} time limit"
        return msg


def _held(one: Answer | None, chosen: tuple[frozenset, frozenset]) -> bool:
    """Does a draw's plan use the recommended (GPU, ownership) pairs on the recommended rental offers
    (`chosen`: both)? A draw with no plan does not."""
    return one is not None and not _timed_out(one) and (one[0], one[3]) == chosen


def _offers(one: Answer, chosen: tuple[frozenset, frozenset]) -> str:
    """' on PROVIDER' for a draw's plan on the recommended pairs: the offers that make it another plan."""
    return offers_apart(one[3], chosen[1]) if one[0] == chosen[0] else ""


def _timed_out(one: Answer | None) -> bool:
    """Did a draw's time limit come before any plan (solve/redraw.py TIMED_OUT)?"""
    return one is not None and one[1] == (TIMED_OUT,)


def plan_ranges(
    problem: Problem,
    sol: Solution,
    jobs: list[dict],
    *,
    robust: bool,
    settings: SolveSettings,
    verdict: dict | None = None,
) -> dict:
    """The range keys of a plan (docs/model.md §2.6; typed in advisor/contract/): each job's `wall_days_range` and `wall_days_planned`
    (added to `jobs` in place), `total_cost_usd_range`, the `confidence` deadlines were held at, and
    (robust=True) the `robustness` verdict (`verdict`, when already drawn). Existing keys are left
    as they are."""
    level = problem.workload.confidence
    out: dict = {
        "confidence": {
            "level": level,
            "quantile": f"P{round(100 * level)}",
            "message": f"every deadline holds at the P{round(100 * level)} job time "
            f"(workload confidence {level:g}; default 0.8)",
        }
    }
    if not sol.feasible:
        return out
    for job, extra in zip(jobs, job_ranges(problem, sol)):
        job.update(extra)
    out["total_cost_usd_range"] = cost_range(problem, sol)
    if robust:
        out["robustness"] = verdict if verdict is not None else robustness(problem, sol, settings)
    return out


def range_points(problem: Problem, settings: SolveSettings) -> list[dict]:
    """For the memo's cost-time chart with whiskers: per allowed GPU type, its cheapest plan using
    only that type, with P10/P50/P90 completion days and total cost."""
    out = []
    for gid in problem.considered:
        if gid in problem.rejected:
            continue
        s = solve(problem, baseline(problem).but(only_gpu=gid), settings)
        if not s.feasible:
            continue
        spans = job_ranges(problem, s)
        days = {k: max(r["wall_days_range"][k] for r in spans) for k in ("p10", "p50", "p90")}
        out.append({"gpu": gid, "days": days, "cost_usd": s.objective_usd, "cost_usd_range": cost_range(problem, s)})
    return out


def describe_group(sigs: Iterable[Signature], names: Mapping[str, str] | None = None) -> str:
    """'47-52x MI300X (rent)': purchases of the same (GPU, ownership) pairs, as a verdict counts a hold,
    with each pair's range of counts."""
    ranges: dict[tuple[str, str], list[int]] = {}
    for sig in sigs:
        for g, own, n in sig:
            ranges.setdefault((g, own), []).append(n)
    names = names or {}
    parts = []
    for (g, own), ns in sorted(ranges.items()):
        counts = str(min(ns)) if min(ns) == max(ns) else f"{min(ns)}\u2013{max(ns)}"
        parts.append(f"{counts}\u00d7 {names.get(g, g)} ({own})")
    return " + ".join(parts) or "nothing"
