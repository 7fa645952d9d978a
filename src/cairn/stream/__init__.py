"""Server-Sent Events: live and replayed breadcrumb events for subscribers."""
