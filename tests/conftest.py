"""Shared fixtures: the real database servers, found or skipped with a reason.

Set SOUNDING_REQUIRE_SERVICES=1 (CI does) to turn a missing server into a failure
instead of a skip. Override the addresses with SOUNDING_TEST_POSTGRES / SOUNDING_TEST_MARIADB.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

POSTGRES = os.environ.get("SOUNDING_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
MARIADB = os.environ.get("SOUNDING_TEST_MARIADB", "mysql+pymysql://root@127.0.0.1:3306/test")


def _server(url: str, what: str) -> str:
    engine = sa.create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except Exception as exc:
        reason = f"{what} at {url} does not answer ({type(exc).__name__}); start it or set the URL"
        if os.environ.get("SOUNDING_REQUIRE_SERVICES") == "1":
            pytest.fail(f"SOUNDING_REQUIRE_SERVICES=1 but {reason}")
        pytest.skip(reason)
    finally:
        engine.dispose()
    return url


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A server URL (SQLAlchemy form) of a PostgreSQL that answers."""
    yield _server(POSTGRES, "PostgreSQL")


@pytest.fixture(scope="session")
def mariadb_url() -> Iterator[str]:
    """A server URL (SQLAlchemy form) of a MariaDB / MySQL that answers."""
    yield _server(MARIADB, "MariaDB")
