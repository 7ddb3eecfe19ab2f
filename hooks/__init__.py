"""Git hook entry points for gov (installed as the `hooks` package)."""
