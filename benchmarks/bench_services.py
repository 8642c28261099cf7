"""Per-trial cost of services: provision + teardown of each kind, against a floor.

One trial here is what the runner does around an agent: `start_services` (create the
database, seed it with one small table, fingerprint it / start the mock's server) and
`stop()` (fingerprint again, drop the database / close the server). Each kind runs N
trials after one warm-up; the figures are the median and the 95th percentile in ms.

The floor, measured in the same run, is the least the same job can cost without sounding:
a bare `sqlite3.connect` + close of a new file; a bare socket bind + listen + close; for
PostgreSQL and MariaDB raw driver connections that create a database, run the same seed
in it and drop it. The ratio says what sounding adds on top.

    python benchmarks/bench_services.py [--trials 30] [--postgres URL] [--mariadb URL]

Targets (medians): SQLite and HTTP mock under 20 ms; PostgreSQL and MariaDB under 300 ms.
Server URLs default to SOUNDING_TEST_POSTGRES / SOUNDING_TEST_MARIADB, as in the tests;
a server that does not answer is reported as skipped. A missed target is printed, not an
exit code: the script exits 0 whenever it could measure.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pymysql
from _bench import figure, heading, target
from sqlalchemy.engine import URL, make_url

from sounding.services import ServiceSettings, start_services

POSTGRES = os.environ.get("SOUNDING_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
MARIADB = os.environ.get("SOUNDING_TEST_MARIADB", "mysql://root@127.0.0.1:3306/test")
SEED = "CREATE TABLE items (id INTEGER PRIMARY KEY, name VARCHAR(20));\n" + "".join(
    f"INSERT INTO items VALUES ({n}, 'item {n}');\n" for n in range(3)
)


def timings(
    job: Callable[[int], None], floor: Callable[[int], None], trials: int
) -> tuple[list[float], list[float]]:
    """Milliseconds of `trials` runs of `job` and of `floor`, taken in turns so that a
    machine busy for a while slows both alike; one run of each first is not counted."""
    job(-1)
    floor(-1)
    spent: tuple[list[float], list[float]] = ([], [])
    for n in range(trials):
        for measured, run in zip(spent, (job, floor), strict=True):
            started = time.perf_counter()
            run(n)
            measured.append((time.perf_counter() - started) * 1000)
    return spent


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def trial_job(
    root: Path, spec: dict[str, object], servers: dict[str, str]
) -> Callable[[int], None]:
    (root / "seed.sql").write_text(SEED)
    settings = ServiceSettings(servers=servers)

    def job(n: int) -> None:
        trial = root / f"trial-{n}"
        start_services([spec], trial_dir=trial, suite_dir=root, settings=settings).stop()

    return job


def sqlite_floor(root: Path) -> Callable[[int], None]:
    def job(n: int) -> None:
        sqlite3.connect(root / f"floor-{n}.sqlite").close()

    return job


def socket_floor(_n: int) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()


def server_floor(url: str) -> Callable[[int], None]:
    """The same job on a raw driver connection: create a database, seed it, drop it."""
    parsed = make_url(url)
    statements = [line for line in SEED.splitlines() if line]

    def job(_n: int) -> None:
        name = f"floor_{secrets.token_hex(5)}"
        if parsed.get_backend_name() == "postgresql":
            plain = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
            with psycopg.connect(plain, autocommit=True) as admin:
                admin.execute(f"CREATE DATABASE {name}")
                with psycopg.connect(
                    parsed.set(drivername="postgresql", database=name).render_as_string(
                        hide_password=False
                    )
                ) as seeded:
                    for statement in statements:
                        seeded.execute(statement)
                admin.execute(f"DROP DATABASE {name}")
            return
        admin = _mysql(parsed, None)
        with admin.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {name}")
            seeded = _mysql(parsed, name)
            with seeded.cursor() as seeding:
                for statement in statements:
                    seeding.execute(statement)
            seeded.commit()
            seeded.close()
            cursor.execute(f"DROP DATABASE {name}")
        admin.close()

    return job


def _mysql(url: URL, database: str | None) -> pymysql.Connection:  # type: ignore[type-arg]
    return pymysql.connect(
        host=url.host,
        port=url.port or 3306,
        user=url.username,
        password=url.password or "",
        database=database,
        ssl_disabled=True,
    )


def answers(url: str) -> str | None:
    """None when the server answers, else why not."""
    try:
        server_floor(url)(0)
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}"
    return None


def measure(
    label: str,
    job: Callable[[int], None],
    floor: Callable[[int], None],
    trials: int,
    limit_ms: float,
) -> bool:
    spent, bare = timings(job, floor, trials)
    median, bare_median = statistics.median(spent), statistics.median(bare)
    heading(label)
    figure("provision + teardown, median", f"{median:.1f} ms")
    figure("provision + teardown, p95", f"{p95(spent):.1f} ms")
    figure("floor, median", f"{bare_median:.2f} ms")
    figure("ratio to the floor", f"{median / bare_median:.1f}x" if bare_median else "n/a")
    return target(f"median under {limit_ms:g} ms", median < limit_ms, f"{median:.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--postgres", default=POSTGRES)
    parser.add_argument("--mariadb", default=MARIADB)
    args = parser.parse_args()
    sql = {"name": "db", "type": "sql", "seed": "seed.sql"}
    mock = {"name": "api", "type": "http_mock", "record": True, "routes": [{"path": "/x"}]}
    met = []
    with tempfile.TemporaryDirectory(prefix="sounding-bench-services-") as scratch:
        root = Path(scratch)
        print(f"services: {args.trials} trials per kind, after one warm-up")
        met.append(measure("SQLite", trial_job(root, sql, {}), sqlite_floor(root), args.trials, 20))
        met.append(measure("HTTP mock", trial_job(root, mock, {}), socket_floor, args.trials, 20))
        for label, url in (("PostgreSQL", args.postgres), ("MariaDB", args.mariadb)):
            problem = answers(url)
            if problem:
                heading(label)
                figure("skipped", f"{make_url(url).render_as_string()} does not answer: {problem}")
                continue
            job = trial_job(root, sql, {"db": url})
            met.append(measure(label, job, server_floor(url), args.trials, 300))
    print(f"\n{sum(met)} of {len(met)} targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
