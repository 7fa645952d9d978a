"""The ``cairn`` command: up, serve, worker, migrate, reindex, store-blocks, bootstrap,
token, mcp, embed, build-model; and for people at a terminal: post, get, search, tail,
context, query, coverage, assemblies, import (``cli_client``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from cairn import cli_client
from cairn.config import Settings, get_settings
from cairn.errors import ConfigurationError
from cairn.logging import configure
from cairn.runtime.heap import tune_collector

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)

DataDir = Annotated[Path | None, typer.Option(help="data directory (default ./.cairn)")]
Host = Annotated[str | None, typer.Option(help="address to bind")]
Port = Annotated[int | None, typer.Option(help="port to bind")]


@contextlib.contextmanager
def _refusing_bad_settings() -> Iterator[None]:
    """Settings that cannot serve safely end the command with their reason and exit code 2."""
    try:
        yield
    except ConfigurationError as error:
        typer.echo(f"cairn: {error.detail}", err=True)
        raise typer.Exit(2) from error


def _settings(
    data_dir: Path | None = None, host: str | None = None, port: int | None = None
) -> Settings:
    settings = get_settings()
    overrides = {"data_dir": data_dir, "host": host, "port": port}
    settings = settings.model_copy(update={k: v for k, v in overrides.items() if v is not None})
    configure(settings.log_level, as_json=settings.log_json)
    return settings


@app.command()
def up(data_dir: DataDir = None, host: Host = None, port: Port = None) -> None:
    """Run everything on this machine: embedded PostgreSQL + NATS, migrations, the API."""
    from cairn import bootstrap
    from cairn.runtime.up import up as run_up

    settings = _settings(data_dir, host, port)
    tune_collector()
    with _refusing_bad_settings(), contextlib.suppress(KeyboardInterrupt):  # Ctrl-C stops it
        run_up(settings, [bootstrap.default_bootstrap_dir()])


@app.command()
def serve(host: Host = None, port: Port = None) -> None:
    """Serve the API against DATABASE_URL (and NATS_URL); run as many as you like."""
    import uvicorn

    from cairn.api.app import create_app
    from cairn.api.server import server_config

    settings = _settings(host=host, port=port)
    with _refusing_bad_settings():
        application = create_app(settings)
    tune_collector()
    config = server_config(application, settings.limits, host=settings.host, port=settings.port)
    uvicorn.Server(config).run()


@app.command()
def worker(
    metrics_port: Annotated[
        int | None,
        typer.Option(
            help="serve /metrics on this port (0: none; default"
            " CAIRN_PROCESSING__WORKER_METRICS_PORT)"
        ),
    ] = None,
) -> None:
    """Build edges and assemble contexts from the event stream; run as many as you like."""
    import signal

    from cairn.worker.app import run_worker

    settings = _settings()
    if metrics_port is not None:
        processing = settings.processing.model_copy(update={"worker_metrics_port": metrics_port})
        settings = settings.model_copy(update={"processing": processing})

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await run_worker(settings, stop)

    tune_collector()
    asyncio.run(main())


@app.command()
def migrate() -> None:
    """Apply the database migrations as CAIRN_ADMIN_DATABASE_URL (else DATABASE_URL), and
    create the application role named by DATABASE_URL."""
    from cairn.db.engine import create_engine
    from cairn.db.migrate import upgrade
    from cairn.db.roles import app_role

    settings = _settings()
    if not settings.system_database_url:
        raise typer.BadParameter("set DATABASE_URL (and CAIRN_ADMIN_DATABASE_URL)")

    async def run() -> None:
        engine = create_engine(settings.system_database_url or "", settings)
        try:
            await upgrade(engine, app_role=app_role(settings))
        finally:
            await engine.dispose()

    asyncio.run(run())
    typer.echo("migrations applied")


@app.command()
def reindex(
    schema: Annotated[str | None, typer.Option(help="only records of this schema")] = None,
    since: Annotated[
        str | None, typer.Option(help="only records updated at or after (ISO 8601; UTC if bare)")
    ] = None,
    tenant: Annotated[
        str | None, typer.Option(help="only this tenant's records (default: every tenant)")
    ] = None,
    batch: Annotated[int | None, typer.Option(help="records per transaction", min=1)] = None,
) -> None:
    """Recompute llm_text, embeddings, keywords, domain labels and edges of the selected
    records against DATABASE_URL with the local model; run again after a crash to resume."""
    from cairn.reindex.command import parse_since, reindex as run_reindex
    from cairn.reindex.jobs import Selection

    settings = _settings()
    if batch is not None:
        reindex_settings = settings.reindex.model_copy(update={"batch": batch})
        settings = settings.model_copy(update={"reindex": reindex_settings})
    try:
        selection = Selection(schema, parse_since(since))
        owners = [uuid.UUID(tenant)] if tenant else None
    except ValueError as error:
        raise typer.BadParameter(str(error)) from error
    if not settings.system_database_url:
        raise typer.BadParameter("set DATABASE_URL (and CAIRN_ADMIN_DATABASE_URL)")
    summary = asyncio.run(
        run_reindex(settings, selection, owners, show_progress=sys.stderr.isatty())
    )
    typer.echo(summary.text())
    if summary.count("failed"):
        raise typer.Exit(1)


@app.command("store-blocks")
def store_blocks(
    tenant: Annotated[
        str | None, typer.Option(help="only this tenant's records (default: every tenant)")
    ] = None,
) -> None:
    """Render and store the block of every record that has none at its version (records
    loaded around the worker: a COPY, a restore); run again to resume."""
    from cairn.context.block_store import backfill_tenants

    settings = _settings()
    try:
        owners = [uuid.UUID(tenant)] if tenant else None
    except ValueError as error:
        raise typer.BadParameter(str(error)) from error
    if not settings.system_database_url:
        raise typer.BadParameter("set DATABASE_URL (and CAIRN_ADMIN_DATABASE_URL)")
    stored = asyncio.run(backfill_tenants(settings, owners))
    typer.echo(f"stored {stored} blocks")


@app.command("rotate-kek")
def rotate_kek() -> None:
    """Re-wrap every secret's data key with the current KEK (CAIRN_SECRETS__KEK), reading
    the old ones from CAIRN_SECRETS__PREVIOUS_KEKS; values are not re-encrypted."""
    from cairn.db.engine import create_engine, create_session_factory
    from cairn.secrets.crypto import Keyring, UndecryptableSecret
    from cairn.secrets.service import rewrap_all

    settings = _settings()
    keyring = Keyring.from_settings(settings.secrets)
    if keyring is None or not settings.system_database_url:
        raise typer.BadParameter("set CAIRN_SECRETS__KEK and DATABASE_URL")

    async def run() -> int:
        # Every tenant's secrets: as the schema owner (CAIRN_ADMIN_DATABASE_URL).
        engine = create_engine(settings.system_database_url or "", settings)
        try:
            async with create_session_factory(engine)() as session, session.begin():
                return await rewrap_all(session, keyring)
        finally:
            await engine.dispose()

    try:
        count = asyncio.run(run())
    except UndecryptableSecret as error:  # nothing was changed: one transaction
        typer.echo(f"rotation aborted: {error} (add the old key to CAIRN_SECRETS__PREVIOUS_KEKS)")
        raise typer.Exit(1) from error
    typer.echo(f"{count} data keys re-wrapped with KEK {keyring.current_id}")


@app.command("bootstrap")
def bootstrap_command(
    directory: Annotated[Path | None, typer.Argument(help="folder of breadcrumb JSON")] = None,
    url: Annotated[str | None, typer.Option(help="Cairn URL (default $CAIRN_URL)")] = None,
    token: Annotated[
        str | None,
        typer.Option(help="a curator's token (default $CAIRN_TOKEN, else minted from the key)"),
    ] = None,
) -> None:
    """Load a folder of breadcrumb JSON files (Cairn's or RCRT's layout); idempotent."""
    from cairn import bootstrap
    from cairn.auth.local import bootstrap_token

    settings = _settings()
    token = token or os.environ.get("CAIRN_TOKEN")
    if token is None:
        with _refusing_bad_settings():
            token = bootstrap_token(settings)
    target = url or os.environ.get("CAIRN_URL", "http://127.0.0.1:8081")
    folder = directory or bootstrap.default_bootstrap_dir()
    if not folder.is_dir():
        raise typer.BadParameter(f"{folder} is not a folder")
    report = asyncio.run(
        bootstrap.run(target, [folder], show_progress=sys.stderr.isatty(), token=token)
    )
    typer.echo(report.summary())
    if report.failed:
        raise typer.Exit(1)


@app.command()
def token(
    agent_id: Annotated[str, typer.Option(help="the token's subject (sub)")],
    roles: Annotated[
        str, typer.Option(help="comma-separated: subscriber, emitter, curator")
    ] = "subscriber",
    owner_id: Annotated[
        str | None, typer.Option(help="the tenant (default: the default tenant)")
    ] = None,
    ttl: Annotated[
        int | None, typer.Option(help="seconds (default CAIRN_JWT__TOKEN_TTL_S)")
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Print a token signed with the configured key (or `cairn up`'s generated one), for the
    first curator or for scripts. Needs the key, not a running server."""
    from cairn.auth.local import mint_local
    from cairn.auth.tokens import TokenClaims
    from cairn.principal import Role

    settings = _settings(data_dir)
    try:
        wanted = {Role(name.strip()) for name in roles.split(",") if name.strip()}
        tenant = uuid.UUID(owner_id) if owner_id else None
        TokenClaims(sub=agent_id, owner_id=tenant or uuid.uuid4(), roles=list(wanted))
    except ValueError as error:
        raise typer.BadParameter(str(error).splitlines()[0]) from error
    with _refusing_bad_settings():
        minted, _ = mint_local(settings, agent_id, wanted, ttl or settings.jwt.token_ttl_s, tenant)
    if settings.auth != "jwt":
        typer.echo("note: CAIRN_AUTH is not jwt here; the server must run with it", err=True)
    typer.echo(minted)


