"""Demo data: scripted conversations replayed through the real trigger (``make demo``)."""
