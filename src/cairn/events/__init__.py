"""Change events: subjects, payloads and the transactional outbox."""
