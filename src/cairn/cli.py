"""The ``cairn`` command: up, serve, migrate, bootstrap, embed, build-model."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from cairn.config import Settings, get_settings
from cairn.logging import configure

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)

DataDir = Annotated[Path | None, typer.Option(help="data directory (default ./.cairn)")]
Host = Annotated[str | None, typer.Option(help="address to bind")]
Port = Annotated[int | None, typer.Option(help="port to bind")]


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
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how it is meant to stop
        run_up(settings, [bootstrap.default_bootstrap_dir()])


@app.command()
def serve(host: Host = None, port: Port = None) -> None:
    """Serve the API against DATABASE_URL (and NATS_URL); run as many as you like."""
    import uvicorn

    from cairn.api.app import create_app

    settings = _settings(host=host, port=port)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_config=None)


@app.command()
def worker() -> None:
    """Build edges and assemble contexts from the event stream; run as many as you like."""
    import signal

    from cairn.worker.app import run_worker

    settings = _settings()

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await run_worker(settings, stop)

    asyncio.run(main())


@app.command()
def migrate() -> None:
    """Apply the database migrations to DATABASE_URL."""
    from cairn.db.engine import create_engine
    from cairn.db.migrate import upgrade

    settings = _settings()
    if not settings.database_url:
        raise typer.BadParameter("set DATABASE_URL")

    async def run() -> None:
        engine = create_engine(settings.database_url or "", settings)
        try:
            await upgrade(engine)
        finally:
            await engine.dispose()

    asyncio.run(run())
    typer.echo("migrations applied")


@app.command("bootstrap")
def bootstrap_command(
    directory: Annotated[Path | None, typer.Argument(help="folder of breadcrumb JSON")] = None,
    url: Annotated[str | None, typer.Option(help="Cairn URL (default $CAIRN_URL)")] = None,
) -> None:
    """Load a folder of breadcrumb JSON files (Cairn's or RCRT's layout); idempotent."""
    from cairn import bootstrap

    _settings()
    target = url or os.environ.get("CAIRN_URL", "http://127.0.0.1:8081")
    folder = directory or bootstrap.default_bootstrap_dir()
    if not folder.is_dir():
        raise typer.BadParameter(f"{folder} is not a folder")
    report = asyncio.run(bootstrap.run(target, [folder], show_progress=sys.stderr.isatty()))
    typer.echo(report.summary())
    if report.failed:
        raise typer.Exit(1)


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


if __name__ == "__main__":
    app()
