"""Authentication (tokens, keys, per-caller limits) and the tenant and agent admin routes."""
