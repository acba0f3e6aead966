"""`advisor compare` and `advisor crossover`: the article's table for any model, and where the 4090 stops winning."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from conftest import AS_OF

ARTICLE = ["rtx-4090", "a100-80gb-sxm", "h100-sxm"]


def test_compare_json_rows_carry_the_contract_and_the_articles_claims(run_json):
    code, r = run_json("compare", *ARTICLE, "--model", "gpt2-124m", "--as-of", AS_OF)
    assert code == 0
    rows = {row["gpu"]: row for row in r["rows"]}
    for row in rows.values():
        assert {"gpu", "price_usd", "tokens_per_s", "tokens_per_s_per_1k_usd", "price_ratio", "speed_ratio"} <= set(row)
    assert [rows[g]["article"]["tokens_per_s"] for g in ARTICLE] == [153000, 195000, 481000]
    # both accumulate modes for GeForce: 165.2 for bf16 training, 330.3 with FP16 accumulate
    assert rows["rtx-4090"]["dense_tflops"] == pytest.approx(165.2)
    assert rows["rtx-4090"]["fp16_fp16acc_tflops"] == pytest.approx(330.3)
    assert rows["rtx-4090"]["price_ratio"] == 1.0 and rows["rtx-4090"]["speed_ratio"] == 1.0
    # the article's conclusion holds per dollar: the 4090 gives the most tokens/s per $1,000
    assert rows["rtx-4090"]["tokens_per_s_per_1k_usd"] > rows["h100-sxm"]["tokens_per_s_per_1k_usd"]


def test_compare_with_no_gpu_named_sets_the_articles_three_side_by_side(run):
    """Issue 31 quotes `advisor compare --model gpt2-124m`: it stopped at "Missing argument 'GPUS...'".
    With no GPU named it compares the article's three, in its order: the same table, byte for byte, as
    naming them."""
    code, out, err = run("compare", "--model", "gpt2-124m", "--as-of", AS_OF)
    assert code == 0 and not err, err
    assert out == run("compare", *ARTICLE, "--model", "gpt2-124m", "--as-of", AS_OF)[1]
    assert [line.split()[0] for line in out.splitlines()[3:6]] == ARTICLE


def test_a_used_price_is_said_to_be_used_beside_new_ones(run, run_json, catalog):
    """The A100 80GB SXM4's catalog price is a used board's ($9,000, no NVIDIA warranty): `compare` set
    it beside a new RTX 4090 and H100 as "$9,000", "22.9K tokens/s per $1k", "price x 4.50x", and the
    article's $20,000 (new), with no word that it is used."""
    as_of = dt.date.fromisoformat(str(AS_OF))
    condition = {g: catalog.at(as_of).gpus[g].prices.purchase.condition for g in ARTICLE}
    assert condition == {"rtx-4090": "new", "a100-80gb-sxm": "used", "h100-sxm": "new"}
    _, r = run_json("compare", *ARTICLE, "--as-of", AS_OF, "--price", "h100-sxm=25000")
    assert [row["price_condition"] for row in r["rows"]] == ["new", "used", None]  # a --price: as quoted
    code, out, _ = run("compare", *ARTICLE, "--as-of", AS_OF)
    rows = {line.split()[0]: line for line in out.splitlines()[3:6]}
    assert "$9,000 used " in rows["a100-80gb-sxm"] and "used" not in rows["rtx-4090"] + rows["h100-sxm"], out


def test_price_override_changes_the_ratio(run_json, catalog):
    _, base = run_json("compare", "rtx-4090", "h100-sxm", "--as-of", AS_OF)
    _, quoted = run_json("compare", "rtx-4090", "h100-sxm", "--price", "rtx-4090=1749", "--as-of", AS_OF)
    b, q = base["rows"][1]["price_ratio"], quoted["rows"][1]["price_ratio"]
    catalog_price = catalog.at(dt.date.fromisoformat(str(AS_OF))).gpus["rtx-4090"].purchase_usd
    assert q == pytest.approx(b * catalog_price / 1749)
    assert quoted["rows"][0]["price_source"] == "--price"


