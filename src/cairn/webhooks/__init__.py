"""Webhooks: per-agent registrations and secrets, signed delivery driven by JetStream, and
the dead-letter queue of deliveries that kept failing."""
