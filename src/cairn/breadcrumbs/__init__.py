"""Breadcrumbs: the records agents post, with their history, search and tag operations."""
