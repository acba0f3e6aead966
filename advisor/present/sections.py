"""The parts of a plan `advisor plan --section NAME` prints, in the order the full plan prints
them ("summary" is the default one-screen view). Names only, so that the CLI lists them in its
help without importing what renders them (present/plan_sections.py)."""

NAMES = (
    "summary",
    "buy",
    "costs",
    "jobs",
    "serving",
    "constraints",
    "sensitivity",
    "robustness",
    "decision",
    "not-chosen",
    "diagnosis",
    "warnings",
    "sources",
)
