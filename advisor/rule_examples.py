"""A rule's runnable example, run: its workload planned with the rules it belongs to (or its rule
context evaluated), and what the example says it shows checked -- the GPUs the rule rejects or
warns about, the limit it sets, whether it fires. `advisor rules validate` runs the examples of an
organisation's files (the built-in rules' examples are run by tests/test_rules.py), so an example
that no longer shows its rule is a mistake found before anyone reads it as documentation."""

from __future__ import annotations

import datetime as dt

from advisor.data.catalog import Catalog
from advisor.data.rule_models import Rule, RuleExample
from advisor.data.rules import RuleSet, deployment_context, gpu_context
from advisor.errors import InputError


def _context_findings(rule: Rule, example: RuleExample, catalog: Catalog, rules: RuleSet, as_of: dt.date) -> list[str]:
    from advisor.inputs.deployment import Deployment

    ctx = dict(example.context or {})
    gpu_part = ctx.get("gpu") or {}
    gid = gpu_part.get("id") if isinstance(gpu_part, dict) else None
    if gid not in catalog.gpus:
        return [f"its context names gpu.id {gid!r}, which is not in the catalog"]
    gpu = dict(gpu_context(catalog.gpus[gid]), **gpu_part)
    dep = deployment_context(Deployment(**(ctx.get("deployment") or {})))
    context = {
        "gpu": gpu,
        "deployment": dep,
        "offer": {"ownership": "buy", "site": dep["context"]},
        "job": {"kind": "pretrain", "precision": "bf16", "params": 1e9, **(ctx.get("job") or {})},
    }
    fired = rule.id in {f.rule for f in rules.evaluate(context, as_of)}
    if example.expect.fires is not None and fired is not example.expect.fires:
        return [
            f"its context should {'' if example.expect.fires else 'not '}make the rule fire, and it does"
            f"{'' if fired else ' not'}"
        ]
    return []


def _workload_findings(rule: Rule, example: RuleExample, catalog: Catalog, rules: RuleSet, as_of: dt.date) -> list[str]:
    from advisor.flow import plan
    from advisor.inputs.workload import parse_workload

    p = plan(
        parse_workload(dict(example.workload or {}, name=f"{rule.id} example"), f"rule {rule.id} example"),
        catalog=catalog,
        rules=rules,
        as_of=as_of,
        explain=False,
    )
    cited = {r["gpu"]: {x.get("rule") for x in r["reasons"]} for r in p["rejected"]}
    planned = {j["gpu"] for j in p["jobs"]}
    warned = {w.get("rule") for w in p["warnings"]}
    out = [
        f"should reject {gid}, and the plan does not cite the rule for it"
        for gid in example.expect.rejects
        if rule.id not in cited.get(gid, set())
    ]
    out += [
        f"should warn about {gid}, and the plan carries no such warning"
        for gid in example.expect.warns
        if rule.id not in (warned if gid in planned else cited.get(gid, set()))
    ]
    if example.expect.limits and p["assumptions"].get("power_limit_rule") != rule.id:
        out.append("should set the deployment's power limit, and the plan's limit comes from elsewhere")
    return out


def example_mistakes(rule: Rule, catalog: Catalog, rules: RuleSet, as_of: dt.date) -> list[str]:
    """What `rule`'s runnable example does not show that it says it shows (empty: it shows it, or
    the example is a sentence, not a runnable one)."""
    example = rule.example
    if not isinstance(example, RuleExample):
        return []
    try:
        if example.context is not None:
            return _context_findings(rule, example, catalog, rules, as_of)
        return _workload_findings(rule, example, catalog, rules, as_of)
    except InputError as exc:
        return [f"its {'context' if example.context is not None else 'workload'} is not valid: {exc}"]


def check_examples(rules: RuleSet, files: list[str], catalog: Catalog, as_of: dt.date) -> list[str]:
    """Run the runnable examples of the rules that come from `files`; raise InputError (every mistake,
    each naming its file and rule) if any does not show its rule. Returns the rule ids checked."""
    mistakes: list[InputError] = []
    checked: list[str] = []
    for rule in rules.rules:
        origin = rules.origin.get(rule.id)
        if origin is None or origin not in files:
            continue
        checked.append(rule.id)
        for mistake in example_mistakes(rule, catalog, rules, as_of):
            mistakes.append(
                InputError(
                    f"{origin}: rule {rule.id}: its example {mistake}", file=origin, field=f"rules[{rule.id}].example"
                )
            )
    if mistakes:
        raise InputError.many(mistakes)
    return checked


__all__ = ["check_examples", "example_mistakes"]
