"""What a page reads from a notebook besides its cells' text: kept only where it is inert.

nbconvert's templates, which the formgrader and the feedback are built on, read more than an
output's data. An image output's `width` and `height` go into its `<img>` tag unquoted (a
width of `1 onload=...` is an attribute that runs), its `filenames` make the image's source
any address, `text/html`'s `isolated` changes how it is framed; a cell's
`transient.remove_source` and `jupyter.source_hidden` hide its code from whoever grades it (a
flagged cell shown without the code that earned the flag), its tags become class names,
nbgrader's `grade_id` an anchor and a heading of the feedback; a stream's name is a class, a
cell's id an attribute. All of it is the student's: her notebook carries the cells, and the
kernel that made the outputs ran her code. So a graded notebook keeps, of all that, only what
the course's pages need, each value of the type it must have:

* an image output: `width` and `height` as whole numbers, `alt` as text (which every
  template quotes and escapes); any other output metadata is dropped;
* a cell: nbgrader's metadata, each field of its type (`grade_id` a plain name), and tags
  that are plain names; any other cell metadata is dropped, so no cell's source is hidden;
* a cell's id a plain name (made anew if not), an execution count a whole number or none,
  a stream `stdout` or `stderr`, an error's name, value and traceback text;
* the notebook: its kernel's and language's names, and the box's record of the run.
"""

from __future__ import annotations

import re

import nbformat

NAME = re.compile(r"[A-Za-z0-9_-]{1,64}", re.ASCII)  # a grade id, a tag, a cell id
IMAGES = ("image/png", "image/jpeg")
MOST_PIXELS = 20_000  # an image's width or height, at most
MOST_ALT = 2_000  # characters of an alt text
NBGRADER_FIELDS = {  # nbgrader's cell metadata (schema 3) and the type of each field
    "grade": bool,
    "solution": bool,
    "locked": bool,
    "task": bool,
    "points": (int, float),
    "grade_id": str,
    "schema_version": int,
    "cell_type": str,
    "checksum": str,
}
DEFAULTS = {  # the notebook's fields nbformat requires, as the course's notebooks hold them
    "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
    "language_info": {"name": "python"},
}
PLAIN = re.compile(r"[\w .()+-]{1,64}", re.ASCII)  # a kernel's or a language's name
BOX_RECORD = "kvlesson_box"  # the grader's own record, written outside the kernel
STREAMS = ("stdout", "stderr")


def image_metadata(output_metadata: dict) -> dict:
    """An output's metadata as a page may read it: for each image type, a whole-number
    width and height and a text alt, nothing else."""
    kept: dict = {}
    for mime in IMAGES:
        found = output_metadata.get(mime)
        if not isinstance(found, dict):
            continue
        size = {key: whole(found.get(key)) for key in ("width", "height")}
        alt = found.get("alt")
        shown = {key: value for key, value in size.items() if value is not None}
        if isinstance(alt, str):
            shown["alt"] = alt[:MOST_ALT]
        if shown:
            kept[mime] = shown
    return kept


def whole(value: object) -> int | None:
    """`value` as a size in pixels, 1 to MOST_PIXELS, or None when it is not one (a string
    that is not a plain number, such as `1 onload=...`, is not)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and re.fullmatch(r"\s*\d{1,6}(\.\d+)?\s*", value, re.ASCII):
        value = float(value)
    if isinstance(value, (int, float)) and 1 <= value <= MOST_PIXELS:
        return int(value)
    return None


def nbgrader_metadata(found: object) -> dict | None:
    """nbgrader's metadata of a cell with every field of its type and a grade id that is a
    plain name; None if it has none of that shape (the cell is then an ordinary cell)."""
    if not isinstance(found, dict):
        return None
    kept = {
        key: value
        for key, value in found.items()
        if key in NBGRADER_FIELDS
        and isinstance(value, NBGRADER_FIELDS[key])
        and not (isinstance(value, bool) and NBGRADER_FIELDS[key] is not bool)
    }
    grade_id = kept.get("grade_id")
    if grade_id is not None and not NAME.fullmatch(grade_id):
        return None
    if kept.get("cell_type") not in (None, "code", "markdown"):
        kept.pop("cell_type")
    if "checksum" in kept and not re.fullmatch(r"[0-9a-f]{1,128}", kept["checksum"]):
        kept.pop("checksum")
    return kept


def cell_metadata(metadata: dict) -> dict:
    """A cell's metadata as a page may read it: nbgrader's and plain tags, nothing else
    (no `transient`, no `jupyter.source_hidden`: no code is hidden from the grader)."""
    kept: dict = {}
    graded = nbgrader_metadata(metadata.get("nbgrader"))
    if graded is not None:
        kept["nbgrader"] = graded
    tags = metadata.get("tags")
    if isinstance(tags, list):
        kept["tags"] = [tag for tag in tags if isinstance(tag, str) and NAME.fullmatch(tag)]
    return kept


def notebook_metadata(metadata: dict) -> dict:
    """The notebook's metadata as a page may read it: its kernel's and its language's names
    (plain names only, the course's Python where a name is not one: nbformat requires both)
    and the box's record; no widget state, no title, nothing else."""
    kept: dict = {}
    for field, default in DEFAULTS.items():
        found = metadata.get(field)
        found = found if isinstance(found, dict) else {}
        kept[field] = {
            name: found[name]
            if isinstance(found.get(name), str) and PLAIN.fullmatch(found[name])
            else value
            for name, value in default.items()
        }
    if BOX_RECORD in metadata:
        kept[BOX_RECORD] = metadata[BOX_RECORD]
    return kept


def execution_count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def clean_cell(cell: nbformat.NotebookNode, index: int) -> None:
    """A cell's metadata, id, execution counts, outputs' metadata and stream names, cleaned
    in place (the cell's `index` names a new id where its own is not a plain name)."""
    cell.metadata = nbformat.from_dict(cell_metadata(cell.get("metadata") or {}))
    if "id" in cell and not (isinstance(cell.id, str) and NAME.fullmatch(cell.id)):
        cell.id = f"cell-{index}"
    if cell.get("cell_type") != "code":
        return
    cell.execution_count = execution_count(cell.get("execution_count"))
    for output in cell.get("outputs", []):
        if "execution_count" in output:
            output.execution_count = execution_count(output.execution_count)
        if "metadata" in output:
            output.metadata = nbformat.from_dict(image_metadata(output.metadata or {}))
        if output.get("output_type") == "stream" and output.get("name") not in STREAMS:
            output.name = "stdout"
        if output.get("output_type") == "error":
            output.ename, output.evalue = (
                str(output.get("ename", "")),
                str(output.get("evalue", "")),
            )
            lines = output.get("traceback")
            output.traceback = [str(line) for line in lines] if isinstance(lines, list) else []
        output.pop("transient", None)
