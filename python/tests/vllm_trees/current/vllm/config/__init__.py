"""The engine configuration in force (none outside a running engine)."""
_current = None


def get_current_vllm_config():
    if _current is None:
        raise RuntimeError("no vLLM config is set")
    return _current
