"""The BREADCRUMBS stream, declared where it is used: created or brought up to date."""

from __future__ import annotations

import logging

from nats.js import JetStreamContext
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import NotFoundError

from cairn.config import EventSettings
from cairn.events.payloads import STREAM_NAME, STREAM_SUBJECTS

log = logging.getLogger(__name__)


def stream_config(settings: EventSettings) -> StreamConfig:
    return StreamConfig(
        name=STREAM_NAME,
        subjects=[STREAM_SUBJECTS],
        storage=StorageType.FILE,
        max_age=settings.stream_max_age_s,
        duplicate_window=settings.duplicate_window_s,
    )


async def ensure_stream(js: JetStreamContext, settings: EventSettings) -> None:
    config = stream_config(settings)
    try:
        await js.stream_info(STREAM_NAME)
    except NotFoundError:
        await js.add_stream(config)
        log.info("created JetStream stream %s", STREAM_NAME)
        return
    await js.update_stream(config)
