"""Benchmarks (``make bench``): speed and cost figures measured on the emulators, written to bench/results.json."""
