"""Where the shipped data folders are: inside the installed wheel, or beside the package in a checkout.

A wheel carries catalog/ and rules/ as advisor/_data/<name> (pyproject force-include); an
editable install or a source checkout has them at the repository root, next to advisor/.
Both are found from the package itself (the folder its modules are in, which is what
importlib.resources.files("advisor") is for a package on disk; importing importlib.resources, and
with it zipfile and tempfile, cost ~3 ms of a cold `advisor plan`), never from the current directory.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).parent.parent  # advisor/, as importlib.resources.files("advisor") names it


def data_dir(name: str) -> Path:
    """The folder holding the built-in `catalog` or `rules` data."""
    shipped = PACKAGE / "_data" / name
    if shipped.is_dir():
        return shipped
    checkout = PACKAGE.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"gpu-advisor's built-in {name}/ data is missing from the installation ({shipped})")
