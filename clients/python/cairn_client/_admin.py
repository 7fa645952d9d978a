"""Routes for operating Cairn: health, tokens, tenants, agents, webhooks, dead letters,
access control and secrets."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from cairn_client._core import Call, call, route
from cairn_client.models import (
    AclAction,
    AclEntry,
    Agent,
    AssemblyPage,
    AssemblyStats,
    AuditEntry,
    Coverage,
    DeadEvent,
    DeadLetter,
    DecryptedSecret,
    MintedToken,
    Ok,
    ReindexJob,
    Requeued,
    RevokeResult,
    Role,
    ScopeType,
    SecretInfo,
    Selector,
    Tenant,
    Webhook,
    Workers,
)

Id = UUID | str


def _given(**fields: Any) -> dict[str, Any]:
    """The JSON body of the arguments the caller gave (``None``: left to the server)."""
    return {key: value for key, value in fields.items() if value is not None}


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _grantee(
    action: AclAction, agent_id: str | None, owner_id: Id | None, **more: Any
) -> dict[str, Any]:
    owner = None if owner_id is None else str(owner_id)
    return _given(action=action, grantee_agent_id=agent_id, grantee_owner_id=owner, **more)


class AdminRoutes:
    @route
    def health(self) -> Call[dict[str, str]]:
        return call("health", dict[str, str])

    @route
    def ready(self) -> Call[dict[str, Any]]:
        """Readiness of PostgreSQL and NATS; raises ``Unavailable`` when one is down."""
        return call("ready", dict[str, Any])

    @route
    def workers(self) -> Call[Workers]:
        """Whether a worker consumes the event stream (pulling, busy, none)."""
        return call("workers", Workers)

    @route
    def metrics(self) -> Call[str]:
        """Prometheus text."""
        return call("metrics", str)

    @route
    def mint_token(
        self,
        agent_id: str,
        *,
        roles: Sequence[Role] | None = None,
        owner_id: Id | None = None,
        ttl_sec: int | None = None,
        tenant_name: str | None = None,
    ) -> Call[MintedToken]:
        owner = None if owner_id is None else str(owner_id)
        body = _given(
            agent_id=agent_id,
            roles=None if roles is None else list(roles),
            owner_id=owner,
            ttl_sec=ttl_sec,
            tenant_name=tenant_name,
        )
        return call("mint_token", MintedToken, body=body)

    @route
    def list_tenants(self) -> Call[list[Tenant]]:
        return call("list_tenants", list[Tenant])

    @route
    def get_tenant(self, tenant_id: Id) -> Call[Tenant]:
        return call("get_tenant", Tenant, path={"tenant_id": tenant_id})

    @route
    def ensure_tenant(self, tenant_id: Id, name: str) -> Call[Tenant]:
        return call("ensure_tenant", Tenant, path={"tenant_id": tenant_id}, body={"name": name})

    @route
    def rename_tenant(self, tenant_id: Id, name: str) -> Call[Tenant]:
        return call("rename_tenant", Tenant, path={"tenant_id": tenant_id}, body={"name": name})

    @route
    def list_agents(self) -> Call[list[Agent]]:
        return call("list_agents", list[Agent])

    @route
    def get_agent(self, agent_id: str) -> Call[Agent]:
        return call("get_agent", Agent, path={"agent_id": agent_id})

    @route
    def register_agent(self, agent_id: str, roles: Sequence[Role]) -> Call[Agent]:
        path, body = {"agent_id": agent_id}, {"roles": list(roles)}
        return call("register_agent", Agent, path=path, body=body)

    @route
    def delete_agent(self, agent_id: str) -> Call[Ok]:
        return call("delete_agent", Ok, path={"agent_id": agent_id})

    @route
    def register_webhook(
        self,
        agent_id: str,
        url: str,
        *,
        selector: Selector | None = None,
        secret: str | None = None,
    ) -> Call[Webhook]:
        chosen = None if selector is None else selector.model_dump(mode="json", exclude_none=True)
        body = _given(url=url, selector=chosen, secret=secret)
        return call("register_webhook", Webhook, path={"agent_id": agent_id}, body=body)

    @route
    def list_webhooks(self, agent_id: str) -> Call[list[Webhook]]:
        return call("list_webhooks", list[Webhook], path={"agent_id": agent_id})

    @route
    def delete_webhook(self, agent_id: str, webhook_id: Id) -> Call[Ok]:
        path = {"agent_id": agent_id, "webhook_id": webhook_id}
        return call("delete_webhook", Ok, path=path)

    @route
    def set_agent_secret(self, agent_id: str, secret: str) -> Call[Ok]:
        path, body = {"agent_id": agent_id}, {"secret": secret}
        return call("set_agent_secret", Ok, path=path, body=body)

    @route
    def list_dead_letters(self, *, limit: int | None = None) -> Call[list[DeadLetter]]:
        return call("list_dead_letters", list[DeadLetter], params={"limit": limit})

    @route
    def delete_dead_letter(self, entry_id: Id) -> Call[Ok]:
        return call("delete_dead_letter", Ok, path={"entry_id": entry_id})

    @route
    def retry_dead_letter(self, entry_id: Id) -> Call[Requeued]:
        return call("retry_dead_letter", Requeued, path={"entry_id": entry_id})

    @route
    def list_dead_events(self, *, limit: int | None = None) -> Call[list[DeadEvent]]:
        return call("list_dead_events", list[DeadEvent], params={"limit": limit})

    @route
    def delete_dead_event(self, entry_id: Id) -> Call[Ok]:
        return call("delete_dead_event", Ok, path={"entry_id": entry_id})

    @route
    def coverage(self) -> Call[Coverage]:
        """Processing coverage of the caller's tenant (curators)."""
        return call("coverage", Coverage)

    @route
    def list_reindex_jobs(self, *, limit: int | None = None) -> Call[list[ReindexJob]]:
        """The tenant's reindex jobs, newest first, with their progress (curators)."""
        return call("list_reindex_jobs", list[ReindexJob], params={"limit": limit})

    @route
    def list_assemblies(
        self,
        *,
        agent_id: str | None = None,
        session: str | None = None,
        since: datetime | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Call[AssemblyPage]:
        """The assembly log, newest first; pass a page's ``next_cursor`` for the next."""
        params = {"agent_id": agent_id, "session": session, "since": _iso(since), "limit": limit}
        return call("list_assemblies", AssemblyPage, params=params | {"cursor": cursor})

    @route
    def assembly_stats(self, *, since: datetime | None = None) -> Call[AssemblyStats]:
        """Per agent: count, p50/p99 milliseconds, mean tokens and budget use."""
        return call("assembly_stats", AssemblyStats, params={"since": _iso(since)})

    @route
    def list_acl(
        self, *, breadcrumb_id: Id | None = None, limit: int | None = None
    ) -> Call[list[AclEntry]]:
        params = {"breadcrumb_id": breadcrumb_id, "limit": limit}
        return call("list_acl", list[AclEntry], params=params)

    @route
    def grant_acl(
        self,
        breadcrumb_id: Id,
        action: AclAction,
        *,
        agent_id: str | None = None,
        owner_id: Id | None = None,
    ) -> Call[AclEntry]:
        """Grant ``action`` on a record to an agent of this tenant, to another tenant
        (``owner_id``), or to one agent of another tenant (both)."""
        body = _grantee(action, agent_id, owner_id, breadcrumb_id=str(breadcrumb_id))
        return call("grant_acl", AclEntry, body=body)

    @route
    def revoke_acl(
        self,
        breadcrumb_id: Id,
        action: AclAction,
        *,
        agent_id: str | None = None,
        owner_id: Id | None = None,
    ) -> Call[RevokeResult]:
        body = _grantee(action, agent_id, owner_id, breadcrumb_id=str(breadcrumb_id))
        return call("revoke_acl", RevokeResult, body=body)

    @route
    def delete_acl(self, acl_id: Id) -> Call[dict[str, bool]]:
        return call("delete_acl", dict[str, bool], path={"acl_id": acl_id})

    @route
    def list_record_acl(
        self, breadcrumb_id: Id, *, limit: int | None = None
    ) -> Call[list[AclEntry]]:
        path = {"breadcrumb_id": breadcrumb_id}
        return call("list_record_acl", list[AclEntry], path=path, params={"limit": limit})

    @route
    def grant_record_acl(
        self,
        breadcrumb_id: Id,
        action: AclAction,
        *,
        agent_id: str | None = None,
        owner_id: Id | None = None,
    ) -> Call[AclEntry]:
        path, body = {"breadcrumb_id": breadcrumb_id}, _grantee(action, agent_id, owner_id)
        return call("grant_record_acl", AclEntry, path=path, body=body)

    @route
    def delete_record_acl(self, breadcrumb_id: Id, acl_id: Id) -> Call[dict[str, bool]]:
        path = {"breadcrumb_id": breadcrumb_id, "acl_id": acl_id}
        return call("delete_record_acl", dict[str, bool], path=path)

    @route
    def create_secret(
        self,
        name: str,
        value: str,
        *,
        scope_type: ScopeType | None = None,
        scope_id: str | None = None,
        description: str | None = None,
        readers: Sequence[str] | None = None,
    ) -> Call[SecretInfo]:
        body = _given(
            name=name,
            value=value,
            scope_type=scope_type,
            scope_id=scope_id,
            description=description,
            readers=None if readers is None else list(readers),
        )
        return call("create_secret", SecretInfo, body=body)

    @route
    def list_secrets(
        self, *, scope_type: ScopeType | None = None, scope_id: str | None = None
    ) -> Call[list[SecretInfo]]:
        params = {"scope_type": scope_type, "scope_id": scope_id}
        return call("list_secrets", list[SecretInfo], params=params)

    @route
    def get_secret(self, secret_id: Id) -> Call[SecretInfo]:
        return call("get_secret", SecretInfo, path={"secret_id": secret_id})

    @route
    def update_secret(
        self,
        secret_id: Id,
        *,
        value: str | None = None,
        description: str | None = None,
        readers: Sequence[str] | None = None,
    ) -> Call[SecretInfo]:
        listed = None if readers is None else list(readers)
        body = _given(value=value, description=description, readers=listed)
        return call("update_secret", SecretInfo, path={"secret_id": secret_id}, body=body)

    @route
    def delete_secret(self, secret_id: Id) -> Call[dict[str, bool]]:
        return call("delete_secret", dict[str, bool], path={"secret_id": secret_id})

    @route
    def decrypt_secret(self, secret_id: Id, *, reason: str | None = None) -> Call[DecryptedSecret]:
        path, body = {"secret_id": secret_id}, {"reason": reason}
        return call("decrypt_secret", DecryptedSecret, path=path, body=body)

    @route
    def secret_audit(self, secret_id: Id, *, limit: int | None = None) -> Call[list[AuditEntry]]:
        path = {"secret_id": secret_id}
        return call("secret_audit", list[AuditEntry], path=path, params={"limit": limit})
