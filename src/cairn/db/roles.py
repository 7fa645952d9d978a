"""The application's database role: who ``DATABASE_URL`` logs in as, created by migration.

With ``CAIRN_ADMIN_DATABASE_URL`` set (two URLs: the owner migrates, the application role
serves), the application role is the user of ``DATABASE_URL`` and its password is taken
from there, so an operator writes each credential once. With a single URL (a development
setup where one role does everything) the role ``cairn_app`` is still created, without a
password, and row-level security is only enforced once the application connects as it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy.engine import make_url

from cairn.config import Settings

DEFAULT_APP_ROLE = "cairn_app"
_ROLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


@dataclass(frozen=True, slots=True)
class AppRole:
    name: str
    password: str | None = None

    def __post_init__(self) -> None:
        if not _ROLE_NAME.fullmatch(self.name):
            raise ValueError(f"application role {self.name!r}: use lowercase a-z, 0-9 and _")


def app_role(settings: Settings) -> AppRole:
    if settings.admin_database_url and settings.database_url:
        app = make_url(settings.database_url)
        admin = make_url(settings.admin_database_url)
        if app.username and app.username != admin.username:
            return AppRole(app.username, app.password)
    return AppRole(DEFAULT_APP_ROLE)


def with_role(url: str, role: AppRole) -> str:
    """``url`` logging in as ``role`` instead (the embedded server trusts local logins)."""
    return (
        make_url(url)
        .set(username=role.name, password=role.password)
        .render_as_string(hide_password=False)
    )