def test_deployment_shows_the_licence_rule(run_json):
    _, r = run_json("compare", *ARTICLE, "--deployment", "datacenter", "--as-of", AS_OF)
    assert [f["rule"] for f in r["rows"][0]["rules"]] == ["LIC001"]


def test_a_price_given_twice_for_one_gpu_is_refused(run):
    """`--price rtx-4090=5 --price rtx-4090=6` compared at $6 without a word: a duplicate key, as in a
    workload file, is refused naming both."""
    code, _, err = run("compare", "rtx-4090", "--price", "rtx-4090=5", "--price", "rtx-4090=6")
    assert code == 2 and "rtx-4090 is priced twice" in err and "'rtx-4090=5'" in err, err


def test_bad_price_flag_exits_2(run):
    code, _, err = run("compare", "rtx-4090", "--price", "rtx-4090=cheap")
    assert code == 2 and "GPU=USD" in err


def test_markdown_table(run):
    code, out, _ = run("compare", *ARTICLE, "--format", "markdown", "--as-of", AS_OF)
    assert code == 0 and out.startswith("gpt2-124m") and "| rtx-4090 |" in out


def test_crossover_names_the_model_and_the_factor(crossover_json):
    x = json.loads(crossover_json)  # `advisor crossover --as-of AS_OF`: exit 0, the defaults below
    assert x["tokens"] == "10B" and x["max_gpus"] == 8
    points = {p["model"]: p for p in x["points"]}
    assert points["gpt2-124m"]["cheapest"] == "rtx-4090"
    crossed = points[x["crossover_model"]]
    assert crossed["cheapest"] != "rtx-4090"
    assert crossed["params"] > points["gpt2-124m"]["params"]
    assert crossed["factor"] in {
        "memory_size",
        "slots",
        "power",
        "licence",
        "memory_bandwidth",
        "interconnect",
        "compute",
    }
    assert crossed["rtx-4090_min_gpus"] > 1  # in an office it stops winning once one card cannot hold the model
    # the largest models cannot fit on eight 24 GB cards at all
    assert points["llama-3-70b"]["factor"] == "memory_size"


def test_crossover_factor_is_the_plans_own_reason(run_json, write):
    """mpt-3b needs three 4090s; with the workstation they draw more than the office's 1.44 kW
    (PWR001): the crossover says power, as `advisor plan` on the same job does."""
    _, x = run_json("crossover", "--model", "mpt-3b", "--as-of", AS_OF)
    row = x["points"][0]
    assert row["factor"] == "power" and row["rtx-4090_min_gpus"] == 3
    path = write(
        "deployment: {context: office, ownership: buy}\nmodel: mpt-3b\ntokens: 10B\ngpus: {allow: [rtx-4090], max: 8}\n"
    )
    code, plan = run_json("plan", path, "--as-of", AS_OF)
    assert code == 3
    assert any(d["constraint"] == "power" and d["kind"] == "lever" for d in plan["diagnosis"])
    # three cards (450 W each) and the workstation exceed 1.44 kW; two cards do not
    assert plan["rejected"][0]["reasons"][0]["code"] == "no-plan"


def test_crossover_chart_is_an_svg_and_reproducible(run, tmp_path):
    # three models, across the crossover: reproducibility does not depend on the sweep's length
    models = ("--model", "gpt2-124m", "--model", "gpt2-774m", "--model", "mpt-3b")
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    assert run("crossover", *models, "--chart", a, "--as-of", AS_OF)[0] == 0
    assert run("crossover", *models, "--chart", b, "--as-of", AS_OF)[0] == 0
    text = a.read_text()
    assert text.startswith("<?xml") and "<svg" in text and a.read_bytes() == b.read_bytes()
    # the cost axis in dollars: $4.6K, or $4,635 where the costs differ by less than $4.6K and $4.7K can tell
    assert re.search(r">\$[0-9][0-9.,]*K?</text>", text) and not re.search(r"×10|e\+0", text)


