"""Cairn performance benchmarks (issue 6): corpus, loader, Cairn and RCRT-style runs, reports."""
