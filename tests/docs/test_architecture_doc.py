"""docs/architecture.md says what is there: every module, class and function it names exists,
and its lists of what imports gRPC and each database driver are exactly the modules that do.

A path in backticks (``service/app/reads.py``, ``service/store/``) is looked up from the
repository's root, or from the folder its section is about (a heading that begins with a
folder, such as "### service/, module by module").  A name in backticks (``Replays``,
``Games.submit``, ``check_open``, ``limits.Refolds``) must be defined somewhere in
the code: each of its dotted parts a module, class, function, method or assignment, or an
RPC or message of the protos.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

from google.protobuf import descriptor_pool

import feastlog.v1  # noqa: F401  # the protos' descriptors, registered on import
from feastlog.v1 import (
    admin_service_pb2,
    audit_service_pb2,
    game_service_pb2,
    record_pb2,
    replay_service_pb2,
    tournament_service_pb2,
)

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
CODE = ("replay", "presentation", "service", "cli", "client", "tests", "scripts")
TICKED = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"^[\w.-]+(/[\w.-]+)*(\.py|\.toml|\.js|\.css|\.md|/)$")
NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*(\(\))?$")
FOLDER_HEADING = re.compile(r"^#+\s+([\w/]+/)[,\s]")
# What counts as importing gRPC, or a database driver, by the import's top-level name.
DEPENDENCIES = {
    "grpc": ("grpc", "grpc_health", "grpc_reflection", "grpc_status"),
    "duckdb": ("duckdb",),
    "psycopg": ("psycopg", "psycopg_pool"),
}
LIST_HEADING = "## What imports gRPC and the database drivers"


def python_files() -> list[Path]:
    """Every Python file of the project's own code."""
    return [p for top in CODE for p in sorted((ROOT / top).rglob("*.py"))]


@cache
def defined_names() -> frozenset[str]:
    """Every name the code defines: modules, classes, functions, methods, assignments,
    and the protos' services, methods, messages, fields and enum values."""
    names: set[str] = set()
    for path in python_files():
        names.update(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for leaf in ast.walk(target):
                        if isinstance(leaf, ast.Name):
                            names.add(leaf.id)
                        elif isinstance(leaf, ast.Attribute):
                            names.add(leaf.attr)
    pool = descriptor_pool.Default()
    for module in (
        admin_service_pb2,
        audit_service_pb2,
        game_service_pb2,
        record_pb2,
        replay_service_pb2,
        tournament_service_pb2,
    ):
        file = pool.FindFileByName(module.DESCRIPTOR.name)
        for service in file.services_by_name.values():
            names.add(service.name)
            names.update(m.name for m in service.methods)
        for message in file.message_types_by_name.values():
            names.add(message.name)
            names.update(f.name for f in message.fields)
        for enum in file.enum_types_by_name.values():
            names.add(enum.name)
            names.update(v.name for v in enum.values)
    return frozenset(names)


def doc_tokens() -> list[tuple[str, tuple[str, ...], int]]:
    """(token, the folders it may be relative to, line number) for every backticked token:
    the folder its section is about, and the folders of the paths before it on its line
    (a table row's first cell names the folder its other cells' files are in)."""
    found = []
    base = ""
    for number, line in enumerate(DOC.read_text().splitlines(), 1):
        heading = FOLDER_HEADING.match(line)
        if line.startswith("#"):
            base = heading.group(1) if heading else ""
        folders = [base]
        for token in (t.strip() for t in TICKED.findall(line)):
            found.append((token, tuple(folders), number))
            if PATH.match(token) and "/" in token:
                folders.append(token if token.endswith("/") else token.rpartition("/")[0] + "/")
    return found


def exists(token: str, folders: tuple[str, ...]) -> bool:
    """Whether the path is there, from the root, one of the folders, or a package in one
    (a file every game package has)."""
    for folder in ("", *folders):
        if (ROOT / folder / token).exists() or any((ROOT / folder).glob(f"*/{token}")):
            return True
    return False


def strings_in_code() -> set[str]:
    """Every string constant of the code (environment variables' names among them)."""
    found = set()
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.add(node.value)
    return found


def test_every_path_the_doc_names_exists() -> None:
    missing = []
    for token, folders, number in doc_tokens():
        if PATH.match(token) and not exists(token, folders):
            missing.append(f"line {number}: {token}")
    assert missing == []


def test_every_name_the_doc_names_is_defined() -> None:
    names = defined_names() | strings_in_code()
    missing = []
    for token, _, number in doc_tokens():
        if PATH.match(token) or not NAME.match(token):
            continue
        bare = token.removesuffix("()")
        dotted = "." in bare or token.endswith("()") or bare[:1].isupper()
        constant = bare.isupper() and "_" in bare
        if not constant and (not dotted or bare.isupper()):
            continue  # a plain word (a table, a column, a command); constants are checked
        unknown = [part for part in bare.split(".") if part not in names]
        if unknown:
            missing.append(f"line {number}: {token} ({', '.join(unknown)})")
    assert missing == []


def importers() -> dict[str, set[str]]:
    """For gRPC and each driver, the modules of service/, cli/, replay/ and presentation/
    that import it (at any depth in the module)."""
    found: dict[str, set[str]] = {what: set() for what in DEPENDENCIES}
    for path in python_files():
        if path.relative_to(ROOT).parts[0] in ("tests", "scripts"):
            continue
        tops: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                tops.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops.add(node.module.split(".")[0])
        for what, modules in DEPENDENCIES.items():
            if tops & set(modules):
                found[what].add(str(path.relative_to(ROOT)))
    return found


def listed() -> dict[str, set[str]]:
    """The doc's lists: under its heading, a line per dependency, ``- name: `path`, …``."""
    text = DOC.read_text()
    assert LIST_HEADING in text, f"docs/architecture.md has no section {LIST_HEADING!r}"
    section = text.split(LIST_HEADING, 1)[1].split("\n## ", 1)[0]
    found: dict[str, set[str]] = {}
    for line in section.splitlines():
        entry = re.match(r"^- (\w+): (.*)$", line)
        if entry:
            found[entry.group(1)] = set(TICKED.findall(entry.group(2)))
    return found


def test_the_doc_lists_every_module_that_imports_grpc_or_a_driver() -> None:
    doc, code = listed(), importers()
    assert set(doc) == set(DEPENDENCIES)
    for what in DEPENDENCIES:
        assert doc[what] == code[what], (
            what,
            "not in the doc:",
            sorted(code[what] - doc[what]),
            "in the doc only:",
            sorted(doc[what] - code[what]),
        )
