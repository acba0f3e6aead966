"""`advisor validate` makes every check `advisor plan` makes before it solves, and `advisor rules
validate` runs each rule's runnable example (issue 33: validate missed mistakes the plan caught)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import AS_OF, EXAMPLES, ROOT

MALFORMED = sorted((ROOT / "tests" / "malformed").glob("*.yaml"))


def _args(path: Path) -> list:
    kind = path.name.split("-")[0]
    return {
        "wl": [path],
        "cat": [EXAMPLES / "article-office.yaml", "--catalog", path],
        "rules": [EXAMPLES / "article-office.yaml", "--rules", path],
    }[kind]


@pytest.mark.parametrize("path", MALFORMED, ids=lambda p: p.name)
def test_validate_refuses_what_plan_refuses_with_the_same_words(path, run):
    code, _, plan_err = run("plan", *_args(path), "--as-of", AS_OF, "--format", "json")
    assert code == 2
    code, out, err = run("validate", *_args(path), "--as-of", AS_OF)
    assert (code, out) == (2, "") and err == plan_err


def test_validate_takes_the_plans_date(run):
    code, out, err = run("validate", EXAMPLES / "article-office.yaml", "--as-of", AS_OF)
    assert code == 0 and out.startswith(f"{EXAMPLES / 'article-office.yaml'}: valid (1 job, office"), err
    code, _, err = run("validate", EXAMPLES / "article-office.yaml", "--as-of", "yesterday")
    assert code == 2 and "--as-of" in err


RULE = """schema_version: 1
rules:
  - id: ORG009
    name: no-amd
    title: No AMD accelerators
    severity: forbid
    when: {{field: gpu.vendor, equals: AMD}}
    message: "{{gpu.name}} is an AMD part"
    why: our stack runs on CUDA only
    example:
      text: "gpus.allow: [mi300x, h100-sxm] -> mi300x rejected by ORG009"
      workload: {{deployment: datacenter, model: gpt2-124m, tokens: 1B, gpus: {{allow: [mi300x, h100-sxm]}}}}
      expect: {{rejects: [{rejects}]}}
    source: {{title: policy, url: "https://example.org/policy"}}
"""


def test_rules_validate_runs_each_example(run, write):
    good = write(RULE.format(rejects="mi300x"), "good.yaml")
    code, out, err = run("rules", "validate", good, "--as-of", AS_OF)
    assert code == 0 and "1 rule (ORG009)" in out, err
    wrong = write(RULE.format(rejects="h100-sxm"), "wrong.yaml")  # the example claims what the rule never does
    code, out, err = run("rules", "validate", wrong, "--as-of", AS_OF)
    assert code == 2 and out == ""
    assert f"{wrong}: rule ORG009: its example should reject h100-sxm" in err


def test_the_shipped_example_rules_validate(run):
    files = sorted((EXAMPLES / "rules").glob("*.yaml"))
    code, out, err = run("rules", "validate", *files, "--as-of", AS_OF)
    assert code == 0, err
