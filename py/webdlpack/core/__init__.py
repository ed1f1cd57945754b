"""Floor 0, core: DLPack structs, dtypes, devices, errors, layout, host memory and checked views; no tensor, no JS."""
