"""gov: changelog-centric merge governance for performance-benchmark repositories."""

__version__ = "0.1.0"
