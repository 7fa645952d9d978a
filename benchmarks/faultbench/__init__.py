"""The fault-injection suite behind ``benchmarks/faults.py`` (``make faults``)."""
