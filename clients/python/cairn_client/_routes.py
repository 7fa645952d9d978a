"""Every route of Cairn's HTTP API, by the client method that calls it.

The one place a path is spelled: request building looks routes up here, and a test checks
that every (method, path) of a running server's ``/openapi.json`` is in this table.
"""

from __future__ import annotations

ROUTES: dict[str, tuple[str, str]] = {
    # operations
    "health": ("GET", "/health"),
    "ready": ("GET", "/ready"),
    "metrics": ("GET", "/metrics"),
    "workers": ("GET", "/workers"),
    "mint_token": ("POST", "/auth/token"),
    "list_tenants": ("GET", "/tenants"),
    "get_tenant": ("GET", "/tenants/{tenant_id}"),
    "ensure_tenant": ("POST", "/tenants/{tenant_id}"),
    "rename_tenant": ("PUT", "/tenants/{tenant_id}"),
    "list_agents": ("GET", "/agents"),
    "get_agent": ("GET", "/agents/{agent_id}"),
    "register_agent": ("POST", "/agents/{agent_id}"),
    "delete_agent": ("DELETE", "/agents/{agent_id}"),
    # records
    "create_breadcrumb": ("POST", "/breadcrumbs"),
    "create_breadcrumbs": ("POST", "/breadcrumbs/batch"),
    "list_breadcrumbs": ("GET", "/breadcrumbs"),
    "search": ("GET", "/breadcrumbs/search"),
    "render": ("POST", "/breadcrumbs/render"),
    "get_breadcrumb": ("GET", "/breadcrumbs/{breadcrumb_id}"),
    "update_breadcrumb": ("PATCH", "/breadcrumbs/{breadcrumb_id}"),
    "delete_breadcrumb": ("DELETE", "/breadcrumbs/{breadcrumb_id}"),
    "get_breadcrumb_full": ("GET", "/breadcrumbs/{breadcrumb_id}/full"),
    "history": ("GET", "/breadcrumbs/{breadcrumb_id}/history"),
    "record_edges": ("GET", "/breadcrumbs/{breadcrumb_id}/edges"),
    "record_processing": ("GET", "/breadcrumbs/{breadcrumb_id}/processing"),
    "add_tags": ("POST", "/breadcrumbs/{breadcrumb_id}/tags/add"),
    "remove_tags": ("POST", "/breadcrumbs/{breadcrumb_id}/tags/remove"),
    "merge_context": ("POST", "/breadcrumbs/{breadcrumb_id}/context/merge"),
    "approve": ("POST", "/breadcrumbs/{breadcrumb_id}/approve"),
    "reject": ("POST", "/breadcrumbs/{breadcrumb_id}/reject"),
    "events": ("GET", "/events/stream"),
    # contexts
    "latest_context": ("GET", "/contexts/{consumer_id}"),
    "context_debug": ("GET", "/contexts/{agent_id}/debug"),
    "assemble": ("POST", "/contexts/assemble"),
    "query_context": ("POST", "/contexts/query"),
    "graph": ("GET", "/graph"),
    "list_assemblies": ("GET", "/assemblies"),
    "assembly_stats": ("GET", "/assemblies/stats"),
    # debug paths
    "list_paths": ("GET", "/paths"),
    "active_path": ("GET", "/paths/active"),
    "get_path": ("GET", "/paths/{path_id}"),
    "start_path": ("POST", "/paths"),
    "resolve_path": ("POST", "/paths/{path_id}/resolve"),
    "abandon_path": ("POST", "/paths/{path_id}/abandon"),
    # webhooks and dead letters
    "register_webhook": ("POST", "/agents/{agent_id}/webhooks"),
    "list_webhooks": ("GET", "/agents/{agent_id}/webhooks"),
    "delete_webhook": ("DELETE", "/agents/{agent_id}/webhooks/{webhook_id}"),
    "set_agent_secret": ("POST", "/agents/{agent_id}/secret"),
    "list_dead_letters": ("GET", "/dlq"),
    "delete_dead_letter": ("DELETE", "/dlq/{entry_id}"),
    "retry_dead_letter": ("POST", "/dlq/{entry_id}/retry"),
    "list_dead_events": ("GET", "/worker/dead"),
    "delete_dead_event": ("DELETE", "/worker/dead/{entry_id}"),
    "coverage": ("GET", "/coverage"),
    "list_reindex_jobs": ("GET", "/reindex"),
    # access control
    "list_acl": ("GET", "/acl"),
    "grant_acl": ("POST", "/acl/grant"),
    "revoke_acl": ("POST", "/acl/revoke"),
    "delete_acl": ("DELETE", "/acl/{acl_id}"),
    "list_record_acl": ("GET", "/breadcrumbs/{breadcrumb_id}/acl"),
    "grant_record_acl": ("POST", "/breadcrumbs/{breadcrumb_id}/acl"),
    "delete_record_acl": ("DELETE", "/breadcrumbs/{breadcrumb_id}/acl/{acl_id}"),
    # secrets
    "create_secret": ("POST", "/secrets"),
    "list_secrets": ("GET", "/secrets"),
    "get_secret": ("GET", "/secrets/{secret_id}"),
    "update_secret": ("PUT", "/secrets/{secret_id}"),
    "delete_secret": ("DELETE", "/secrets/{secret_id}"),
    "decrypt_secret": ("POST", "/secrets/{secret_id}/decrypt"),
    "secret_audit": ("GET", "/secrets/{secret_id}/audit"),
}