@app.command("mcp")
def mcp_command(
    url: Annotated[str | None, typer.Option(help="Cairn URL (default $CAIRN_URL)")] = None,
    token: Annotated[
        str | None, typer.Option(help="a token for CAIRN_AUTH=jwt (default $CAIRN_TOKEN)")
    ] = None,
) -> None:
    """Serve Cairn's MCP tools over stdio (for MCP clients that start a command), acting
    on a running Cairn; logs go to stderr."""
    from cairn.mcp.server import serve_stdio

    _settings()  # logging to stderr: stdout carries the protocol
    target = url or os.environ.get("CAIRN_URL", "http://127.0.0.1:8081")
    asyncio.run(serve_stdio(target, token or os.environ.get("CAIRN_TOKEN")))


@app.command()
def embed(texts: Annotated[list[str], typer.Argument(help="texts to embed")]) -> None:
    """Print each text's 384-d embedding as one JSON array per line."""
    from cairn.embedding import OnnxEncoder, ensure_model

    settings = _settings()
    encoder = OnnxEncoder(ensure_model(settings.model_dir), threads=settings.embedding.threads)
    for vector in encoder.encode(texts):
        typer.echo(json.dumps([float(x) for x in vector]))


@app.command("build-model")
def build_model(data_dir: DataDir = None) -> None:
    """Build the ONNX MiniLM model from the packaged weights (once; a no-op afterwards)."""
    from cairn.embedding import ensure_model

    settings = _settings(data_dir)
    typer.echo(f"model ready in {ensure_model(settings.model_dir)}")


cli_client.register(app)

if __name__ == "__main__":
    app()
