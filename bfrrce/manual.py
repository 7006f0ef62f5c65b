"""The documentation pages shipped with the package (the repository's docs/ folder, installed
as the package data ``bfrrce.docs``), for ``bfrrce docs NAME`` and for messages that point to
a page: an installed user reads ``docs/formats.md`` with ``bfrrce docs formats``."""

from __future__ import annotations

from pathlib import Path

from protocols.errors import LDPValueError

_HERE = Path(__file__).resolve().parent


def _folder() -> Path:
    """bfrrce/docs in an installed wheel; the checkout's docs/ in a source tree (editable)."""
    for folder in (_HERE / "docs", _HERE.parent / "docs"):
        if (folder / "formats.md").is_file():
            return folder
    raise LDPValueError("the documentation is not installed with this copy of bfrrce")


def names() -> list[str]:
    """The page names (``formats`` for docs/formats.md), sorted.

    Returns
    -------
    list of str
    """
    return sorted(item.name[:-3] for item in _folder().iterdir() if item.name.endswith(".md"))


def read(name: str = "index") -> str:
    """The Markdown text of page ``name`` (``formats``, ``formats.md`` or ``docs/formats.md``);
    ``index`` lists the pages with their titles.

    Raises
    ------
    LDPValueError
        No such page (the message lists the pages).

    Parameters
    ----------
    name : str
        A page name, or ``index``.

    Returns
    -------
    str
        Markdown.
    """
    stem = name.removeprefix("docs/").removesuffix(".md")
    pages = names()
    if stem == "index":
        return "".join(f"{page:14} {_title(page)}\n" for page in pages) + "\nbfrrce docs NAME prints one.\n"
    if stem not in pages:
        raise LDPValueError(f"no documentation page {name!r}: pages are {', '.join(pages)}")
    return (_folder() / f"{stem}.md").read_text(encoding="utf-8")


def _title(page):
    with (_folder() / f"{page}.md").open(encoding="utf-8") as fh:
        first = fh.readline()
    return first.lstrip("# ").strip()
