"""The output contract: a plan as typed pydantic models (stable: keys are added, never renamed), printed as the JSON of
`advisor plan --format json` and described by `advisor schema --output plan`. Types only: it
imports no layer that computes, so present/ may read them too."""

from advisor.contract.plan import Plan, plan_schema

__all__ = ["Plan", "plan_schema"]
