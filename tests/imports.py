"""What the project's modules import, read from their syntax trees: every import at any depth
(those inside functions too: a lazy import is still a dependency), relative ones made
absolute. Shared by the tests of the layers and of the declared dependencies."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path = ROOT) -> Iterator[str]:
    """Every module ``path`` (under ``root``) imports."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                yield f"{base}.{node.module}" if node.module else base
            else:
                yield node.module or ""


def modules(*folders: str, root: Path = ROOT) -> list[Path]:
    """The Python files under ``folders`` (relative to ``root``)."""
    return [path for folder in folders for path in sorted((root / folder).rglob("*.py"))]
