"""A feastlog cluster on one machine, in one command: PostgreSQL, feastlog nodes and nginx.

    python scripts/cluster.py up        # PostgreSQL (its own data folder), 3 nodes, nginx
    python scripts/cluster.py down      # stops them cleanly; the games stay (--purge: not)
    python scripts/cluster.py postgres  # PostgreSQL only, with a role tests may use (CI)

Everything listens on loopback. PostgreSQL runs from Debian's packages in a data folder of
its own (``initdb`` + ``pg_ctl``; as the ``postgres`` user when run as root), set up as
docs/scaling.md says: a role only feastlog uses, a database it owns that no one else may
connect to. Each node is ``feastlog serve --db postgresql://…`` with the same organiser
key; nginx uses ``deploy/feastlog.nginx.conf`` with the nodes' addresses and logs which
node served each call (``access.log``: the routing header, then the node).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
NGINX_SNIPPET = ROOT / "deploy" / "feastlog.nginx.conf"
STATE = "cluster.json"
KEY_FILE = "feastlog-organiser.key"
NODE_CODE = "from feastlog.cli.main import main; main()"


class ClusterError(Exception):
    """A part of the cluster could not be started or stopped: one line."""


@dataclass
class Postgres:
    """A PostgreSQL server started here: its data folder, port, and DSNs."""

    folder: str
    port: int
    bin: str
    superuser_dsn: str
    dsn: str = ""  # feastlog's own role and database

    def ctl(self, *args: str) -> list[str]:
        """A pg_ctl command line for this server (as the postgres user when root)."""
        return as_postgres([f"{self.bin}/pg_ctl", "-D", f"{self.folder}/data", *args])


@dataclass
class Cluster:
    """What ``up`` started, kept in the cluster folder for ``down``."""

    folder: str
    postgres: Postgres | None = None
    nodes: list[tuple[int, int]] = field(default_factory=list)  # (pid, port)
    nginx_pid: int = 0
    address: str = ""


def free_port() -> int:
    """A TCP port on loopback nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def is_root() -> bool:
    """Whether this runs as root (PostgreSQL then runs as the postgres user)."""
    return os.geteuid() == 0


def as_postgres(command: list[str]) -> list[str]:
    """``command`` as the postgres user when this runs as root (initdb refuses root)."""
    return ["runuser", "-u", "postgres", "--", *command] if is_root() else command


