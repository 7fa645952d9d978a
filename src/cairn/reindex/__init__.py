"""Reindex: recompute records' derived fields (``llm_text``, embedding, keywords, domain
labels, edges) in resumable jobs — ``cairn reindex`` and, after a schema's hints change, the
API's background task."""
