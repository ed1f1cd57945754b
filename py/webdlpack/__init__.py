"""webdlpack: DLPack tensor exchange for Python in the browser and on CPython."""

__version__ = "0.1.0"