def postgres_bin() -> str:
    """The newest PostgreSQL's programs from Debian's packages (``apt-get install postgresql``)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if not found:
        raise ClusterError("no PostgreSQL here: apt-get install postgresql")
    return str(found[-1].parent)


def run(command: Sequence[str], cwd: str | None = None) -> str:
    """Run a command to its end; its output, or ClusterError with its last line."""
    done = subprocess.run(
        list(command), cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["failed"]
        raise ClusterError(f"{' '.join(command[:5])}…: {last[0]}")
    return done.stdout


def start_postgres(folder: Path | None = None, port: int = 0) -> Postgres:
    """Make (first time) and start a PostgreSQL server on loopback in a data folder of its own.

    Run as root, the folder is a fresh one in /tmp owned by postgres (a folder under
    root's own may not be reachable by that user). Passwords (scram-sha-256) for every
    connection, TCP on 127.0.0.1 only; the socket lives in the folder.
    """
    pg_bin = postgres_bin()
    if folder is None:
        folder = Path(tempfile.mkdtemp(prefix="feastlog-postgres-"))
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if is_root():
        shutil.chown(folder, "postgres", "postgres")
        reachable = subprocess.run(as_postgres(["test", "-w", str(folder)]), check=False)
        if reachable.returncode != 0:  # a folder above is root's own: use one in /tmp
            folder.rmdir()
            folder = Path(tempfile.mkdtemp(prefix="feastlog-postgres-"))
            shutil.chown(folder, "postgres", "postgres")
    password = secrets.token_urlsafe(18)
    if not (folder / "data").exists():
        secret = folder / "superuser-password"
        secret.write_text(password + "\n")
        secret.chmod(0o600)
        if is_root():
            shutil.chown(secret, "postgres", "postgres")
        run(
            as_postgres(
                [
                    f"{pg_bin}/initdb",
                    "-D",
                    str(folder / "data"),
                    "-U",
                    "postgres",
                    "--auth=scram-sha-256",
                    f"--pwfile={secret}",
                    "--encoding=UTF8",
                ]
            ),
            cwd=str(folder),
        )
    password = (folder / "superuser-password").read_text().strip()
    port = port or free_port()
    server = Postgres(
        str(folder),
        port,
        pg_bin,
        f"postgresql://postgres:{password}@127.0.0.1:{port}/postgres",
    )
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1"
    run(server.ctl("-l", f"{folder}/postgres.log", "-w", "-o", options, "start"), cwd=str(folder))
    return server


def stop_postgres(server: Postgres) -> None:
    """Stop PostgreSQL (fast: connections are closed, everything committed is kept)."""
    run(server.ctl("-m", "fast", "-w", "stop"), cwd=server.folder)


def psql(server: Postgres, *statements: str) -> str:
    """Run SQL statements as the superuser (psql from the same packages); the last's output."""
    out = ""
    for statement in statements:
        command = [f"{server.bin}/psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1"]
        out = run([*command, server.superuser_dsn, "-c", statement])
    return out.strip()


def set_up_feastlog_role(
    server: Postgres, role: str = "feastlog", database: str = "feastlog"
) -> str:
    """The documented setup: a role only feastlog uses, its database, closed to others.

    Made on the first start; later starts keep them (and the games) as they are.
    """
    secret = Path(server.folder) / f"{role}-password"
    if not secret.exists():
        secret.write_text(secrets.token_urlsafe(18) + "\n")
        secret.chmod(0o600)
    password = secret.read_text().strip()
    if not psql(server, f"SELECT 1 FROM pg_roles WHERE rolname = '{role}'"):
        psql(server, f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    if not psql(server, f"SELECT 1 FROM pg_database WHERE datname = '{database}'"):
        psql(
            server,
            f"CREATE DATABASE {database} OWNER {role}",
            f"REVOKE ALL ON DATABASE {database} FROM PUBLIC",
        )
    return f"postgresql://{role}:{password}@127.0.0.1:{server.port}/{database}"


def without_password(dsn: str) -> tuple[str, str]:
    """(the DSN without its password, the password): a command line is anyone's to read."""
    parts = urlsplit(dsn)
    if parts.password is None:
        return dsn, ""
    netloc = f"{parts.username}@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc)), parts.password


def start_node(dsn: str, key: str, folder: Path, index: int, port: int = 0) -> tuple[int, int]:
    """``feastlog serve --db DSN`` in its own session, logging to node-N.log: (pid, port).

    The key and the database password go in the node's environment (``PGPASSWORD``, which
    libpq reads), never on its command line, which other local users can read.
    """
    port = port or free_port()
    log = folder / f"node-{index}.log"
    dsn, password = without_password(dsn)
    env = {**os.environ, "FEASTLOG_ORGANISER_KEY": key}
    # every node signs with one key, kept in the cluster's folder (made by the first node)
    env.setdefault("FEASTLOG_SIGNING_KEY_FILE", str(folder / "feastlog-signing.key"))
    if password:
        env["PGPASSWORD"] = password
    before = log.stat().st_size if log.exists() else 0  # a node started again appends
    with log.open("a") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", NODE_CODE, "serve", "--db", dsn, "--port", str(port)],
            cwd=str(ROOT),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # outlives this script, and Ctrl-C in its terminal
        )
    deadline = time.monotonic() + 60
    while f"listening on 127.0.0.1:{port}" not in log.read_text()[before:]:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            tail = log.read_text().strip().splitlines()[-1:] or ["no output"]
            raise ClusterError(f"node {index} did not start: {tail[0]}")
        time.sleep(0.1)
    return process.pid, port


def nginx_config(folder: Path, listen: int, nodes: Sequence[int]) -> Path:
    """nginx's configuration in ``folder``: deploy/feastlog.nginx.conf with these addresses."""
    snippet = NGINX_SNIPPET.read_text()
    servers = "".join(
        f"    server 127.0.0.1:{port} max_fails=1 fail_timeout=5s;\n" for port in nodes
    )
    snippet = re.sub(r"(    server 127\.0\.0\.1:\d+ [^\n]*\n)+", servers, snippet)
    snippet = re.sub(r"listen 127\.0\.0\.1:\d+", f"listen 127.0.0.1:{listen}", snippet)
    (folder / "feastlog.conf").write_text(snippet)
    main = f"""# made by scripts/cluster.py; the feastlog part is deploy/feastlog.nginx.conf
daemon on;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
worker_processes 2;
events {{ worker_connections 1024; }}
http {{
    log_format routed '$http_x_feastlog_game $upstream_addr $request_uri $status';
    access_log {folder}/access.log routed;
    client_body_temp_path {folder}/tmp/body;
    proxy_temp_path {folder}/tmp/proxy;
    fastcgi_temp_path {folder}/tmp/fastcgi;
    uwsgi_temp_path {folder}/tmp/uwsgi;
    scgi_temp_path {folder}/tmp/scgi;
    include {folder}/feastlog.conf;
}}
"""
    (folder / "tmp").mkdir(exist_ok=True)
    config = folder / "nginx.conf"
    config.write_text(main)
    return config


def start_nginx(folder: Path, listen: int, nodes: Sequence[int]) -> int:
    """nginx in front of the nodes on 127.0.0.1:``listen``: its master's pid."""
    folder.mkdir(parents=True, exist_ok=True)
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        raise ClusterError("no nginx here: apt-get install nginx")
    config = nginx_config(folder, listen, nodes)
    run([nginx, "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(config)])
    pid_file = folder / "nginx.pid"
    deadline = time.monotonic() + 10
    while not pid_file.exists() or not pid_file.read_text().strip():
        if time.monotonic() > deadline:
            raise ClusterError(f"nginx did not start: see {folder / 'error.log'}")
        time.sleep(0.05)
    return int(pid_file.read_text())


def stop_process(pid: int, sig: int = signal.SIGTERM, wait: float = 20.0) -> None:
    """Signal a process and wait for it to be gone (SIGKILL after ``wait`` seconds)."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        try:  # our own child (a test's node): reap it
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            pass
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


def save(cluster: Cluster) -> None:
    """Keep what ``up`` started where ``down`` finds it (owner-only: it holds a DSN)."""
    path = Path(cluster.folder) / STATE
    path.write_text(json.dumps(asdict(cluster), indent=2))
    path.chmod(0o600)


def load(folder: Path) -> Cluster:
    """What ``up`` started in ``folder``."""
    path = folder / STATE
    if not path.exists():
        raise ClusterError(f"no cluster in {folder} (nothing to stop)")
    found = json.loads(path.read_text())
    postgres = Postgres(**found.pop("postgres")) if found.get("postgres") else None
    found["nodes"] = [tuple(n) for n in found["nodes"]]
    return Cluster(**found, postgres=postgres)


def organiser_key(folder: Path) -> str:
    """The cluster's organiser key, made on the first ``up`` (owner-only file)."""
    path = folder / KEY_FILE
    if not path.exists():
        path.write_text("org_" + secrets.token_urlsafe(32) + "\n")
        path.chmod(0o600)
    return path.read_text().strip()


def port_taken(port: int) -> bool:
    """Whether something listens on (or holds) ``port`` on loopback."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def up(folder: Path, nodes: int, port: int) -> Cluster:
    """Start PostgreSQL, ``nodes`` feastlog nodes on it, and nginx in front of them."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if is_root():  # the postgres user passes through to its data folder; files stay 0600
        folder.chmod(0o711)
    if (folder / STATE).exists():
        raise ClusterError(f"a cluster is up in {folder}: stop it first (cluster.py down)")
    if port and port_taken(port):  # said before anything starts, naming the port
        raise ClusterError(
            f"port {port} on 127.0.0.1 is taken (feastlog serve listens on 50051 by default): "
            "pass another --port, or --port 0 for any free one"
        )
    cluster = Cluster(str(folder.resolve()))
    try:
        cluster.postgres = start_postgres(folder / "postgres")
        save(cluster)
        cluster.postgres.dsn = set_up_feastlog_role(cluster.postgres)
        key = organiser_key(folder)
        for i in range(nodes):
            cluster.nodes.append(start_node(cluster.postgres.dsn, key, folder, i + 1))
            save(cluster)
        port = port or free_port()
        cluster.nginx_pid = start_nginx(folder / "nginx", port, [p for _, p in cluster.nodes])
        cluster.address = f"127.0.0.1:{port}"
        save(cluster)
    except BaseException:
        down(cluster)
        raise
    return cluster


def down(cluster: Cluster, purge: bool = False) -> None:
    """Stop nginx, then the nodes (gracefully: calls in flight finish), then PostgreSQL.

    ``purge`` also deletes PostgreSQL's data folder (every game).
    """
    if cluster.nginx_pid:
        stop_process(cluster.nginx_pid, signal.SIGQUIT)
    for pid, _ in cluster.nodes:
        stop_process(pid)
    if cluster.postgres is not None:
        try:
            stop_postgres(cluster.postgres)
        except ClusterError as failed:
            if "is the server running" not in str(failed).lower():
                raise
        if purge:
            shutil.rmtree(cluster.postgres.folder, ignore_errors=True)
    (Path(cluster.folder) / STATE).unlink(missing_ok=True)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: up, down, postgres."""
    parser = argparse.ArgumentParser(prog="cluster.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["up", "down", "postgres"])
    parser.add_argument("--folder", default="feastlog-cluster", help="where it all lives")
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument(
        "--port", type=int, default=0, help="nginx's port (default 0: any free one, printed)"
    )
    parser.add_argument("--purge", action="store_true", help="down: delete the games too")
    args = parser.parse_args(argv)
    folder = Path(args.folder).resolve()  # nginx and pg_ctl take paths from their own folders
    try:
        if args.what == "down":
            down(load(folder), args.purge)
            print(f"stopped the cluster in {folder}")
        elif args.what == "postgres":
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            cluster = Cluster(str(folder.resolve()), start_postgres(folder / "postgres"))
            save(cluster)
            assert cluster.postgres is not None
            dsn = set_up_test_role(cluster.postgres)
            print(f"export FEASTLOG_TEST_POSTGRES='{dsn}'")
        else:
            cluster = up(folder, args.nodes, args.port)
            key = Path(cluster.folder) / KEY_FILE
            print(f"feastlog cluster on {cluster.address} (nginx, routing on x-feastlog-game)")
            for i, (_, port) in enumerate(cluster.nodes, start=1):
                print(f"  node {i}: 127.0.0.1:{port} (log {cluster.folder}/node-{i}.log)")
            assert cluster.postgres is not None
            print(f"  database: PostgreSQL on 127.0.0.1:{cluster.postgres.port}")
            print(f"organiser key: {key}")
            print(
                f"try: FEASTLOG_ORGANISER_KEY=$(cat {key}) feastlog demo bon-appetit "
                f"--server {cluster.address}"
            )
            print(f"stop: python scripts/cluster.py down --folder {args.folder}")
    except ClusterError as failed:
        print(f"Error: {failed}", file=sys.stderr)
        return 3
    return 0


def set_up_test_role(server: Postgres) -> str:
    """A role for the tests, which make a database per test worker and a role or two."""
    password = secrets.token_urlsafe(18)
    psql(server, f"CREATE ROLE feastlog_test LOGIN CREATEDB CREATEROLE PASSWORD '{password}'")
    return f"postgresql://feastlog_test:{password}@127.0.0.1:{server.port}/postgres"


if __name__ == "__main__":
    sys.exit(main())
