"""Floor 3, tensor: :class:`~webdlpack.Tensor` (state, CPU access, ``__dlpack__``, copies and moves) and scopes."""
