"""Where the shipped data folders are: inside the installed wheel, or beside the package in a checkout.

A wheel carries catalog/ and rules/ as advisor/_data/<name> (pyproject force-include); an
editable install or a source checkout has them at the repository root, next to advisor/.
Both are found from the package itself through importlib.resources, never from the current
directory.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def data_dir(name: str) -> Path:
    """The folder holding the built-in `catalog` or `rules` data."""
    package = resources.files("advisor")
    shipped = package / "_data" / name
    if shipped.is_dir():
        return Path(str(shipped))
    checkout = Path(str(package)).parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"gpu-advisor's built-in {name}/ data is missing from the installation ({shipped})")
