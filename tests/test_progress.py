"""The progress line (issue 18 item 5, issue 20 item 2): one mechanism. The solve's hook
(solve/run.py: STATUS, stage, step, progress) says what a long plan is doing; the CLI's spinner
(cli/base.working) draws it on stderr, on a terminal only."""

from __future__ import annotations

import io
import time

from conftest import AS_OF, EXAMPLES

from advisor.cli.base import working
from advisor.solve.run import STATUS, count_solve, progress, stage, step


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_status_line_names_the_stage_the_step_the_best_cost_and_the_gap():
    lines: list[str] = []
    with progress(lines.append, after=60):  # resets the best cost; no line in this short block
        with stage("solving"):
            assert STATUS.line(3.2) == "solving: building the options, 3 s"
            count_solve(1_234_567.0, 0.004)
            count_solve(2_000_000.0, 0.0)  # a dearer solve does not replace the best
            assert STATUS.line(12) == "solving: solve 2, best $1.23M, gap 0.4%, 12 s"
        with stage("explaining"):
            count_solve(900_000.0, 0.01, explaining=True)  # an explanation prices another choice
            assert STATUS.line(14) == "explaining: re-solve 1, best $1.23M, gap 0.4%, 14 s"
            with stage("robustness", total=200):
                for _ in range(12):
                    step()
                count_solve(5_000.0, 0.0)  # a draw's fallback solve: drawn prices, not the plan's
                assert STATUS.line(20) == "robustness: draw 12/200, best $1.23M, gap 0.4%, 20 s"
            assert STATUS.line(21).startswith("explaining: re-solve 1, ")  # the outer stage comes back
    assert lines == []


def test_a_terminal_gets_a_redrawn_line_that_is_cleared_at_the_end():
    tty = Terminal()
    with working("solving", stream=tty, after=0.01, every=0.01):
        count_solve(50_000.0, 0.0)
        time.sleep(0.2)
    text = tty.getvalue()
    assert text.startswith("\r| solving: ") and "best $50K, gap 0%" in text
    frames = text.split("\r")[1:-2]
    assert len(frames) >= 2 and all(f[0] in "|/-\\" for f in frames)
    assert text.endswith("\r" + " " * max(len(f) for f in frames) + "\r")  # nothing left on the line
    assert "\n" not in text


def test_nothing_is_written_when_stderr_is_not_a_terminal():
    pipe = io.StringIO()
    with working("solving", stream=pipe, after=0.0, every=0.01):
        count_solve(50_000.0, 0.0)
        time.sleep(0.1)
    assert pipe.getvalue() == ""


def test_a_real_plan_reports_its_stages_and_its_own_cost(catalog, rules):
    from advisor.flow import plan
    from advisor.inputs.workload import load_workload
    from advisor.solve.run import _money

    tty = Terminal()
    with working("solving", stream=tty, after=0.0, every=0.002):
        p = plan(load_workload(EXAMPLES / "article-office.yaml"), catalog=catalog, rules=rules, as_of=AS_OF)
    frames = tty.getvalue().split("\r")
    assert any(f[2:].startswith("solving: ") for f in frames if f)
    late = [f for f in frames if f[2:].startswith(("explaining: ", "robustness: "))]
    assert late and all(f"best {_money(p['total_cost_usd'])}, " in f for f in late)


def test_a_plan_chosen_over_the_least_cost_reports_its_own_cost(tmp_path, rules):
    """The decision (explain/decision.py) buys four RTX 6000 Ada on expected cost although four RTX A6000
    cost less at the catalog's figures (tests/test_decision.py's BAND premise), and its re-solves price
    plans at the draws' mean prices: the line's best, once the plan is chosen, is the printed plan's
    cost, never the cheaper point plan's nor a cost at other prices."""
    import yaml
    from test_decision import BAND, BAND_JOB

    from advisor.data.catalog import load_catalog
    from advisor.flow import plan
    from advisor.inputs.workload import parse_workload
    from advisor.solve.run import _money

    path = tmp_path / "band.yaml"
    path.write_text(yaml.safe_dump(BAND))
    tty = Terminal()
    with working("solving", stream=tty, after=0.0, every=0.002):
        p = plan(parse_workload(BAND_JOB), catalog=load_catalog(path), rules=rules, as_of=AS_OF)
    assert p["purchase"][0]["gpu"] == "rtx-6000-ada"  # $21.2K; the point plan's four RTX A6000: $18K
    frames = tty.getvalue().split("\r")
    late = [f for f in frames if f[2:].startswith(("explaining: ", "robustness: "))]
    assert late and all(f"best {_money(p['total_cost_usd'])}, " in f for f in late)
