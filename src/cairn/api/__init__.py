"""The HTTP service's composition root."""
