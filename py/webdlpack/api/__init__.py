"""Floor 4, api: the public functions built on Tensor and the exchange (create, from_dlpack, asarray, to_js...)."""
