"""One module per page; each exposes ``render()``."""
