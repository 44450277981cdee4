"""The forward pass's context (attention metadata per layer), set by the model runner."""
_context = None


def get_forward_context():
    if _context is None:
        raise RuntimeError("no forward context: not inside a model forward pass")
    return _context
