"""Which corpus a command works on: the checkout you stand in, `--root DIR`, or the bundled copy.

Found like git and pytest find theirs: the current folder or its nearest ancestor that holds a
checkout (a `fixtures/` folder beside `docs/rfd-2-execution-protocol.txt`). Outside any checkout
the corpus shipped inside the installed package is used, read-only (an editable install ships its
source checkout). Commands say which on their first line (`root: PATH`), and writing commands
refuse to write into an installed package.
"""

from __future__ import annotations

import shutil
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

#: A folder is a checkout when it holds both of these.
MARKERS = (Path("fixtures"), Path("docs") / "rfd-2-execution-protocol.txt")
#: Where the wheel carries the corpus, inside the `fakepeer` package (see setup.py).
BUNDLE = "_bundle"


class RootError(Exception):
    """A root that cannot be used, or a write the root does not allow; one line for the user."""


@dataclass(frozen=True)
class Root:
    """One corpus: fixtures/, matrix.json, docs/ and runners/python/ under `path`."""

    path: Path
    #: "checkout" (found from the current folder), "--root" (given), "bundled" (the wheel's
    #: copy, read-only) or "source" (an editable install's checkout, used from outside it: not
    #: read-only, but a command run elsewhere does not write into it by default).
    source: str

    @property
    def writable(self) -> bool:
        """Whether writing commands write into this root by default."""
        return self.source in ("checkout", "--root")

    @property
    def fixtures(self) -> Path:
        return self.path / "fixtures"

    @property
    def matrix(self) -> Path:
        return self.path / "matrix.json"

    @property
    def python_host(self) -> Path:
        return self.path / "runners" / "python" / "host.py"

    def describe(self) -> str:
        """The `root:` line commands print first."""
        note = {
            "checkout": "",
            "--root": " (--root)",
            "bundled": " (bundled with the installed package, read-only)",
            "source": " (the installed package's source checkout, used from outside it; "
            "writing commands write to the current folder unless told where)",
        }[self.source]
        return f"root: {self.path}{note}"


def is_checkout(folder: Path) -> bool:
    return (folder / MARKERS[0]).is_dir() and (folder / MARKERS[1]).is_file()


def find_checkout(start: Path) -> Path | None:
    """`start` or its nearest ancestor that is a checkout."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if is_checkout(folder):
            return folder
    return None


def bundled_root() -> Root:
    """The package's own corpus: the wheel's `_bundle`, or an editable install's source."""
    bundle = resources.files("fakepeer").joinpath(BUNDLE)
    if bundle.is_dir():
        return Root(_as_path(bundle), "bundled")
    source = Path(__file__).resolve().parents[2]
    if is_checkout(source):
        return Root(source, "source")
    raise RootError(
        "this installation carries no fixtures (it was built without them); "
        "run inside a checkout or pass --root DIR"
    )


def discover(explicit: Path | None = None, cwd: Path | None = None) -> Root:
    """`explicit` (must be a checkout), else the checkout around `cwd`, else the bundled corpus."""
    if explicit is not None:
        if not explicit.is_dir():
            raise RootError(f"--root {explicit}: no such folder")
        if not is_checkout(explicit):
            raise RootError(
                f"--root {explicit}: not a checkout (expected {MARKERS[0]}/ and {MARKERS[1]})"
            )
        return Root(explicit.resolve(), "--root")
    found = find_checkout(cwd if cwd is not None else Path.cwd())
    if found is not None:
        return Root(found, "checkout")
    return bundled_root()


_state: dict[str, object] = {"root": None, "explicit": None, "announce": False}


def configure(explicit: Path | None = None, announce: bool = False) -> None:
    """Set how the next `active_root()` is found (the CLI calls this once per invocation)."""
    if explicit is not None:
        discover(explicit)  # fail now, with the user's spelling of the folder
    _state.update(root=None, explicit=explicit, announce=announce)


def active_root() -> Root:
    """The root of this invocation, found once; the first call prints `root: ...` in the CLI."""
    root = _state["root"]
    if root is None:
        root = discover(_state["explicit"])  # type: ignore[arg-type]
        _state["root"] = root
        if _state["announce"]:
            print(root.describe(), file=sys.stderr, flush=True)
    return root  # type: ignore[return-value]


def quiet_root() -> Root:
    """The root of this invocation without printing the `root:` line: for a command that
    refuses to run on this root and says so in its one line instead."""
    root = _state["root"]
    return root if root is not None else discover(_state["explicit"])  # type: ignore[arg-type]


def installed_package_dirs() -> list[Path]:
    """Folders an installed package lives in: never written by a command."""
    dirs = {Path(__file__).resolve().parents[1]}  # the fakepeer package itself
    for key in ("purelib", "platlib"):
        dirs.add(Path(sysconfig.get_paths()[key]).resolve())
    return sorted(dirs)


def refuse_installed(target: Path, what: str) -> None:
    """Raise RootError when `target` lies inside an installed package (site-packages, fakepeer/)."""
    resolved = target.resolve()
    for folder in installed_package_dirs():
        if resolved == folder or folder in resolved.parents:
            raise RootError(
                f"refusing to write {what} {target} into an installed package ({folder}); "
                "name a folder of your own (or run inside a checkout)"
            )


def writable_default(root: Root, relative: Path, what: str, option: str) -> Path:
    """Where a writing command writes by default: inside a checkout root, else the current folder.

    The bundled corpus is never written: outside a checkout the default is `relative` under the
    current folder, and it too is refused when that lies inside an installed package.
    """
    base = root.path if root.writable else Path.cwd()
    target = base / relative
    try:
        refuse_installed(target, what)
    except RootError as exc:
        raise RootError(f"{exc}; or pass {option}") from None
    return target


_extracted: dict[str, Path] = {}


def _as_path(bundle: Traversable) -> Path:
    """A real folder for the bundle; a zipped install is extracted once into a temporary folder."""
    if isinstance(bundle, Path):
        return bundle
    if "bundle" not in _extracted:
        target = Path(tempfile.mkdtemp(prefix="ryusen-conform-bundle-"))
        _copy_tree(bundle, target)
        _extracted["bundle"] = target
    return _extracted["bundle"]


def _copy_tree(source: Traversable, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for item in source.iterdir():
        if item.is_dir():
            _copy_tree(item, target / item.name)
        else:
            with item.open("rb") as src, (target / item.name).open("wb") as dst:
                shutil.copyfileobj(src, dst)
