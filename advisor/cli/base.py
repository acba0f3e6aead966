"""What every command shares: the group, option decorators (declared once, put only on the
commands that use them), the mapping of failures to exit codes, one emit() for every format, the
progress line, and checks made before any work (output folder, optional dependencies).

Exit codes (docs/cli.md): 0 success, 2 invalid input, 3 no feasible plan, 1 anything else.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import gc
import importlib
import json
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, TypeVar

import click

from advisor.inputs.arguments import HIDDEN, LAYERS, SEQ_LEN, TIME_LIMIT_S, VOCAB

if TYPE_CHECKING:
    from advisor.data.catalog import Catalog
    from advisor.data.rules import RuleSet

T = TypeVar("T")
FC = TypeVar("FC", bound=Callable[..., Any])  # a command function an option decorates


def _as_of(ctx: click.Context, param: click.Parameter, value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date; write YYYY-MM-DD") from None


date_callback = _as_of


def _seconds(ctx: click.Context, param: click.Parameter, value: float) -> float:
    if value != value or value == float("inf"):  # click's range lets NaN and infinity through
        raise click.BadParameter(f"{value} is not a number of seconds; give e.g. 30")
    return value


def complete_gpus(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of GPU ids from the built-in catalog."""
    from advisor.data.catalog import load_catalog

    return [g for g in sorted(load_catalog().gpus) if g.startswith(incomplete)]


