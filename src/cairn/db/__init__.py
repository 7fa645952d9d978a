"""Database access: table definitions, engine and session handling."""
