"""client/ is the library a client developer installs: it imports nothing of the server
(``feastlog.service``), at the top of a module or inside a function."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "client"


def service_imports(source: str) -> list[str]:
    """Each import of ``feastlog.service`` anywhere in ``source`` (functions too), and each
    module named to ``importlib``/``__import__`` as a string."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("feastlog.service")]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module == "feastlog" and any(a.name == "service" for a in node.names):
                found.append("feastlog.service")
            elif module.startswith("feastlog.service"):
                found.append(module)
        elif isinstance(node, ast.Constant) and str(node.value).startswith("feastlog.service"):
            found.append(str(node.value))
    return found


def test_no_module_of_the_client_imports_the_service() -> None:
    modules = sorted(CLIENT.glob("**/*.py"))
    assert len(modules) >= 8
    found = {p.name: service_imports(p.read_text()) for p in modules}
    assert {name: it for name, it in found.items() if it} == {}


def test_the_scan_sees_an_import_inside_a_function() -> None:
    hidden = "def f():\n    from feastlog.service.app import auth\n    return auth\n"
    assert service_imports(hidden) == ["feastlog.service.app"]
    assert service_imports("import feastlog.service.announce as a\n") == [
        "feastlog.service.announce"
    ]
    assert service_imports("from feastlog import service\n") == ["feastlog.service"]


def test_using_the_client_loads_no_service_module() -> None:
    """Imported and used (a client made on a channel, a server located beside a file),
    the library has loaded no module of ``feastlog.service``."""
    code = (
        "import sys, grpc\n"
        "from feastlog.client import Client, locate\n"
        "from feastlog.client import aio, calls, data, files, tls\n"
        "locate(None, 'nowhere/feastlog.duckdb')\n"
        "Client(channel=grpc.insecure_channel('127.0.0.1:1')).close()\n"
        "print(sorted(m for m in sys.modules if m.startswith('feastlog.service')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
