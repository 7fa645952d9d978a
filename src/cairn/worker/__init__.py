"""The worker process: JetStream consumer, edge builder and context builder."""
