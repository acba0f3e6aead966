"""Many re-solves of one model with only its coefficients changed: real speeds and prices drawn
from their distributions (the robustness verdict, explain/robustness.py).

The MILP is built once from the candidates that could meet their deadlines at the fastest speed
any draw gives (dominated ones dropped on cost *and* time, so a slower draw never needs one that
was dropped). Each draw then changes, in the HiGHS model itself, the objective and budget
coefficients (run cost / speed x rent factor, purchase price x buy factor), the capacity
coefficients (GPU-hours / speed) and the bounds of candidates that miss a deadline at this speed,
and runs HiGHS again: no PuLP model is rebuilt. Without highspy every draw is a full `solve`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from advisor.errors import NoPlanInTime, SolverError
from advisor.solve.constraints import bounds
from advisor.solve.constraints.capacity import speed_scaled
from advisor.solve.constraints.gpu_count import Held, copies_at_once, rented_counts
from advisor.solve.constraints.slots import serving_server_rows
from advisor.solve.draw_deadlines import DeadlineTest, deadline_array, meets_all
from advisor.solve.draw_rows import LazyRows, run_highs
from advisor.solve.draw_start import Starts, plan_of, slowest, tune
from advisor.solve.formulation import build_model
from advisor.solve.highs_model import HighsModel
from advisor.solve.milp import solve
from advisor.solve.model import TIE_BREAK_USD_PER_HOUR, Model
from advisor.solve.offer_columns import OfferColumns, PoolColumns, regraded
from advisor.solve.problem import Candidate, Problem, ServeCandidate
from advisor.solve.redraw_serving import Draw, set_serving
from advisor.solve.rental_offers import offers_of, pairs_of, rented_on
from advisor.solve.run import objective_adds_up, solver_for
from advisor.solve.scenario import Scenario
from advisor.solve.serving_bridge import BridgeDraw
from advisor.solve.settings import DEFAULT_GAP, SolveSettings
from advisor.solve.usable import at_speed, dominators, usable_candidates

if TYPE_CHECKING:
    import numpy as np

Signature = tuple[tuple[str, str, int], ...]  # a purchase: sorted (GPU, buy | rent, count)
Factors = Mapping[str, float]  # GPU id -> a draw's factor (or normal); 1 (0) when absent
# a draw's answer: (its (GPU, ownership) pairs, purchase signature, proven?, rental offers (GPU, provider))
Answer = tuple[frozenset, tuple, bool, frozenset]
TIMED_OUT = "no plan found within the time limit"  # a draw's purchase when its time limit came first


class Redraw:
    """`choice(speed, buy, rent)` -> the plan's (GPU, ownership) pairs, its purchase and whether it
    is proven within the gap (False: the time limit stopped the search at the best plan found; with
    none found, the purchase is (TIMED_OUT,)), or None when no plan meets the constraints under
    those factors (GPU id -> factor; 1 when absent)."""

    def __init__(
        self,
        problem: Problem,
        sc: Scenario,
        fastest: Mapping[str, float],
        settings: SolveSettings,
        draws: Sequence[Mapping[str, float]] | None = None,
        serves: Sequence[Mapping[str, float] | None] = (),
    ):
        self.problem, self.sc, self.settings = problem, sc, settings
        self.held: Held = {}  # the GPUs the plan judged holds at once per (GPU, provider): hold()
        self.time_limit = time_limit = settings.time_limit
        self.limits = [bounds(problem, sc, k) for k in range(len(problem.classes))]
        self.fastest = dict(fastest)
        # an offer drawn in another band keeps its own columns (gpu_count.draw_band): a draw can make it the cheaper
        self.cands = usable_candidates(problem, sc.but(speed_factor=self.fastest), faster_too=True, by_band=True)
        if draws is not None:  # the speeds of every draw to come are known: only their live columns
            self.cands = self._needed(draws)
        self.model: Model | None = None
        self.lazy: LazyRows | None = None
        if any(not cs for cs in self.cands):
            return
        gap = settings.gap_for(problem)  # the plan's own gap: 1% for fleets
        if solver_for(time_limit, gap)[0] != "highs":
            return  # fall back to full solves
        # the slowest replica rate any draw gives (its serving throughput, else its speed) sizes the serving bounds
        every = [*(draws or ()), *(d for d in serves if d is not None)]
        slowest = {g: min(1.0, *(d.get(g, 1.0) for d in every)) for g in self.fastest} if draws else None
        model = build_model(problem, sc, self.cands, redrawn=True, slowest=slowest, cuts=gap <= DEFAULT_GAP)
        hm = HighsModel(model, {}, 1.0)  # handed to HiGHS without a solve: each draw is a fresh run
        tune(hm.h, time_limit, gap, sc.gpu_upper is not None)
        self.model, self.h, self.hm = model, hm.h, hm
        self.lazy = LazyRows(hm.h, model, hm.row) if gap > DEFAULT_GAP else None  # (before _index reads rows)
        self._index()
        self.starts = self._starts(draws, serves, gap)

    def _index(self) -> None:
        m = self.model
        assert m is not None
        col, row = self.hm.col, self.hm.row
        self.ycol = {(k, i): col[m.y[k, i].name] for k, i, _ in m.pairs()}
        self.ncol = {g: col[v.name] for g, v in m.N.items()}
        self.rcol = {(k, i): col[m.r[k, i].name] for k, i, _ in m.serve_pairs()}
        # a serving class's row holds its replicas' rates, each counted at most at the peak (Model.counted_rate),
        # and with n+1 its spare row the same rate on the replica's use binary: a draw scales a GPU type's
        # rates by its speed in both, so a spare stays a spare; with the server cuts (Model.cuts) the rows on the
        # replicas' bound R (serve_uses, servers_k_i: constraints/slots.py) take the draw's bound, the least valid
        servers = {(k, i): (row[name], need) for name, k, i, need in serving_server_rows(m)}
        self.serve_rows = [
            (
                row[f"serve_{k}"],
                self.rcol[k, i],
                k,
                c,
                (row[f"serve_spare_{k}_{i}"], col[f"uses_{k}_{i}"], row[f"serve_uses_{k}_{i}"] if m.cuts else None)
                if f"serve_spare_{k}_{i}" in row
                else None,
                servers.get((k, i)),
            )
            for k, i, c in m.serve_pairs()
        ]
        self.bounds = {(k, i): (m.y[k, i].lowBound or 0, m.y[k, i].upBound) for k, i, _ in m.pairs()}
        self.obj_n = {g: m.prob.objective.get(v, 0.0) for g, v in m.N.items()}
        self.hcols = [(g, level, col[v.name], m.prob.objective.get(v, 0.0)) for (g, level), v in m.H.items()]
        self.idle_cols = {key: col[v.name] for key, v in m.idle.items()}  # serving GPUs billed beyond the replicas
        self.cap_rows = speed_scaled(m, row, col)  # (row, GPU, column, coefficient at the fastest speed)
        self.budget_row = None
        if "budget" in m.prob._constraints:
            self.budget_row, self.budget_index = m.prob._constraints["budget"], row["budget"]
        self.bridge = BridgeDraw(m, col, row, row.get("budget"))  # rented until bought serving GPUs arrive
        self.dominator = dominators(self.problem, m.cands, rented_counts(self.problem))
        self._columns()

    def _needed(self, draws: Sequence[Mapping[str, float]]) -> list[list[Candidate]]:
        """The candidates live in at least one draw (they meet their deadline at its speed and no
        candidate dominating them on cost does): the others are bounded to 0 in every draw. The live
        set of each draw is unchanged: a live candidate's dominators all miss its draw's deadline."""
        import numpy as np

        dominator = dominators(self.problem, self.cands, rented_counts(self.problem))
        gpus = sorted(self.fastest)
        at = {g: j for j, g in enumerate(gpus)}
        # per GPU type (a row) and draw (a column): the draw's speed relative to the fastest drawn
        rel = np.array([[d.get(g, 1.0) / self.fastest[g] for d in draws] for g in gpus]).reshape(len(gpus), len(draws))
        out = []
        for k, cs in enumerate(self.cands):
            if not cs:
                out.append(cs)
                continue
            which = np.array([at.get(c.gpu, -1) for c in cs])
            r = np.where(which[:, None] >= 0, rel[which] if len(gpus) else 1.0, 1.0)
            mine = deadline_array([self._deadline_test(k, c) for c in cs])
            doms = [dominator[id(c)] for c in cs]
            dom = deadline_array([None if o is None else self._deadline_test(k, o) for o in doms])
            has_dom = np.array([o is not None for o in doms], dtype=bool)[:, None]
            alive = meets_all(mine, r) & ~(has_dom & meets_all(dom, r))
            out.append([c for c, keep in zip(cs, alive.any(axis=1)) if keep])
        return out

    def choice(
        self, speed: Factors, buy: Factors, rent: Factors, rent_z: Factors | None = None, serve: Factors | None = None
    ) -> Answer | None:
        """(the (GPU, ownership) pairs used, the purchase's signature, proven?, its rental offers) of the plan at one
        draw's speed, buy and rent factors; None when no plan meets the constraints then. `rent_z`:
        the draw's rent normal per GPU type, each rented column then priced at its own offer's band
        (solve/offer_columns.py); without it (or without highspy) every offer of a type takes `rent`.
        `serve`: a replica's throughput factor per GPU type (None, or without highspy: `speed`)."""
        if self.model is None:
            return self._solved_choice(speed, buy, rent)
        self._set_draw(speed, buy, rent, rent_z, serve)
        return self._run_draw()

    def hold(self, held: Held) -> bool:
        """Draw each rented rate at the GPUs `held` at once per (GPU, provider) (gpu_count.held_counts of
        the plan judged), as the plan's rows grade it; True when a band moved: answers drawn before are stale."""
        old, self.held, m = self.held, dict(held), self.model
        if m is None or self.held == old:
            return False
        every = [c for *_, c in m.pairs()] + [c for *_, c in m.serve_pairs()] + [b for _, b, _ in m.bridge_terms()]
        if moved := regraded(every, old, self.held):
            self._columns()
        return moved

    def _solved_choice(
        self, speed: Mapping[str, float], buy: Mapping[str, float], rent: Mapping[str, float]
    ) -> Answer | None:
        """choice() by a full `solve` of the scenario: without highspy there is no model to redraw."""
        try:
            s = solve(self.problem, self.sc.but(speed_factor=speed, buy_factor=buy, rent_factor=rent), self.settings)
        except NoPlanInTime:
            return frozenset(), (TIMED_OUT,), False, frozenset()
        if not s.feasible:
            return None
        return (
            pairs_of(s),
            signature(self.problem, s.bought, s.assignment, s.serving),
            bool(s.solver.get("proven_optimal")),
            offers_of(s),
        )

    def _set_draw(
        self, speed: Factors, buy: Factors, rent: Factors, rent_z: Factors | None = None, serve: Factors | None = None
    ) -> None:
        """The HiGHS model's costs, bounds and coefficients at one draw's factors: run costs and
        capacities x 1 / relative speed (a commitment: what it bills at that speed), rents and
        purchases at their drawn prices, the budget row in its basis, and the columns a fresh build
        would drop bounded to 0."""
        import numpy as np

        h, m, p = self.h, self.model, self.problem
        assert m is not None
        rel = self.rel = {g: speed.get(g, 1.0) / self.fastest.get(g, 1.0) for g in self.fastest}
        # at this draw's speeds: candidates that meet their deadlines, less those another dominates on
        # cost (speed scales a GPU type's candidates alike, so dominance among them is unchanged)
        a = self.arrays
        gpus = self.gpu_names
        r = np.array([rel.get(g, 1.0) for g in gpus])[a["gpu"]]
        by_type = np.array([rent.get(g, 1.0) for g in gpus])[a["gpu"]]
        rate = np.where(a["rented"], a["rent_price"] * self.offers.rates(by_type, rent_z), 1.0)
        alive = meets_all(a["mine"], r) & ~(a["has_dom"] & meets_all(a["dom"], r))
        scale = self.offers.scale(r)  # 1 / r; a commitment bills its term at any speed that still fits in it
        inside = self.pools.live(h, r)  # the jobs in a pool at this speed: its nodes pay (PoolColumns)
        run = np.where(inside, 0.0, a["run_cost"] * scale * rate)
        highs = np.where(alive, a["hi"], 0.0)
        costs = run + TIE_BREAK_USD_PER_HOUR * a["hours"] / r
        if self.budget_row is not None:  # the budget's basis: present value, or cash
            budget = self.budget_index
            cash = np.where(inside, 0.0, a["run_cash"] * scale * rate)
            for col, x in zip(
                self.col_index.tolist(), (run if self.sc.budget_basis == "present_value" else cash).tolist()
            ):
                h.changeCoeff(budget, col, x)
        idx = self.col_index
        h.changeColsBounds(len(idx), idx, self.lows, highs)
        h.changeColsCost(len(idx), idx, costs)
        # a drawn purchase price moves what scales with it, as Model.per_price_usd says: the tax at purchase,
        # and per holding level the support less the resale (in cash, the support)
        more = {g: (p.unit_price[g] or 0.0) * self.sc.buy_price(g) * (buy.get(g, 1.0) - 1.0) for g in self.ncol}
        pv = {g: m.per_price_usd(g) for g in self.ncol}
        spent = {g: m.per_price_usd(g, self.sc.budget_basis) for g in self.ncol}
        for g, col in self.ncol.items():
            h.changeColCost(col, self.obj_n[g] + more[g] * pv[g][0])
            if self.budget_row is not None:
                h.changeCoeff(self.budget_index, col, self.budget_row.get(m.N[g], 0.0) + more[g] * spent[g][0])
        for g, level, col, base in self.hcols:
            h.changeColCost(col, base + more[g] * pv[g][1][level])
            if self.budget_row is not None:
                budget = self.budget_row.get(m.H[g, level], 0.0)
                h.changeCoeff(self.budget_index, col, budget + more[g] * spent[g][1][level])
        for row, g, col, coef in self.cap_rows:
            h.changeCoeff(row, col, coef * rel.get(g, 1.0))
        at = self.budget_index if self.budget_row is not None else None
        d = Draw(speed, rent, rent_z, serve, self.held)
        set_serving(h, m, p, self.serve_rows, self.idle_cols, d, at, self.sc.budget_basis)
        self.bridge.apply(h, d)
        self.pools.apply(h, (rent, rent_z), (at, self.sc.budget_basis) if at is not None else None)

    def _starts(
        self, draws: Sequence[Mapping[str, float]] | None, serves: Sequence[Mapping[str, float] | None], gap: float
    ) -> Starts:
        """The plans each draw's search may start from (_run_draw, solve/draw_start.py): the model's as
        built (every candidate open, at the fastest speeds and the prices' centres), and before it, at the
        few-jobs gap with the draws known, the plan at their slowest speeds."""
        plans = [x] if (x := plan_of(self.h)) is not None else []
        if draws and gap <= DEFAULT_GAP:
            speed, serve = slowest(sorted(self.fastest), draws, serves)
            self._set_draw(speed, {}, {}, None, serve)
            if (slow := plan_of(self.h)) is not None:
                plans.insert(0, slow)
        return Starts(self.h, plans)

    def _run_draw(self) -> Answer | None:
        """choice() of the model as _set_draw left it: a fresh HiGHS run, its plan read off the columns.
        The search is handed the start `Starts.pick` chose for the draw, which HiGHS keeps only where the draw leaves
        it feasible (it fixes the start's integers and solves for the rest): a draw proven within the
        gap is its optimum from any start (tests/test_draw_start.py, bench/warm_start.py)."""
        import highspy

        h, lazy = self.h, self.lazy

        def once() -> None:
            h.clearSolver()
            if (x := self.starts.pick(h)) is not None:
                start = highspy.HighsSolution()
                start.col_value, start.value_valid = x, True
                h.setSolution(start)
            run_highs(h)
            if h.getInfo().primal_solution_status == 2 and not objective_adds_up(h):
                h.clearSolver()  # a start taken for the answer without a search: search afresh
                run_highs(h)

        try:  # a fleet's draw: the pair rows its plan breaks added (solve/draw_rows.py), then taken out
            if lazy is None:
                once()
            elif not lazy.search(h, once):
                return frozenset(), (TIMED_OUT,), False, frozenset()  # its time spent, the last plan breaking a row
            return self._answer(h)
        finally:
            if lazy is not None:
                lazy.restore(h)

    def _answer(self, h: Any) -> Answer | None:
        """The answer of the draw HiGHS has just run (_run_draw)."""
        import highspy

        m = self.model
        assert m is not None
        status, S = h.getModelStatus(), highspy.HighsModelStatus
        if status in (S.kInfeasible, S.kUnboundedOrInfeasible):
            return None  # no plan under this draw's factors
        proven = status == S.kOptimal
        if not proven and h.getInfo().primal_solution_status != 2:  # (2: a feasible solution)
            if status != S.kTimeLimit:
                raise SolverError(f"the highs solver stopped without a plan ({h.modelStatusToString(status)})")
            return frozenset(), (TIMED_OUT,), False, frozenset()
        x = list(h.getSolution().col_value)
        at = lambda c: at_speed(c, self.rel.get(c.gpu, 1.0))  # noqa: E731 (copies in turn are counted at its speed)
        used = [(at(c), x[self.ycol[k, i]]) for k, i, c in m.pairs() if x[self.ycol[k, i]] > 1e-6]
        served = [(c, round(x[self.rcol[k, i]])) for k, i, c in m.serve_pairs() if x[self.rcol[k, i]] > 0.5]
        bought = {g: round(x[col]) for g, col in self.ncol.items() if round(x[col]) > 0}
        pairs = {(c.gpu, c.ownership) for c, _ in used} | {(c.gpu, c.ownership) for c, _ in served}
        return frozenset(pairs), signature(self.problem, bought, used, served), proven, rented_on(used + served)

    def _columns(self) -> None:
        """Per y column, what a draw needs, in pairs() order: (column, GPU, upper bound, run cost,
        hours, rental price factor or None when bought, own deadline test, dominator's test)."""
        import numpy as np

        m = self.model
        assert m is not None
        self.columns = []
        for k, i, c in m.pairs():
            dom = self.dominator[id(c)]
            self.columns.append(
                (
                    self.ycol[k, i],
                    c.gpu,
                    self.bounds[k, i][1],
                    c.run_cost_usd,
                    c.hours,
                    self.sc.run_price(c) if c.ownership == "rent" else None,
                    self._deadline_test(k, c),
                    None if dom is None else self._deadline_test(k, dom),
                )
            )
        self.col_index = np.array([col for col, *_ in self.columns], dtype=np.int32)
        self.lows = np.array([self.bounds[k, i][0] for k, i, _ in m.pairs()], dtype=float)
        self.gpu_names = sorted({col[1] for col in self.columns})
        at = {g: n for n, g in enumerate(self.gpu_names)}
        inf = float("inf")

        def tests(which: Literal[6, 7]) -> np.ndarray:
            return deadline_array([col[which] for col in self.columns])

        self.arrays = {
            "gpu": np.array([at[col[1]] for col in self.columns], dtype=np.int64),
            "hi": np.array([inf if col[2] is None else col[2] for col in self.columns], dtype=float),
            "run_cost": np.array([col[3] for col in self.columns], dtype=float),
            "run_cash": np.array(
                [c.run_cost_usd if c.run_cost_nominal is None else c.run_cost_nominal for _, _, c in m.pairs()],
                dtype=float,
            ),
            "hours": np.array([col[4] for col in self.columns], dtype=float),
            "rented": np.array([col[5] is not None for col in self.columns], dtype=bool),
            "rent_price": np.array([0.0 if col[5] is None else col[5] for col in self.columns], dtype=float),
            "mine": tests(6),
            "dom": tests(7),
            "has_dom": np.array([col[7] is not None for col in self.columns], dtype=bool),
        }
        self.offers = OfferColumns([c for _, _, c in m.pairs()], self.held)
        self.pools = PoolColumns(m, self.hm.col, self.hm.row, self.held)

    def _deadline_test(self, k: int, c: Candidate) -> DeadlineTest:
        """(planned hours, their bound, hours, the makespan cap; inf for none), the bounds less the
        candidate's start: what `meets_all` tests of class k's Bounds (the deadline family's)."""
        b = self.limits[k]
        start = c.start_hours * b.start_scale
        return (c.planned_hours, b.planned_hours - start, c.hours, b.hours - start)


def signature(
    problem: Problem,
    bought: Mapping[str, int],
    assignment: Iterable[tuple[Candidate, Any]],
    serving: Iterable[tuple[ServeCandidate, int]] = (),
) -> Signature:
    """A purchase as a sorted tuple of (GPU, ownership, count): GPUs bought, or rented at once (the
    training jobs' GPUs held at once, as the plan's purchase counts them: gpu_count.copies_at_once,
    plus every rented serving replica's GPUs)."""
    rented: dict[str, int] = {}
    for c, n in assignment:
        if c.ownership == "rent":
            rented[c.gpu] = rented.get(c.gpu, 0) + c.count * copies_at_once(problem, c, float(n))
    for s, n in serving:
        if s.ownership == "rent":
            rented[s.gpu] = rented.get(s.gpu, 0) + s.gpus * n
    return tuple(sorted([(g, "buy", n) for g, n in bought.items()] + [(g, "rent", n) for g, n in rented.items()]))


def describe(sig: Signature, names: Mapping[str, str] | None = None) -> str:
    """'8x H100 SXM (buy)' for a purchase signature."""
    names = names or {}
    return " + ".join(f"{n}\u00d7 {names.get(g, g)} ({own})" for g, own, n in sig) or "nothing"
