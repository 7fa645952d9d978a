"""Secrets: envelope-encrypted values with an audit trail (RCRT's ``/secrets``)."""
