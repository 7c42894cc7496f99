"""Build step: copy the corpus into the wheel, so one source of truth stays at the top level.

fixtures/, matrix.json, docs/ and the Python reference SDK (runners/python) live at the repository
root; the wheel carries a copy of them as `fakepeer/_bundle/`, which `fakepeer.cases.root` finds
through importlib.resources when no checkout is around. Editable installs copy nothing: they use
their source checkout. Everything else is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
#: (source under the repository root, files to leave out)
BUNDLED = (
    ("fixtures", ()),
    ("matrix.json", ()),
    ("CHANGELOG.md", ()),
    ("docs", ()),
    ("runners/python", ("__pycache__", "*.pyc")),
)


class build_py_with_bundle(build_py):
    """`build_py`, then copy the corpus into `<build>/fakepeer/_bundle/`."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "fakepeer" / "_bundle"
        if target.exists():
            shutil.rmtree(target)
        for name, ignored in BUNDLED:
            source = HERE / name
            if not source.exists():
                raise SystemExit(f"cannot bundle {name}: {source} does not exist")
            if source.is_dir():
                shutil.copytree(source, target / name, ignore=shutil.ignore_patterns(*ignored))
            else:
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target / name)


setup(cmdclass={"build_py": build_py_with_bundle})
