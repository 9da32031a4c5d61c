"""Benchmarks that print figures against a baseline measured in the same run.

``python -m bench`` runs them all and prints one table (see ``bench/run.py``).
"""
