"""Floor 1, bridge: the one crossing into JavaScript (:mod:`.js`) and WebGPU memory reached through it (:mod:`.gpu`)."""