def _labels(svg: str) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_crossover_chart_axes_read_in_dollars_and_parameters_never_powers_of_ten():
    """Issue 18: costs from $4,632 to $6,649 span less than a decade, where matplotlib's default
    labels read '5×10³' (or raw TeX, with mathtext off). The axes say $5K, $6K and 200M, 1B."""
    from advisor.present.charts import crossover_svg

    def point(model, params, cost, factor=None):
        return {
            "model": model,
            "params": params,
            "cheapest": "rtx-4090" if cost else None,
            "total_cost_usd": cost,
            "focus_cost_usd": cost,
            "rtx-4090_min_gpus": 1,
            "factor": factor,
            "factor_text": f"{factor}: why" if factor else None,
        }

    x = {
        "tokens": "10B",
        "max_gpus": 8,
        "deployment": "office",
        "focus": "rtx-4090",
        "crossover_model": "m3",
        "points": [point("m1", 124e6, 4632.17), point("m2", 1.56e9, 6649.0), point("m3", 2.65e9, None, "power")],
    }
    labels = _labels(crossover_svg(x))
    assert {"$5K", "$6K", "1B"} <= set(labels) and any(re.fullmatch(r"[0-9]+M", t) for t in labels)
    assert not [t for t in labels if "×10" in t or "\\times" in t or "mathdefault" in t or "e+0" in t]
    assert "total cost, present value" in labels  # review29b: the axis read "total cost" for a present value


@pytest.mark.parametrize(
    "args,flag",
    [
        (("compare", "rtx-4090", "--params", "1e400"), "--params"),
        (("compare", "rtx-4090", "--model", "gpt2-12m"), "--model"),
        (("crossover", "--tokens", "lots"), "--tokens"),
        (("crossover", "--deadline", "5"), "--deadline"),
        (("crossover", "--model", "gpt2-12m"), "--model"),
        (("crossover", "--gpu", "h100-sx"), "h100-sxm"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(run, args, flag):
    code, out, err = run(*args)
    assert code == 2 and flag in err and "Traceback" not in out + err and "internal error" not in err


@pytest.mark.parametrize(
    "call,args,parameter,flag",
    [
        ("compare", {"gpus": ["rtx-4090"], "prices": {"h100-sxm": 20000}}, "prices", "--price"),
        ("crossover", {"tokens": "lots"}, "tokens", "--tokens"),
        ("crossover", {"deadline": "5"}, "deadline", "--deadline"),
        ("crossover", {"focus": "b200"}, "focus", "--focus"),
    ],
)
def test_library_errors_name_the_parameter_and_the_cli_its_flag(run, call, args, parameter, flag):
    """advisor.compare and advisor.crossover are called with Python arguments: their errors name them
    (`prices`), never a flag; the CLI shows the same mistake with the flag the user typed (--price), exit 2."""
    import advisor
    from advisor.errors import InputError

    with pytest.raises(InputError) as caught:
        getattr(advisor, call)(**args)
    assert f"`{parameter}`" in str(caught.value) and "--" not in str(caught.value)
    argv = [call, *args.get("gpus", [])]
    for name, value in args.items():
        if name == "prices":
            argv += [flag, *(f"{g}={usd}" for g, usd in value.items())]
        elif name != "gpus":
            argv += [flag, value]
    code, out, err = run(*argv)
    assert code == 2 and err.startswith(f"error: {flag}") and f"`{parameter}`" not in err and out == ""


def test_a_price_is_written_as_a_workload_writes_one_and_the_model_defaults_in_the_library(run, catalog):
    """--price takes the amounts a workload takes (1.7K, $1,700); the default model (the article's GPT-2
    124M) is the library's, so advisor.compare answers without one as the CLI does."""
    import json

    import advisor

    code, out, err = run("compare", "rtx-4090", "--price", "rtx-4090=1.7K", "--format", "json")
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    assert row["price_usd"] == 1700
    code, _, err = run("compare", "rtx-4090", "--price", "rtx-4090=$1,700", "--format", "json")
    assert code == 0, err
    for bad in ("rtx-4090=cheap", "rtx-4090=0", "rtx-4090", "=1700"):
        code, _, err = run("compare", "rtx-4090", "--price", bad)
        assert code == 2 and "write GPU=USD" in err, (bad, err)
    result = advisor.compare(["rtx-4090"], catalog=catalog)
    assert result["model"]["name"] == "gpt2-124m"