def complete_presets(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    from advisor.data.catalog import load_catalog

    return [m for m in sorted(load_catalog().models) if m.startswith(incomplete)]


catalog_option = click.option(
    "--catalog",
    "catalog_file",
    type=click.Path(),
    default=None,
    help="YAML file merged over the built-in catalog (a negotiated price, a GPU we lack).",
)
rules_option = click.option(
    "--rules",
    "rules_files",
    type=click.Path(),
    multiple=True,
    help="YAML rules file added to the built-in rules (repeatable).",
)
as_of_option = click.option(
    "--as-of",
    callback=_as_of,
    default=None,
    metavar="YYYY-MM-DD",
    help="Evaluate rules and price ages as of this date [today].",
)
time_limit_option = click.option(
    "--time-limit",
    type=click.FloatRange(*TIME_LIMIT_S),
    default=30.0,
    show_default=True,
    callback=_seconds,
    help="Seconds the solver may spend on each solve (0.1 to 86400).",
)
workload_argument = click.argument("workload_file", type=click.Path(dir_okay=False, allow_dash=True))


def shape_options(command: FC) -> FC:
    """The model-shape options `estimate` and `compare` share (with --params instead of a preset)."""
    sized = (
        ("--layers", LAYERS, "Layers with --params [inferred from params]."),
        ("--hidden", HIDDEN, "Hidden size with --params [inferred]."),
        ("--seq-len", SEQ_LEN, "Sequence length in tokens [the preset's; 2048 with --params]."),
        ("--vocab", VOCAB, "Vocabulary size with --params [50257]."),
    )
    tied = click.option(
        "--tied-embeddings/--untied-embeddings",
        "tied_embeddings",
        default=None,
        help="Output head shares the input embedding, with --params [inferred from params, layers, hidden].",
    )
    command = tied(command)
    for name, bounds, text in reversed(sized):
        command = click.option(name, type=click.IntRange(*bounds), default=None, help=text)(command)
    return command


def format_option(*choices: str, default: str = "table") -> Callable[[FC], FC]:
    return click.option(
        "--format", "fmt", type=click.Choice(list(choices)), default=default, show_default=True, help="Output format."
    )


def _fail(lines: list[str], code: int) -> NoReturn:
    from advisor.errors import printable

    for line in lines:  # one paragraph per mistake, no terminal controls
        click.echo(printable(" ".join(line.split())), err=True)
    sys.exit(code)


def flag_names(message: str, command: click.Command | None) -> str:
    """The library names fields (tensor_parallel, in backticks where it quotes one); the user typed
    flags (--tensor-parallel). A field is its flag's name with underscores (`model` is --model), or
    the parameter the option fills (`prices` is --price, `fmt` is --format)."""
    if command is None:
        return message
    flags = {o[2:].replace("-", "_"): o for p in command.params for o in getattr(p, "opts", []) if o.startswith("--")}
    for p in command.params:
        longs = [o for o in getattr(p, "opts", []) if o.startswith("--")]
        if p.name and longs:
            flags.setdefault(p.name, longs[0])
    return re.sub(r"`([a-z][a-z0-9_]*)`", lambda m: flags.get(m.group(1), m.group(0)), message)


_GC = {"paused": False, "frozen": False, "may_freeze": False}


@contextlib.contextmanager
def _starting_up() -> Iterator[None]:
    """A command's start-up (importing the package, reading the workload, catalog and rules) makes
    long-lived objects only, which the cyclic collector walked ~130 times for nothing: ~0.04 s of a
    cold `advisor plan`. It is paused until the work starts (`working`), which freezes what start-up
    made out of its way (and out of the copy-on-write pages of a forked worker); a command that never
    calls `working` (the lists), or calls it with collect=False (estimate, compare, validate), runs
    paused to its end. A caller's own frozen
    objects are left as they are: nothing is frozen or unfrozen then."""
    was = gc.isenabled()
    gc.disable()
    _GC.update(paused=was, frozen=False, may_freeze=gc.get_freeze_count() == 0)
    try:
        yield
    finally:
        if _GC["frozen"]:
            gc.unfreeze()
        _GC.update(paused=False, frozen=False, may_freeze=False)
        if was:
            gc.enable()


def _work_starts() -> None:
    if _GC["paused"]:
        if _GC["may_freeze"]:
            gc.freeze()
        _GC.update(paused=False, frozen=_GC["may_freeze"])
        gc.enable()


def handled(f: Callable[..., T]) -> Callable[..., T]:
    """--debug, and the mapping of failures to exit codes (2 bad input, 3 infeasible, 1 anything
    else): one paragraph per error on stderr, a traceback only with --debug."""

    @click.option("--debug", is_flag=True, help="Show the Python traceback of an error.")
    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        with _starting_up():
            return _run(f, args, kwargs)

    return wrapper


def _run(f: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    """The command, its failures mapped to exit codes (see `handled`)."""
    try:
        result = f(*args, **kwargs)
        sys.stdout.flush()
        return result
    except (click.exceptions.Exit, click.ClickException):
        raise
    except BrokenPipeError:  # `advisor plan ... | head`: the reader left; say nothing more
        with contextlib.suppress(Exception):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except Exception as exc:  # mapped to exit codes; tracebacks only on --debug
        from advisor.errors import AdvisorError, InputError

        if kwargs.get("debug"):
            raise
        if isinstance(exc, InputError):  # found after reading, e.g. a GPU id the catalog lacks
            workload = kwargs.get("workload_file")
            command = click.get_current_context(silent=True)
            if exc.field not in {p.name for p in (command.command.params if command else [])}:
                exc = exc.in_file(*workload_place(workload))  # not about an option (--output)
            lines = [str(e) if e.file else flag_names(str(e), command.command if command else None) for e in exc.errors]
            _fail([f"error: {line}" for line in lines], exc.exit_code)
        if isinstance(exc, AdvisorError):  # e.g. "raise `time_limit`": the flag, as above
            command = click.get_current_context(silent=True)
            _fail([f"error: {flag_names(str(exc), command.command if command else None)}"], exc.exit_code)
        _fail(
            [f"internal error: {type(exc).__name__}: {exc} (please report it; run with --debug for the traceback)"], 1
        )


def workload_place(workload: str | None) -> tuple[str | None, Callable[[str], tuple[int, int] | None] | None]:
    """The workload's name for an error found after reading, and how to find a field's line in it
    (the file is read again; standard input cannot be)."""
    if workload is None or workload == "-":
        return ("<stdin>" if workload == "-" else None), None
    from advisor.inputs.workload import field_position

    return workload, lambda field: field_position(workload, field)


def emit(data: Any, fmt: str, render: Callable[[Any, str], str] | None = None) -> None:
    """Print `data`: JSON (the same bytes for the same input; UTF-8, not \\u escapes) or
    render(data, fmt) for every other format. A Plan is printed as its JSON value and rendered typed."""
    if fmt == "json":
        to_dict = getattr(data, "to_dict", None)
        text = json.dumps(to_dict() if to_dict is not None else data, indent=2, ensure_ascii=False) + "\n"
    else:
        assert render is not None, f"no renderer for --format {fmt}"
        text = render(data, fmt)
        if fmt != "csv":  # (a CSV cell keeps its text; escape.csv_cell made it inert for spreadsheets)
            from advisor.present.escape import visible

            text = visible(text)
    click.echo(text, nl=not text.endswith("\n"))


FRAMES = "|/-\\"


@contextlib.contextmanager
def working(
    what: str, stream: TextIO | None = None, after: float = 2.0, every: float = 0.25, collect: bool = True
) -> Iterator[None]:
    """The progress line on stderr while a command runs longer than two seconds, on a terminal only:
    the solve's own progress hook (solve/run.progress) drives it, e.g. "| explaining: re-solve 12,
    best $1.23M, gap 0.01%, 14 s"; a command that solves nothing (collect=False: estimate, compare,
    validate) gets its stage and seconds without importing the solver. Nothing is written when
    stderr is not a terminal."""
    if collect:  # (estimate, compare and validate make few objects: they keep the collector paused)
        _work_starts()
        from advisor.solve.run import progress, stage
    else:
        progress, stage = _light_progress, _no_stage
    out = stream or sys.stderr
    if not out.isatty():
        with stage(what):
            yield
        return
    shown = [0, 0]  # frames drawn, widest line
    width = shutil.get_terminal_size((80, 24)).columns - 1  # one line: a wrapped one would not redraw

    def draw(line: str) -> None:
        text = f"{FRAMES[shown[0] % 4]} {line}"[:width]
        shown[0], shown[1] = shown[0] + 1, max(shown[1], len(text))
        out.write("\r" + text.ljust(shown[1]))
        out.flush()

    _LIGHT["what"] = what
    try:
        with stage(what), progress(draw, after=after, every=every):
            yield
    finally:
        if shown[0]:
            out.write("\r" + " " * shown[1] + "\r")
            out.flush()


@contextlib.contextmanager
def _no_stage(name: str, total: int | None = None) -> Iterator[None]:
    yield


@contextlib.contextmanager
def _light_progress(write: Callable[[str], None], after: float = 2.0, every: float = 0.25) -> Iterator[None]:
    """solve/run.progress without the solver: the stage and the seconds elapsed."""
    from advisor.ticker import ticking

    with ticking(lambda elapsed: write(f"{_LIGHT['what']}, {elapsed:.0f} s"), after, every):
        yield


_LIGHT = {"what": "working"}


def check_output(path: str | None, force: bool = False) -> None:
    """Refuse, before any work, an output file whose folder does not exist, a folder, and (without
    --force) an existing file or a link, even a dangling one (exit 2 naming it)."""
    from advisor.inputs.arguments import output_file

    if path and path != "-":
        output_file(path, "output", force, force_as="--force")


def write_file(path: str, text: str) -> None:
    """Write `text` atomically: a temporary file beside `path`, renamed into place (a link at `path`
    is replaced, never written through)."""
    import tempfile
    from pathlib import Path

    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(catalog_file: str | None = None, rules_files: Iterable[str] = ()) -> tuple[Catalog, RuleSet]:
    """The catalog and the rules a command reads."""
    from advisor.data.catalog import load_catalog
    from advisor.data.rules import load_rules

    return load_catalog(catalog_file), load_rules(list(rules_files))


def today(as_of: dt.date | None) -> dt.date:
    return as_of or dt.date.today()


# the module of each command (each registers its commands on `main` when imported)
COMMAND_MODULES = {
    **dict.fromkeys(("plan", "frontier", "validate", "init", "schema"), "plans"),
    **dict.fromkeys(("memo", "rfq"), "documents"),
    **dict.fromkeys(("estimate", "models"), "study"),
    **dict.fromkeys(("compare", "crossover"), "comparisons"),
    **dict.fromkeys(("catalog", "rules", "calibrate"), "data"),
}


def _import_commands(modules: Iterable[str]) -> None:
    for module in modules:
        importlib.import_module(f"advisor.cli.{module}")


class LazyGroup(click.Group):
    """click's lazily loading group (click docs, "Lazily Loading Subcommands"): `advisor plan` imports
    the plan commands' module only, not the memo's or the comparisons' (~3 ms of a cold plan). Listing
    (help, completion) imports every module, and so does a name no module has, so click's "Did you
    mean" (which reads `commands`) sees them all."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            module = COMMAND_MODULES.get(cmd_name)
            _import_commands([module] if module else dict.fromkeys(COMMAND_MODULES.values()))
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        _import_commands(dict.fromkeys(COMMAND_MODULES.values()))
        return super().list_commands(ctx)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(None, "-V", "--version", package_name="gpu-advisor", prog_name="advisor")
@click.option("--no-color", is_flag=True, help="No colour in tables (also: the NO_COLOR environment variable).")
def main(no_color: bool) -> None:
    """gpu-advisor: which GPUs to buy or rent to train and serve your models, and why.

    \b
    Examples:
      advisor plan examples/article-office.yaml
      advisor plan examples/article-datacenter.yaml --format json
      advisor plan examples/serve-70b-datacenter.yaml
      advisor validate my.yaml
      advisor estimate --model gpt2-124m --gpu a100-80gb-sxm --count 1
      advisor schema > workload.schema.json

    Input files may be `-` for standard input. Shell completion (GPU ids, presets):
    eval "$(_ADVISOR_COMPLETE=bash_source advisor)" (zsh_source, fish_source for other shells).
    """
    from advisor.present.grid import configure

    configure(color=False if no_color else None)
