"""Sweeps: the run ledger, reuse by recipe fingerprint, and launching rows."""
