"""The suite's own sharing under pytest-xdist (`-n 2 --dist loadgroup`, tests/conftest.py): if it
silently stopped working, both workers would compute the shared inputs and the fast subset would
take a third longer without any test failing."""

from __future__ import annotations

import pytest


def test_a_test_reading_a_grouped_fixture_carries_its_group(request, crossover_json):
    """pytest-xdist schedules a group by the `@group` ending of the node id (pytest 9.2 with
    pytest-xdist 3.8 dropped it silently: pytest-xdist issue #1386)."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run under pytest-xdist with --dist loadgroup")
    assert request.node.nodeid.endswith("@crossover_json")


def test_the_example_plans_are_shared_between_the_workers(example_plan, shared_folder):
    if shared_folder is None:
        pytest.skip("not run under pytest-xdist: one process plans each example once")
    code, plan = example_plan("article-office")
    assert code == 0 and (shared_folder / "plan-article-office.json").is_file()
