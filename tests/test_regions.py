"""deployment.region is an ISO 3166-1 alpha-2 code from the shipped list (advisor/inputs/iso3166_1.json):
an unknown code or look-alike letters are refused with a suggestion, never silently passed to rules
that would then not match (issue 20)."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT

from advisor.errors import InputError
from advisor.inputs.regions import EXPORT_GROUPS, codes
from advisor.inputs.workload import parse_workload


def region(value):
    return parse_workload(
        {"deployment": {"context": "office", "region": value}, "model": "gpt2-124m", "tokens": "1B"}
    ).deployment.region


def test_the_shipped_list_is_iso_3166_1():
    known = codes()
    assert len(known) == 249  # ISO 3166-1 assigns 249 alpha-2 codes
    assert known["US"] == "United States" and known["CN"] == "China" and "ZZ" not in known
    assert all(len(c) == 2 and c.isascii() and c.isupper() for c in known)


def test_the_export_groups_named_in_errors_are_the_region_lists_of_the_export_rules():
    lists = yaml.safe_load((ROOT / "rules" / "export.yaml").read_text(encoding="utf-8"))["lists"]
    region_lists = {k for k, v in lists.items() if all(isinstance(x, str) and x.isupper() and len(x) == 2 for x in v)}
    assert set(EXPORT_GROUPS) == region_lists
    for name in region_lists:
        assert set(lists[name]) <= set(codes()), name


@pytest.mark.parametrize("given, expected", [("US", "US"), ("us", "US"), (" de ", "DE"), ("MO", "MO")])
def test_codes_are_accepted_in_any_case(given, expected):
    assert region(given) == expected


@pytest.mark.parametrize(
    "given, says",
    [
        ("ZZ", "'ZZ' is not a two-letter ISO 3166-1 (alpha-2) country code"),
        ("USA", "did you mean US?"),
        ("\u0423\u0405", "U+0423 CYRILLIC CAPITAL LETTER U"),  # Cyrillic У and Ѕ: looks like US
        ("\u0423\u0405", "did you mean US, United States?"),
        ("\uff35\uff33", "FULLWIDTH LATIN CAPITAL LETTER U"),
        ("EU", "country_group_d1"),  # the groups are named, and are not regions
        (12, "two-letter ISO 3166-1 country code"),
    ],
)
def test_unknown_codes_and_look_alikes_are_refused_with_a_suggestion(given, says):
    with pytest.raises(InputError) as exc:
        region(given)
    assert "deployment.region" in str(exc.value) and says in str(exc.value)
