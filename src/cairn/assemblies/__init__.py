"""The assembly log: one row per context assembly (``assemblies``), its retention, and
``GET /assemblies`` / ``GET /assemblies/stats``."""
